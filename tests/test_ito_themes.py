"""Themes as reference §6 documents them, headless (`uji run`): a theme file in the config's
`lua/uji/themes/`, built with `require("uji.themes.default"){...}`, listed by
`uji.modules("uji.themes")` beside the seven uji ships; unknown keys are errors; a theme
that fails keeps the one in use."""

from __future__ import annotations

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text

pytestmark = pytest.mark.timeout(120)


def test_a_config_theme_is_built_listed_and_used(home: Home) -> None:
    themes = home.config / "lua" / "uji" / "themes"
    themes.mkdir(parents=True)
    (themes / "mine.lua").write_text(
        'return require("uji.themes.default"){\n'
        '  name = "mine",\n'
        '  colors = { accent = "#123456" },\n'
        "  styles = function(c) return { heading1 = { foreground = c.accent } } end,\n"
        '  text = { working = "Busy (%ds)" },\n'
        "}\n"
    )
    (themes / "broken.lua").write_text(
        'return require("uji.themes.default"){ name = "broken", colour = "red" }\n'
    )
    home.init(
        """
        local names = {}
        for _, m in ipairs(uji.modules("uji.themes")) do names[#names + 1] = m:match("[^.]+$") end
        uji.notify("themes: " .. table.concat(names, ","))
        uji.ui.configure({ theme = "mine" })
        local ito = require("ito")
        local t = ito.theme()
        uji.notify("using " .. uji.ui.theme() .. " accent " .. t.colors.accent .. " text " .. t.colors.text
          .. " h1 " .. t.styles.heading1.foreground .. " working " .. t.text.working .. " yes " .. t.text.yes)
        local ok, err = pcall(uji.ui.configure, { theme = "broken" })
        uji.notify("broken: " .. tostring(err))
        uji.notify("still " .. uji.ui.theme())
        ok, err = pcall(uji.ui.save_theme, "nope")
        uji.notify("save nope: " .. tostring(ok))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "themes: broken,default,dracula,gruvbox,light,mine,nord,solarized,tokyonight" in run.notices
    assert "using mine accent #123456 text #d4d4d4 h1 #123456 working Busy (%ds) yes Yes" in run.notices
    assert any(n.startswith("broken:") and "unknown key `colour`" in n for n in run.notices)
    assert "still mine" in run.notices
    assert "save nope: false" in run.notices


def test_a_saved_theme_is_in_use_from_the_next_start_before_the_config_touches_uji_ui(home: Home) -> None:
    assert home.fake is not None
    show = 'local t = require("ito").theme()\nuji.notify("in use: " .. tostring(t.name))\n'
    home.init(show)
    home.fake.script(text("ok"))
    first = home.run("hi")
    assert first.rc == 0, first.stderr
    assert "in use: default" in first.notices  # nothing saved yet
    home.init('uji.ui.save_theme("dracula")\n')
    home.fake.script(text("ok"))
    assert home.run("hi").rc == 0
    home.init(show + 'uji.notify("uji.ui.theme: " .. uji.ui.theme())\n')
    home.fake.script(text("ok"))
    later = home.run("hi")
    assert later.rc == 0, later.stderr
    assert "in use: dracula" in later.notices and "uji.ui.theme: dracula" in later.notices
