"""The telescope plugin (reference §5: Ctrl+P find, Ctrl+R history, Ctrl+F live grep, the
editor from UJI_EDITOR/VISUAL/EDITOR) and uji.ui.pick's `preview` and `on_query` (§2), in
the terminal UI: what the picker shows, its preview, and what the editor was run with."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_tui_support import SIZE, make_app, ready, send, shows, type_text, until

pytestmark = pytest.mark.timeout(120)


def _setup(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "a.py").write_text("import os\n\n\ndef alpha():\n    return 1\n")
    (work / "notes.txt").write_text("beta notes\nsecond line\n")
    record = tmp_path / "editor.txt"
    editor = tmp_path / "editor.sh"
    editor.write_text(f'#!/bin/sh\necho "$@" >> {record}\n')
    editor.chmod(0o755)
    return editor


async def test_live_grep_previews_the_line_and_opens_the_editor_there(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    editor = _setup(tmp_path)
    app = make_app(tmp_path, fake, f'require("uji.plugins.telescope").setup{{ editor = "{editor}" }}\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+f")
        await shows(pilot, "Search (live grep)")
        await type_text(pilot, "alpha")
        screen = await shows(pilot, "src/a.py:4:def alpha():")
        # The default preview of a "path:line:" item: the file around that line.
        screen = await shows(pilot, "    4> def alpha():")
        assert "    5      return 1" in screen and "notes.txt" not in screen
        await pilot.press("enter")
        record = tmp_path / "editor.txt"
        await until(pilot, record.exists, what="the editor to run")
        assert record.read_text().split() == ["+4", str(tmp_path / "work" / "src" / "a.py")]


async def test_find_previews_files_and_history_refills_the_composer(tmp_path: Path, fake: FakeOpenAI) -> None:
    editor = _setup(tmp_path)
    fake.script(text("hi"))
    app = make_app(tmp_path, fake, f'require("uji.plugins.telescope").setup{{ editor = "{editor}" }}\n')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+p")
        screen = await shows(pilot, "Find a file")
        assert "src/a.py" in screen and "notes.txt" in screen
        await type_text(pilot, "notes")
        await shows(pilot, "beta notes")  # the preview: the file's first lines
        await pilot.press("enter")
        record = tmp_path / "editor.txt"
        await until(pilot, record.exists, what="the editor to run")
        assert record.read_text().split() == [str(tmp_path / "work" / "notes.txt")]

        await send(pilot, "remember this message")
        await shows(pilot, "hi")
        await pilot.press("ctrl+r")
        await shows(pilot, "Past messages")
        await pilot.press("enter")
        await until(pilot, lambda: app.composer.text == "remember this message", what="the composer refilled")


async def test_pick_on_query_and_preview_from_a_config(tmp_path: Path, fake: FakeOpenAI) -> None:
    """uji.ui.pick's documented form: on_query(query, show) makes the list live (here it
    answers later through `show`); preview(item) gives the highlighted item's lines."""
    lua = """
    uji.command.add("colours", function()
      local got = uji.ui.pick({
        title = "Colours",
        items = { "red" },
        preview = function(c) return { "PREVIEW OF " .. c:upper() } end,
        on_query = function(query, show)
          uji.defer(0.01, function() show({ query .. "-one", query .. "-two" }) end)
        end,
      })
      uji.notify("picked " .. tostring(got))
    end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/colours")
        await shows(pilot, "PREVIEW OF RED")
        await type_text(pilot, "blue")
        await shows(pilot, "blue-two")
        await pilot.press("down")
        await shows(pilot, "PREVIEW OF BLUE-TWO")
        await pilot.press("enter")
        await shows(pilot, "picked blue-two")
