"""`uji export` through the real command, `/export` in the screen, and the ATIF output
checked against Harbor's own model when a Python 3.12 environment with `harbor` is in
.cache/harbor-venv (tests/harbor_check.py says how it is made)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.harbor_check import validate_trajectory
from tests.test_tui_support import SIZE, make_app, ready, send, shows, until

SECRET = "sk-test-0123456789abcdefghij"


def a_session(home: Home) -> str:
    """A session with a prompt, an edit (its diff), a failed call and an answer; the key
    of the provider sits in a file the model reads, so it must stay redacted."""
    (home.work / "a.txt").write_text("hello\nworld\n")
    (home.work / "key.txt").write_text(f"key={SECRET}\n")
    home.init("")
    home.fake.script(
        tool_call(
            "edit_file", {"path": "a.txt", "old_string": "hello", "new_string": "goodbye"}, id="call_e"
        ),
        tool_call("read_file", {"path": "key.txt"}, id="call_k"),
        tool_call("read_file", {"path": "missing.txt"}, id="call_m"),
        text("Changed **a.txt** <now>."),
    )
    run = home.run("change a.txt", env={"OPENAI_API_KEY": SECRET})
    assert run.rc == 0, run.stderr
    return run.session_id


def test_markdown_has_prompts_answers_calls_results_and_diffs(home: Home) -> None:
    session_id = a_session(home)
    out = home.uji("export", env={"OPENAI_API_KEY": SECRET}, check=True).stdout
    assert out.startswith("# change a.txt\n")
    assert f"- Session: `{session_id}`" in out
    assert "## User\n\nchange a.txt" in out
    assert "### Tool call: `edit_file` a.txt" in out
    assert '"new_string": "goodbye"' in out
    assert "-hello\n+goodbye" in out  # the diff
    assert "### Tool call: `read_file` missing.txt (failed)" in out
    assert "## uji\n\nChanged **a.txt** <now>." in out
    assert SECRET not in out and "[redacted" in out


def test_json_lines_are_the_saved_messages(home: Home) -> None:
    session_id = a_session(home)
    out = home.uji("export", "--id", session_id, "--format", "json", check=True).stdout
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["type"] == "session" and lines[0]["id"] == session_id
    saved = home.db_messages(session_id)
    assert [line["message"]["type"] for line in lines[1:]] == [m["type"] for m in saved]
    assert SECRET not in out


def test_html_is_one_page_without_scripts_and_escapes_what_it_shows(home: Home) -> None:
    a_session(home)
    target = home.work / "out.html"
    run = home.uji(
        "export", "--format", "html", "-o", str(target), env={"OPENAI_API_KEY": SECRET}, check=True
    )
    assert f"wrote {target}" in run.stderr and run.stdout == ""
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page.lower()
    assert not re.search(r'(src|href)="(https?:)?//', page)  # nothing fetched
    assert "Changed **a.txt** &lt;now&gt;." in page
    assert '<span class="add">+goodbye</span>' in page
    assert SECRET not in page


def test_atif_is_a_trajectory_harbor_accepts(home: Home) -> None:
    session_id = a_session(home)
    out = home.uji("export", "--format", "atif", env={"OPENAI_API_KEY": SECRET}, check=True).stdout
    doc = json.loads(out)
    assert doc["schema_version"].startswith("ATIF-v1.")
    assert doc["session_id"] == session_id and doc["agent"]["name"] == "uji"
    steps = doc["steps"]
    assert [s["step_id"] for s in steps] == list(range(1, len(steps) + 1))
    assert [s["source"] for s in steps] == ["user", "agent", "agent", "agent", "agent"]
    edit = steps[1]
    assert edit["tool_calls"][0] == {
        "tool_call_id": "call_e",
        "function_name": "edit_file",
        "arguments": {"path": "a.txt", "old_string": "hello", "new_string": "goodbye"},
    }
    assert edit["observation"]["results"][0]["source_call_id"] == "call_e"
    assert steps[-1]["message"] == "Changed **a.txt** <now>."
    assert doc["final_metrics"]["total_steps"] == len(steps)
    assert SECRET not in out
    validate_trajectory(out)


def test_no_session_is_a_clear_error(home: Home) -> None:
    home.init("")
    run = home.uji("export")
    assert run.rc == 1 and "no session in this directory" in run.stderr
    bad = home.uji("export", "--format", "pdf")
    assert bad.rc == 2 and "invalid choice: 'pdf'" in bad.stderr


async def test_export_in_the_screen_writes_the_file(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(text("the answer"))
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "a question")
        await shows(pilot, "the answer")
        await send(pilot, "/export html shared.html")
        await shows(pilot, "exported the session (html)")
        page = await until(pilot, lambda: (tmp_path / "work" / "shared.html").exists())
        assert page
        assert "the answer" in (tmp_path / "work" / "shared.html").read_text()
        await send(pilot, "/export")
        session_id = app.conversation.session_id
        assert session_id is not None
        await until(pilot, lambda: (tmp_path / "work" / f"uji-{session_id[:8]}.md").exists())
