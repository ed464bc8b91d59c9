"""The replaceable views of reference §6 that draw parts of the screen rather than whole
messages (the transcript's are in test_ito_tui.py): a config replaces each `uji.ui.<View>`
and the real screen shows the replacement; one that raises falls back to uji's drawing and
the diagnostics log names it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.fakes.base import drip_step
from tests.fakes.openai_server import FakeOpenAI, _render, chunk, text, tool_call
from tests.test_tui_support import SIZE, idle, make_app, ready, screen_text, send, shows, until

pytestmark = pytest.mark.timeout(120)

ANSWER = """# Big title

A plain paragraph with **bold** words.

```python
print("hi")
```

$$
E = mc^2
$$

| name | size |
|------|------|
| a.py | 10 |

---

- a list item stays as uji draws it
"""

MARKDOWN_VIEWS = """
local ito = require("ito")
uji.ui.Heading = function(p) return ito.Text("H" .. p.level .. "<" .. p.text .. ">") end
uji.ui.CodeBlock = function(p) return ito.Text("CODE[" .. p.language .. "] " .. p.text:gsub("\\n$", "")) end
uji.ui.MathBlock = function(p) return ito.Text("MATH{" .. p.text .. "}") end
uji.ui.TableRow = function(p)
  return ito.Text((p.header and "HEAD" or "ROW") .. ":" .. table.concat(p.cells, "|") .. ":" .. p.widths[1])
