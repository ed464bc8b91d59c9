"""A project's `.mcp.json` is imported only once the user approved it for the project:
`uji run` never starts its servers unasked (a command that would leave a marker file
leaves none), `--trust-project` approves it, the approval is remembered per project and
file content, and a changed file is not used until approved again. In the terminal UI
the question comes behind the first frame and shows each server's command line."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import answerable, idle, make_app, ready, send, shows

SERVER = Path(__file__).with_name("mcp_server.py")
# The SDK's import alone takes seconds on a loaded machine.
WAIT = "uji.mcp.configure({ wait = 90 })\n"


def hostile(work: Path, marker: Path) -> Path:
    """A repository whose .mcp.json would leave `marker` if its server were started."""
    path = work / ".mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {marker}; sleep 30"]}}})
    )
    return path


def real_server(work: Path, log: Path, extra: dict[str, Any] | None = None) -> Path:
    path = work / ".mcp.json"
    servers = {"proj": {"command": sys.executable, "args": [str(SERVER), str(log)], **(extra or {})}}
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_uji_run_never_starts_an_unapproved_project_server(home: Home) -> None:
    marker = home.root / "marker"
    hostile(home.work, marker)
    home.init(WAIT)
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert not marker.exists()
    [notice] = [n for n in run.notices if "MCP servers" in n]
    assert "not approved for this project" in notice and "uji run --trust-project" in notice
    assert not [n for n in tool_schemas(home.fake.turn_requests[0].body) if n.startswith("evil__")]
    assert not (home.data / "trusted-projects.json").exists()  # nothing decided: `uji` will ask


def test_configure_project_false_does_not_even_read_the_file(home: Home) -> None:
    marker = home.root / "marker"
    hostile(home.work, marker)
    home.init("uji.mcp.configure({ project = false })")
    home.fake.script(text("ok"))
    run = home.run("go", "--trust-project", "--on-ask", "allow", check=True)
    assert not marker.exists()
    assert not [n for n in run.notices if "MCP" in n]


def test_trust_project_approves_then_remembers_until_the_file_changes(home: Home) -> None:
    log = home.root / "calls.jsonl"
    path = real_server(home.work, log)
    home.init(WAIT)
    home.fake.script(tool_call("proj__echo", {"text": "hi"}), text("ok"))
    run = home.run("go", "--trust-project", "--on-ask", "allow", check=True)
    assert any("approved for" in n and "--trust-project" in n for n in run.notices), run.notices
    assert "proj__echo" in tool_schemas(home.fake.turn_requests[0].body)
    assert [c["args"] for c in calls(log)] == [{"text": "hi"}]
    assert run.tool_results()[0]["content"] == "echo: hi"
    saved = json.loads((home.data / "trusted-projects.json").read_text())
    [(root, kinds)] = saved["projects"].items()
    assert root == str(home.work.resolve()) and kinds["mcp.json"]["allowed"] is True

    # Remembered: the next run uses it without the flag.
    home.fake.script(tool_call("proj__echo", {"text": "again"}), text("ok"))
    home.run("go", "--on-ask", "allow", check=True)
    assert [c["args"] for c in calls(log)] == [{"text": "hi"}, {"text": "again"}]

    # A changed file is not used until approved again (here: it would add a variable).
    real_server(home.work, log, {"env": {"X": "1"}})
    assert path.exists()
    home.fake.script(text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert "proj__echo" not in tool_schemas(home.fake.turn_requests[-1].body)
    assert any("not approved for this project" in n for n in run.notices)
    assert len(calls(log)) == 2


def test_a_server_of_the_users_config_wins_over_the_projects(home: Home) -> None:
    marker = home.root / "marker"
    hostile(home.work, marker)
    log = home.root / "calls.jsonl"
    home.init(
        WAIT + f"uji.mcp.add('evil', {{ command = {{ {json.dumps(sys.executable)}, "
        f"{json.dumps(str(SERVER))}, {json.dumps(str(log))} }}, wait = 90 }})"
    )
    home.fake.script(tool_call("evil__echo", {"text": "mine"}), text("ok"))
    run = home.run("go", "--trust-project", "--on-ask", "allow", check=True)
    assert not marker.exists()
    assert any("evil is also in your config; yours is used" in n for n in run.notices)
    assert [c["args"] for c in calls(log)] == [{"text": "mine"}]


def test_bad_entries_are_named_and_the_good_ones_kept(home: Home) -> None:
    (home.work / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "bad name!": {"command": "x"},
                    "nocmd": {"args": ["a"]},
                    "ws": {"type": "ws", "url": "ws://127.0.0.1:1/ws"},
                }
            }
        )
    )
    home.init("")
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    notes = "\n".join(run.notices)
    assert "server 'bad name!': the name must be" in notes
    assert "server 'nocmd': \"command\" must be a non-empty string" in notes
    assert "server 'ws': type \"ws\" is not supported (stdio, http, streamable-http or sse)" in notes
    (home.work / ".mcp.json").write_text("{not json")
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert any(n.startswith(f"{home.work.resolve()}/.mcp.json: not valid JSON") for n in run.notices)


def test_the_file_is_found_from_a_subdirectory_up_to_the_repository_root(home: Home) -> None:
    marker = home.root / "marker"
    (home.work / ".git").mkdir()
    hostile(home.work, marker)
    sub = home.work / "pkg" / "deep"
    sub.mkdir(parents=True)
    home.init(WAIT)
    home.fake.script(text("ok"))
    # From the subdirectory: the repository's file, the repository's approval.
    out = home.run("go", cwd=sub, check=True)
    assert any("not approved for this project" in n for n in out.notices), out.stdout
    assert not marker.exists()


# The terminal UI ----------------------------------------------------------------------


async def test_the_tui_asks_with_the_command_line_and_a_denial_is_remembered(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    marker = tmp_path / "marker"
    (tmp_path / "work").mkdir()
    hostile(tmp_path / "work", marker)
    app = make_app(tmp_path, fake, WAIT)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await answerable(pilot)
        screen = await shows(pilot, "Start this project's MCP servers?")
        assert f"evil: sh -c 'touch {marker}; sleep 30'" in screen.replace("\n", "")  # as written
        assert not marker.exists()
        await pilot.press("n")
        await shows(pilot, "denied; not asked again until it changes")
    assert not marker.exists()
    saved = json.loads((tmp_path / "data" / "trusted-projects.json").read_text())
    assert [k["allowed"] for k in saved["projects"].values() for k in k.values()] == [False]

    # Started again: not asked, nothing started.
    fake.script(text("ok"))
    app = make_app(tmp_path, fake, WAIT)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await send(pilot, "hi")
        await idle(pilot)
        from uji.tui.approval import ApprovalPanel

        assert not app.query(ApprovalPanel)
    assert not marker.exists()
    assert "evil__" not in json.dumps(fake.turn_requests[-1].body.get("tools", []))


async def test_the_tui_starts_an_approved_server_and_offers_its_tool(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    log = tmp_path / "calls.jsonl"
    (tmp_path / "work").mkdir()
    real_server(tmp_path / "work", log)
    app = make_app(tmp_path, fake, WAIT + "uji.tool.policy({ proj__echo = { default = 'allow' } })")
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await answerable(pilot)
        screen = await shows(pilot, "proj: ")
        assert shlex.join([sys.executable, str(SERVER), str(log)])[:40] in screen.replace("\n", "")
        await pilot.press("y")
        fake.script(tool_call("proj__echo", {"text": "tui"}), text("done"))
        await send(pilot, "go")
        await idle(pilot, timeout=120)
    assert "proj__echo" in tool_schemas(fake.turn_requests[0].body)
    assert [c["args"] for c in calls(log)] == [{"text": "tui"}]


def test_uji_project_trust_for_a_plugins_own_files(home: Home) -> None:
    (home.work / "agents.txt").write_text("an agent the repository defines")
    home.init(
        """
        uji.notify("root " .. uji.project.root())
        uji.notify("before " .. tostring(uji.project.trusted("agents", { "agents.txt" })))
        uji.notify("answer " .. tostring(uji.project.trust("agents", { files = { "agents.txt" }, title = "Use its agents?" })))
        uji.notify("nothing there " .. tostring(uji.project.trust("agents", { files = { "missing.txt" } })))
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert f"root {home.work.resolve()}" in run.notices
    assert "before nil" in run.notices and "answer false" in run.notices
    assert any(n.startswith("Use its agents?: not used, as it is not approved") for n in run.notices)
    assert "nothing there false" in run.notices  # no question, no notice
    assert len([n for n in run.notices if "not approved" in n]) == 1
    home.fake.script(text("ok"))
    run = home.run("go", "--trust-project", "--on-ask", "allow", check=True)
    assert "answer true" in run.notices
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert "before true" in run.notices and "answer true" in run.notices
    (home.work / "agents.txt").write_text("changed")
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    assert "before nil" in run.notices and "answer false" in run.notices
