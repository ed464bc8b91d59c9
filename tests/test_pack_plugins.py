"""A pack laid out as the original's docs describe (docs.md §1 "Config layout", §2
uji.pack): a git repository reached by file:// with `plugin/*.lua`, which run after the
config's own plugins, sorted by name, and `lua/`, which is on the require path."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.test_config_compat import git

pytestmark = pytest.mark.timeout(120)  # each runs uji; a loaded machine is slow


def pack_repo(root: Path) -> Path:
    repo = root / "src" / "tools-pack"
    (repo / "plugin").mkdir(parents=True)
    (repo / "lua" / "toolspack").mkdir(parents=True)
    (repo / "lua" / "toolspack" / "init.lua").write_text(
        "local M = {}\nfunction M.setup(opts)\n"
        "  uji.command.add('shout', function(args) uji.notify(args:upper() .. (opts.suffix or '')) end)\n"
        "end\nreturn M\n"
    )
    # Run in name order, after the config's own plugin files.
    (repo / "plugin" / "b_second.lua").write_text("ORDER[#ORDER + 1] = 'pack b'\n")
    (repo / "plugin" / "a_first.lua").write_text(
        "ORDER[#ORDER + 1] = 'pack a'\nrequire('toolspack').setup({ suffix = '!' })\n"
    )
    (repo / "plugin" / "notes.txt").write_text("not Lua: never run\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pack")
    return repo


def test_a_packs_plugin_files_run_after_the_configs_and_its_lua_is_required(home: Home) -> None:
    repo = pack_repo(home.root)
    home.init(
        f"""
        ORDER = {{ "init" }}
        uji.pack.add({{ "file://{repo}" }})
        uji.schedule(function() uji.notify("order: " .. table.concat(ORDER, ", ")) end)
        """
    )
    home.plugin("z_config.lua", "ORDER[#ORDER + 1] = 'config plugin'\n")
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "order: init, config plugin, pack a, pack b" in run.notices
    run = home.run("/shout hello")  # the command a pack's plugin added, from its lua/ module
    assert "HELLO!" in run.notices
    assert (home.data / "site" / "tools-pack" / "plugin" / "a_first.lua").exists()


def test_a_pack_whose_plugin_fails_is_a_notice_and_the_others_still_run(home: Home) -> None:
    repo = pack_repo(home.root)
    (repo / "plugin" / "a_first.lua").write_text("error('pack plugin broke')\n")
    git(repo, "commit", "-qam", "broken")
    home.init(f'ORDER = {{}}\nuji.pack.add({{ "file://{repo}" }})\n')
    home.plugin(
        "z_last.lua", "uji.schedule(function() uji.notify('ran: ' .. table.concat(ORDER, ',')) end)\n"
    )
    home.fake.script(text("ok"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert any("a_first.lua:1: pack plugin broke" in n for n in run.notices)
    assert "ran: pack b" in run.notices