end
uji.ui.Rule = function(p) return ito.Text(("="):rep(5) .. " RULE") end
uji.ui.Paragraph = function(p) error("broken paragraph") end
local base = uji.ui.Partial
uji.ui.Partial = function(p) return ito.VStack({ ito.Text("STREAMING " .. #p.text), base(p) }) end
"""


async def test_an_answers_markdown_blocks_and_the_streamed_answer_draw_with_their_views(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Heading {level, text}, CodeBlock {language, text}, MathBlock {text}, TableRow
    {cells, header, widths}, Rule, Paragraph (raising: drawn as uji draws it, logged);
    Partial while the answer streams (the default can be wrapped)."""
    held = _render(chunk({"role": "assistant", "content": ""})) + _render(chunk({"content": "so **far**"}))
    fake.script(drip_step(3600, None, held), text(ANSWER))  # the first answer streams until Esc
    app = make_app(tmp_path, fake, MARKDOWN_VIEWS)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        screen = await shows(pilot, "STREAMING 10")
        assert "so far" in screen  # the default Partial: the markdown drawn as uji draws it
        await pilot.press("escape")
        await idle(pilot)
        await send(pilot, "second")
        await idle(pilot)
        screen = await shows(pilot, "H1<Big title>")
        assert 'CODE[python] print("hi")' in screen
        assert "MATH{E = mc^2}" in screen
        assert "HEAD:name|size:4" in screen and "ROW:a.py|10:4" in screen
        assert "===== RULE" in screen
        assert "A plain paragraph with bold words." in screen  # the failing Paragraph: uji's
        assert "• a list item stays as uji draws it" in screen
        assert "STREAMING" not in screen  # a finished answer is drawn by its blocks
        log = (tmp_path / "data" / "diagnostics.log").read_text()
        assert "uji.ui.Paragraph failed" in log and "broken paragraph" in log


TOOL_VIEWS = """
local ito = require("ito")
uji.tool.policy({ run_command = { default = "allow" }, write_file = { default = "allow" } })
uji.ui.Running = function(p)
  return ito.Text("RUNNING " .. p.name .. " [" .. p.progress:gsub("\\n", "/") .. "]")
end
uji.ui.configure({ theme = require("uji.themes.default"){ name = "busy", views = {
  Activity = function(p) return ito.Text("BUSY " .. p.text .. " hint=" .. p.hint) end,
} } })
uji.ui.Diff = function(p) return ito.Text("DIFF of " .. (p.path or "?") .. ": " .. #p.text .. " chars") end
"""


async def test_a_running_call_its_diff_and_the_activity_row_draw_with_their_views(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    """Running {name, text, progress} while the call runs, Activity {text, hint, ...}
    while the turn works (given by a theme's `views`), Diff {text, path, name} under a
    result."""
    fake.script(
        tool_call("run_command", {"command": "sh wait.sh"}),
        tool_call("write_file", {"path": "new.txt", "content": "one\ntwo\n"}, id="call_2"),
        text("done"),
    )
    app = make_app(tmp_path, fake, TOOL_VIEWS)
    work = tmp_path / "work"
    (work / "wait.sh").write_text(
        "echo step-one\ni=0; while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n"
    )
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "work")
        await shows(pilot, "RUNNING run_command [step-one]")
        await shows(pilot, "BUSY Working (")
        assert "hint=Esc to interrupt" in screen_text(app)
        (work / "go").touch()
        await idle(pilot)
        await shows(pilot, "DIFF of new.txt: 9 chars")
        # The activity row goes at the ticker's next tick after the turn ends.
        await until(
            pilot,
            lambda: "RUNNING" not in screen_text(app) and "BUSY" not in screen_text(app),
            what="the running call and the activity row to go",
        )
        assert (work / "new.txt").read_text() == "one\ntwo\n"


async def test_the_flash_the_jump_label_and_a_compaction_draw_with_their_views(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Flash {text} ("copied N lines"), Jump {count, text} under a transcript read further
    up (raising for one entry: uji's label, logged), Compaction {text, summary}."""
    from textual import events
    from textual.selection import Selection

    from uji.tui.transcript import EntryView

    monkeypatch.setattr("uji.tui.ticker.FLASH_SECONDS", math.inf)  # the flash stays while the test reads it
    monkeypatch.setenv("PATH", "/nonexistent")  # no clipboard program: copied through the terminal
    fake.script(*[text(f"answer {i}") for i in range(3)])
    lua = """
    local ito = require("ito")
    uji.ui.Flash = function(p) return ito.Text("FLASH<" .. p.text .. ">") end
    uji.ui.Jump = function(p)
      if p.count == 1 then error("broken jump") end
      return ito.Text("JUMP " .. p.count .. ": " .. p.text)
    end
    uji.ui.Compaction = function(p) return ito.Text("COMPACTED: " .. p.summary) end
    uji.notify("first line\\nsecond line")
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, "second line")
        app.screen.selections = {app.query(EntryView).last(): Selection(None, None)}
        app.screen.post_message(events.TextSelected())
        await shows(pilot, "FLASH<copied 2 lines via the terminal>")
        for i in range(3):
            await send(pilot, f"question {i}")
            await shows(pilot, f"answer {i}")
            await idle(pilot)
        await send(pilot, "/compact")
        await shows(pilot, "COMPACTED: SUMMARY OF EARLIER WORK")
        for _ in range(4):
            await send(pilot, "/help")
        await until(
            pilot, lambda: app.transcript.max_scroll_y > 20, what="a transcript taller than the screen"
        )
        await pilot.press("pageup", "pageup")
        await until(pilot, lambda: not app.transcript._following(), what="the user to have scrolled up")
        await send(pilot, "!echo fresh-output")
        await shows(pilot, "↓ 1 new entry below · PageDown to read on")
        assert "uji.ui.Jump failed" in (tmp_path / "data" / "diagnostics.log").read_text()
        await send(pilot, "!echo more-output")
        await shows(pilot, "JUMP 2: ↓ 2 new entries below · PageDown to read on")


async def test_a_jobs_notice_draws_with_the_job_view(tmp_path: Path, fake: FakeOpenAI) -> None:
    """Job {id, command, status, text}: the jobs plugin's notice of a job that ended; a
    Job that raises leaves the notice as uji draws it, said and logged."""
    from tests.fakes.openai_server import FakeCall, tool_calls

    lua = """
    local ito = require("ito")
    require("uji.plugins.jobs").setup{}
    uji.tool.policy({ run_command = { default = "allow" } })
    uji.ui.Job = function(p)
      if p.id == 2 then error("broken job view") end
      return ito.Text("JOB#" .. p.id .. " <" .. p.command .. "> " .. p.status)
    end
    """
    fake.script(
        tool_calls(
            FakeCall("run_command", {"command": "touch one", "run_in_background": True}, "a"),
            FakeCall("run_command", {"command": "echo second", "run_in_background": True}, "b"),
        ),
        text("both started"),
    )
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "start two jobs")
        await idle(pilot)
        screen = await shows(pilot, "JOB#1 <touch one> finished, exit 0")
        screen = await shows(pilot, "Background job 2 (`echo second`) finished, exit 0.")
        assert "JOB#2" not in screen
        await until(pilot, lambda: "broken job view" in (tmp_path / "data" / "diagnostics.log").read_text())
