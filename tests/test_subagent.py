"""The subagent plugin through `uji run`: a `subagent` call starts a child `uji run --json
--parent` process, which asks the same fake server; requests are routed to the parent's or
a child's script by a marker in their user messages. What is checked is what a user sees:
the requests the model got, the JSON events, the sessions in the SQLite db, the processes."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, Recorded, Step, drip, text, tool_call
from tests.waiting import DEADLINE

PLUGIN = 'require("uji.plugins.subagent").setup({ %s })\n'


class Routed(FakeOpenAI):
    """A fake whose turn requests go to the script of the first marker found in their user
    messages (each script's steps are taken in order); a request with no marker takes the
    main script. With `together`, the first request of each of those markers is held until
    all of them have arrived (at most `hold` seconds): `.met` says whether they all did in time."""

    def __init__(self) -> None:
        super().__init__()
        self.routes: dict[str, list[Step]] = {}
        self.together: set[str] = set()
        self.hold = 10.0
        self._waits: list[bool] = []  # for each marker's first request: were all in before `hold`?
        self._arrived: set[str] = set()
        self._all_in = threading.Event()

    @property
    def met(self) -> bool:
        with self._lock:
            return len(self._waits) == len(self.together) > 0 and all(self._waits)

    def route(self, marker: str, *steps: Step) -> None:
        self.routes[marker] = list(steps)

    def marked(self, marker: str) -> list[Recorded]:
        return [r for r in self.turn_requests if marker in _user_text(r)]

    def _choose(self, request: Recorded) -> tuple[Step, bool]:
        body = request.body if isinstance(request.body, dict) else {}
        said = _user_text(request)
        marker = next((m for m in self.routes if m in said), None)
        if marker is None or (self.side_calls and self._is_side(body)):
            return super()._choose(request)
        if marker in self.together:
            with self._lock:
                first = marker not in self._arrived
                self._arrived.add(marker)
                if self._arrived >= self.together:
                    self._all_in.set()
            if first:
                met = self._all_in.wait(self.hold)
                with self._lock:
                    self._waits.append(met)
        with self._lock:
            steps = self.routes[marker]
            step = steps.pop(0) if steps else self._default_step()
            self._requests.append(request)
        return step, request.headers.get("connection", "").lower() != "close"


def _user_text(request: Recorded) -> str:
    body = request.body if isinstance(request.body, dict) else {}
    return " ".join(str(m.get("content")) for m in body.get("messages", []) if m.get("role") == "user")


@pytest.fixture
def fake() -> Iterator[Routed]:
    with Routed() as server:
        yield server


def _tools(request: Recorded) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def _tool_answers(request: Recorded) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m.get("role") == "tool"]


def _children(db: Path, parent: str) -> list[tuple[str, str]]:
    """(id, title) of the sessions saved as children of `parent`."""
    con = sqlite3.connect(db)
    try:
        return con.execute(
            "SELECT id, title FROM sessions WHERE parent = ? ORDER BY title", (parent,)
        ).fetchall()
    finally:
        con.close()


def test_a_task_runs_a_child_that_reads_a_file_and_its_answer_is_the_result(home: Home, fake: Routed) -> None:
    (home.work / "a.py").write_text("def alpha():\n    return 1\n")
    home.init(
        f"""
        uji.provider.add({{ id = "test", name = "T", wire = "openai-chat", base_url = "{fake.base_url}",
          models = {{ {{ id = "m", cost = {{ input = 1, output = 2 }} }} }} }})
        uji.model.use({{ provider = "test", model = "m" }})
        """
        + PLUGIN % "",
        provider=False,
    )
    fake.route(
        "PARENT",
        tool_call("subagent", {"task": "CHILD-A: what does a.py define?"}),
        text("alpha, says the child"),
    )
    fake.route("CHILD-A", tool_call("read_file", {"path": "a.py"}), text("a.py defines alpha()"))
    run = home.run("PARENT: ask a subagent")
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "alpha, says the child"

    # The child got the file; it was offered every tool but `subagent`, and told it is a subagent.
    child_requests = fake.marked("CHILD-A")
    assert len(child_requests) == 2
    assert "def alpha()" in _tool_answers(child_requests[1])[0]
    assert sorted(_tools(child_requests[0])) == ["edit_file", "read_file", "run_command", "write_file"]
    system = child_requests[0].body["messages"][0]["content"]
    assert "You are a subagent" in system
    assert "subagent" in _tools(fake.marked("PARENT")[0])

    # The parent's next request carries the child's answer as the task call's result.
    answer = _tool_answers(fake.marked("PARENT")[1])
    assert len(answer) == 1 and answer[0].startswith("a.py defines alpha()")

    # The child session is saved under the parent, with its read_file call.
    children = _children(home.db, run.session_id)
    assert len(children) == 1 and children[0][1] == "task: CHILD-A: what does a.py define?"
    child_id = children[0][0]
    assert f"[subagent session {child_id}]" in answer[0]
    saved = home.db_messages(child_id)
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "assistant"]
    assert saved[2]["name"] == "read_file" and "def alpha()" in saved[2]["content"]

    # The child session can be taken up again, with its history.
    again = home.run("CHILD-A: and what does it return?", "--session", child_id)
    assert again.rc == 0, again.stderr
    assert "def alpha()" in _tool_answers(fake.marked("CHILD-A")[-1])[0]

    # The call's task (ctx.task: the `tasks` events) follows the child's calls, then ends done.
    rows = [e["tasks"] for e in run.of("tasks") if e["tool"] == "subagent"]
    said = [json.dumps(e, sort_keys=True) for e in run.of("tasks")]
    assert len(said) == len(set(said))  # each step of the child once (--json repeated them four times)
    assert {"label": "subagent", "status": "running", "line": "read_file a.py"}.items() <= rows[-2][0].items()
    assert rows[-1][0]["status"] == "done" and rows[-1][0]["detail"] == "a.py defines alpha()"

    # Four requests of 12 + 3 tokens: the child's two count toward the parent's totals, and
    # toward its cost (12 tokens at $1 and 3 at $2 per million each).
    assert run.done["usage"]["input"] == 48 and run.done["usage"]["output"] == 12
    assert run.done["cost"] == pytest.approx(4 * 18 / 1e6)


def test_tasks_run_in_parallel(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % "")
    fake.route(
        "PARENT",
        tool_call(
            "subagent", {"tasks": [{"task": "CHILD-A one"}, {"task": "CHILD-B two", "tools": ["read_file"]}]}
        ),
        text("both answered"),
    )
    fake.route("CHILD-A", text("answer A"))
    fake.route("CHILD-B", text("answer B"))
    fake.together = {"CHILD-A", "CHILD-B"}
    run = home.run("PARENT: two at once")
    assert run.rc == 0, run.stderr
    assert fake.met  # both children had asked the model before either got its answer
    assert _tools(fake.marked("CHILD-B")[0]) == ["read_file"]
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert "## Task 1: CHILD-A one\nanswer A" in answer
    assert "## Task 2: CHILD-B two\nanswer B" in answer
    assert len(_children(home.db, run.session_id)) == 2


def test_with_concurrency_one_the_tasks_take_turns(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % "concurrency = 1")
    fake.route(
        "PARENT",
        tool_call("subagent", {"tasks": [{"task": "CHILD-A one"}, {"task": "CHILD-B two"}]}),
        text("ok"),
    )
    fake.route("CHILD-A", text("answer A"))
    fake.route("CHILD-B", text("answer B"))
    fake.together = {"CHILD-A", "CHILD-B"}
    fake.hold = 1.0
    run = home.run("PARENT: one after the other")
    assert run.rc == 0, run.stderr
    assert not fake.met
    assert "answer A" in _tool_answers(fake.marked("PARENT")[1])[0]


def test_a_child_cannot_start_subagents(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % "")
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A try"}), text("ok"))
    fake.route("CHILD-A", tool_call("subagent", {"task": "GRANDCHILD"}), text("I could not"))
    run = home.run("PARENT: nest")
    assert run.rc == 0, run.stderr
    first, second = fake.marked("CHILD-A")[:2]
    assert "subagent" not in _tools(first)
    assert _tool_answers(second)[0].startswith("error: unknown tool `subagent`")
    assert fake.marked("GRANDCHILD") == []
    assert _tool_answers(fake.marked("PARENT")[1])[0].startswith("I could not")
    ((child_id, _),) = _children(home.db, run.session_id)
    assert _children(home.db, child_id) == []


def test_a_task_may_not_name_the_task_tool(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % "")
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A", "tools": ["subagent"]}), text("ok"))
    run = home.run("PARENT: nest")
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert answer.startswith("error: task 1: a subagent has no tool `subagent`; it may use: ")
    assert fake.marked("CHILD-A") == [] and _children(home.db, run.session_id) == []


def test_a_call_that_would_ask_is_refused_in_the_child_and_the_parent_is_told(
    home: Home, fake: Routed
) -> None:
    home.init(PLUGIN % "")
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A write"}), text("ok"))
    fake.route("CHILD-A", tool_call("write_file", {"path": "b.txt", "content": "x"}), text("could not write"))
    run = home.run("PARENT: write through a child")
    assert run.rc == 0, run.stderr
    assert not (home.work / "b.txt").exists()
    assert "nobody is here to approve" in _tool_answers(fake.marked("CHILD-A")[1])[0]
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert answer.startswith("could not write")
    assert "[refused because a subagent cannot ask for approval: write_file `b.txt`]" in answer


def test_the_child_runs_in_the_parents_mode(home: Home, fake: Routed) -> None:
    # on_ask = "allow": only the mode passed on from the parent keeps the edit out.
    home.init(PLUGIN % 'on_ask = "allow"')
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A write"}), text("ok"))
    fake.route(
        "CHILD-A", tool_call("write_file", {"path": "b.txt", "content": "x"}), text("not in plan mode")
    )
    run = home.run("PARENT: write through a child", "--mode", "plan")
    assert run.rc == 0, run.stderr
    assert not (home.work / "b.txt").exists()
    assert _tool_answers(fake.marked("CHILD-A")[1])[0].startswith("denied")

    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A write"}), text("ok"))
    fake.route("CHILD-A", tool_call("write_file", {"path": "b.txt", "content": "x"}), text("written"))
    run = home.run("PARENT: write through a child")
    assert run.rc == 0, run.stderr
    assert (home.work / "b.txt").read_text() == "x"


def _child_pids(parent_session: str) -> list[int]:
    """The processes whose command line is a child run of `parent_session`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"--parent" in argv and parent_session.encode() in argv:
            pids.append(int(entry))
    return pids


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


def _wait(cond: Any, timeout: float = DEADLINE) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return bool(cond())


def test_interrupting_the_parent_stops_the_child(home: Home, fake: Routed) -> None:
    home.init('uji.tool.policy({ run_command = { default = "allow" } })\n' + PLUGIN % "")
    fake.route(
        "PARENT", tool_call("subagent", {"tasks": [{"task": "CHILD-A hang"}, {"task": "CHILD-B sleep"}]})
    )
    fake.route("CHILD-A", drip(0.2))  # keep-alives, no answer: the child waits for ever
    fake.route("CHILD-B", tool_call("run_command", {"command": "echo $$ > sleep.pid; exec sleep 60"}))
    pid_file = home.work / "sleep.pid"
    proc = subprocess.Popen(
        home.command("run", "--json", "PARENT: start a child that hangs"),
        cwd=home.work,
        env=home.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        session = json.loads(proc.stdout.readline())
        assert session["type"] == "session"
        assert _wait(lambda: len(fake.marked("CHILD-A")) == 1)
        assert _wait(lambda: pid_file.exists() and pid_file.read_text().strip())
        sleep = int(pid_file.read_text())
        pids = _child_pids(session["id"])
        assert len(pids) == 2 and _alive(sleep)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert events[-1]["type"] == "done" and events[-1]["error"] == "interrupted"
    assert _wait(lambda: not any(_alive(p) for p in [*pids, sleep]))
    assert fake.wait_for_drops(1)  # the child's request was dropped with it
    assert len(_children(home.db, session["id"])) == 2


async def test_escape_in_the_terminal_ui_stops_every_child_and_its_commands(
    tmp_path: Path, fake: Routed
) -> None:
    from tests.test_tui_support import SIZE, entries, idle, make_app, ready, send, shows, until

    fake.route(
        "PARENT",
        tool_call("subagent", {"tasks": [{"task": "CHILD-A sleep"}, {"task": "CHILD-B hang"}]}),
        text("after the interrupt"),
    )
    fake.route("CHILD-A", tool_call("run_command", {"command": "echo $$ > sleep.pid; exec sleep 60"}))
    fake.route("CHILD-B", drip(0.2))  # keep-alives, no answer: it waits for ever
    app = make_app(tmp_path, fake, 'uji.tool.policy({ run_command = { default = "allow" } })\n' + PLUGIN % "")
    pid_file = tmp_path / "work" / "sleep.pid"
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "PARENT: two children that hang")
        # One task per child under the running call: its live line names the running ones.
        await shows(
            pilot,
            "0/2 done · #1 CHILD-A sleep: run_command echo $$ > sleep.pid; exec sleep 60 · #2 CHILD-B hang",
        )
        await until(pilot, lambda: pid_file.exists() and pid_file.read_text().strip(), what="the sleep")
        sleep = int(pid_file.read_text())
        await until(pilot, lambda: len(fake.marked("CHILD-B")) == 1)
        parent = app.conversation.agent.session_id if app.conversation.agent else ""
        pids = _child_pids(parent)
        assert len(pids) == 2 and _alive(sleep)
        await pilot.press("escape")
        await idle(pilot)
        # uji is still open: the interrupt itself stopped the children and their commands.
        await until(pilot, lambda: not any(_alive(p) for p in [*pids, sleep]), what="the children to be gone")
        assert entries(app, "tool")[0]["content"] == "error: interrupted by the user while this tool ran"
        assert fake.wait_for_drops(1)
        # The child that ran the command saved its interrupted call (an interrupt, not a kill).
        db = tmp_path / "data" / "uji.db"
        (child_a,) = [i for i, title in _children(db, parent) if "CHILD-A" in title]
        con = sqlite3.connect(db)
        rows = con.execute("SELECT type, data FROM messages WHERE session_id = ? ORDER BY seq", (child_a,))
        saved = [{"type": t, **json.loads(d)} for t, d in rows.fetchall()]
        con.close()
        assert [m["type"] for m in saved] == ["user", "assistant", "tool", "error"]
        assert saved[2]["content"] == "error: interrupted by the user while this tool ran"


def test_the_child_has_the_provider_key_its_commands_do_not(home: Home, fake: Routed) -> None:
    home.init(
        f"""
        uji.provider.add({{ id = "keyed", name = "K", wire = "openai-chat", base_url = "{fake.base_url}",
          auth_env = {{ "FAKE_SUBAGENT_KEY" }}, models = {{ "m" }} }})
        uji.model.use({{ provider = "keyed", model = "m" }})
        uji.tool.policy({{ run_command = {{ default = "allow" }} }})
        """
        + PLUGIN % "",
        provider=False,
    )
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A env"}), text("ok"))
    fake.route(
        "CHILD-A",
        tool_call("run_command", {"command": "printenv FAKE_SUBAGENT_KEY || echo key=none"}),
        text("ok"),
    )
    run = home.run("PARENT: key", env={"FAKE_SUBAGENT_KEY": "sk-sub-123"})
    assert run.rc == 0, run.stderr
    first, second = fake.marked("CHILD-A")
    assert first.headers["authorization"] == "Bearer sk-sub-123"
    assert "key=none" in _tool_answers(second)[0]


def test_run_flags_set_the_mode_and_confinement(home: Home, fake: Routed) -> None:
    outside = home.root / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("from outside\n")
    home.init("")
    fake.script(tool_call("read_file", {"path": str(outside / "o.txt")}), text("ok"))
    home.run("read it")
    assert "from outside" not in _tool_answers(fake.turn_requests[-1])[0]  # confined by default
    for flags in (("--confine", "off"), ("--root", str(outside))):
        fake.script(tool_call("read_file", {"path": str(outside / "o.txt")}), text("ok"))
        run = home.run("read it", *flags)
        assert run.rc == 0, run.stderr
        assert "from outside" in _tool_answers(fake.turn_requests[-1])[0], flags
    run = home.run("hi", "--mode", "nope")
    assert run.rc == 2 and "--mode: " in run.stderr and "nope" in run.stderr


def test_child_sessions_are_read_through_the_session_api(home: Home, fake: Routed) -> None:
    home.init(
        PLUGIN % ""
        + """
        uji.command.add("children", function(parent)
          for _, s in ipairs(uji.session.list({ parent = parent })) do
            uji.notify("child " .. s.title)
            for _, m in ipairs(uji.session.messages({ session = s.id })) do
              uji.notify("said " .. m.type .. " " .. m.text)
            end
          end
          local ok, err = pcall(uji.session.messages, { session = "nope" })
          uji.notify(tostring(ok) .. " " .. err)
        end)
        """
    )
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A hello"}), text("ok"))
    fake.route("CHILD-A", text("hello from the child"))
    run = home.run("PARENT: one child")
    assert run.rc == 0, run.stderr
    listing = home.run(f"/children {run.session_id}")
    assert listing.rc == 0, listing.stderr
    notices = listing.notices
    assert notices[:3] == [
        "child task: CHILD-A hello",
        "said user CHILD-A hello",
        "said assistant hello from the child",
    ]
    assert notices[3].startswith("false ") and notices[3].endswith("uji.session.messages: no session nope")


def test_a_child_does_not_outlive_a_parent_killed_with_sigkill(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % "")
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A hang"}))
    fake.route("CHILD-A", drip(0.2))  # keep-alives, no answer: the child waits for ever
    proc = subprocess.Popen(
        home.command("run", "--json", "PARENT: start a child, then die"),
        cwd=home.work,
        env=home.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        session = json.loads(proc.stdout.readline())
        assert _wait(lambda: len(fake.marked("CHILD-A")) == 1)
        pids = _child_pids(session["id"])
        assert len(pids) == 1 and _alive(pids[0])
        proc.kill()  # kill -9: nothing of uji's own code runs
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _wait(lambda: not _alive(pids[0]))


# A child never exceeds its parent: no tool the parent was not offered, no laxer on-ask.


@pytest.mark.timeout(90)
def test_a_child_gets_no_tool_the_parent_was_not_offered(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % 'tools = { "read_file", "run_command", "write_file" }')
    fake.route(
        "PARENT",
        tool_call("subagent", {"task": "CHILD-A run", "tools": ["run_command"]}),
        tool_call("subagent", {"task": "CHILD-B run"}),
        text("ok"),
    )
    fake.route("CHILD-B", tool_call("run_command", {"command": "touch m.txt"}), text("no shell"))
    run = home.run("PARENT: run through a child", "--tools", "read_file,subagent", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    # The task naming run_command is refused before any child starts; the one naming no
    # tool gets only read_file, and its run_command call is an unknown tool.
    first = _tool_answers(fake.marked("PARENT")[1])[0]
    assert first == "error: task 1: a subagent has no tool `run_command`; it may use: read_file"
    assert fake.marked("CHILD-A") == []
    child = fake.marked("CHILD-B")
    assert _tools(child[0]) == ["read_file"]
    assert _tool_answers(child[1])[0].startswith("error: unknown tool `run_command`")
    assert not (home.work / "m.txt").exists()


@pytest.mark.timeout(90)
def test_a_childs_on_ask_is_never_laxer_than_the_parents(home: Home, fake: Routed) -> None:
    home.init(PLUGIN % 'on_ask = "allow"')
    fake.route("PARENT", tool_call("subagent", {"task": "CHILD-A write"}), text("ok"))
    fake.route("CHILD-A", tool_call("write_file", {"path": "b.txt", "content": "x"}), text("could not write"))
    run = home.run("PARENT: write through a child", "--on-ask", "deny")
    assert run.rc == 0, run.stderr
    assert not (home.work / "b.txt").exists()
    # The child's call asked, and the child's own --on-ask deny refused it (by = auto).
    ((child_id, _),) = _children(home.db, run.session_id)
    [result] = [m for m in home.db_messages(child_id) if m["type"] == "tool"]
    assert result["content"] == "denied: nobody is here to approve this call (uji run --on-ask deny)"
    answer = _tool_answers(fake.marked("PARENT")[1])[0]
    assert "[refused because a subagent cannot ask for approval: write_file `b.txt`]" in answer


@pytest.mark.timeout(60)
def test_lua_reads_the_runs_on_ask_and_available_tools(home: Home, fake: Routed) -> None:
    home.init(
        """
        uji.tool.add("probe", { policy = "allow", run = function()
          return tostring(uji.tool.on_ask()) .. " | " .. table.concat(uji.tool.available(), ",")
        end })
        uji.tool.disable({ "write_file" })
        """
    )
    fake.route("PARENT", tool_call("probe", {}), text("ok"))
    run = home.run("PARENT", "--on-ask", "deny", "--tools", "probe,read_file,write_file")
    assert run.rc == 0, run.stderr
    assert _tool_answers(fake.marked("PARENT")[1]) == ["deny | probe,read_file"]


# A model per subagent: two fake servers, one model each, at different prices (dollars per
# million tokens); every request reports 12 input and 3 output tokens.
TWO_MODELS = """
uji.provider.add({{ id = "strong", name = "S", wire = "openai-chat", base_url = "{strong}",
  models = {{ {{ id = "big", cost = {{ input = {big_in}, output = {big_out} }} }} }} }})
uji.provider.add({{ id = "cheap", name = "C", wire = "openai-chat", base_url = "{cheap}",
  models = {{ {{ id = "small", cost = {{ input = {small_in}, output = {small_out} }} }} }} }})
uji.model.use({{ provider = "strong", model = "big" }})
"""


def _request_cost(input_price: float, output_price: float) -> float:
    return (12 * input_price + 3 * output_price) / 1e6


@pytest.fixture
def cheap() -> Iterator[Routed]:
    with Routed() as server:
        yield server


def _two_models(home: Home, strong: Routed, cheap: Routed, plugin: str, prices: tuple[int, ...]) -> None:
    big_in, big_out, small_in, small_out = prices
    lua = TWO_MODELS.format(
        strong=strong.base_url,
        cheap=cheap.base_url,
        big_in=big_in,
        big_out=big_out,
        small_in=small_in,
        small_out=small_out,
    )
    home.init(lua + PLUGIN % plugin, provider=False)


def test_the_plugins_model_runs_the_children_and_their_cost_is_at_its_prices(
    home: Home, fake: Routed, cheap: Routed
) -> None:
    _two_models(home, fake, cheap, 'model = "cheap/small"', (10, 20, 1, 2))
    fake.script(tool_call("subagent", {"task": "CHILD-A: look around"}), text("the child looked"))
    cheap.script(text("looked: nothing there"))
    run = home.run("PARENT: explore with the cheap model")
    assert run.rc == 0, run.stderr

    # Each fake got only its own model's requests: the parent's two, the child's one.
    assert [r.body["model"] for r in fake.turn_requests] == ["big", "big"]
    assert [r.body["model"] for r in cheap.turn_requests] == ["small"]
    assert "CHILD-A: look around" in _user_text(cheap.turn_requests[0])
    assert _tool_answers(fake.turn_requests[1])[0].startswith("looked: nothing there")
    # The calling model is not offered a choice: the plugin's options give none.
    (task,) = [t for t in fake.turn_requests[0].body["tools"] if t["function"]["name"] == "subagent"]
    assert "model" not in task["function"]["parameters"]["properties"]

    # The child's done line priced its request at the small model's prices; the parent's
    # done adds it to its own two at the big model's.
    (child_id, _), *_ = _children(home.db, run.session_id)
    child_cost = _request_cost(1, 2)
    assert run.done["cost"] == pytest.approx(2 * _request_cost(10, 20) + child_cost)
    assert run.done["usage"]["input"] == 36
    con = sqlite3.connect(home.db)
    try:
        (row,) = con.execute("SELECT usage FROM sessions WHERE id = ?", (child_id,)).fetchall()
    finally:
        con.close()
    assert json.loads(row[0])["cost"] == pytest.approx(child_cost)


def test_the_calling_model_chooses_among_the_allowed_models_only(
    home: Home, fake: Routed, cheap: Routed
) -> None:
    _two_models(home, fake, cheap, 'models = { "cheap/small" }', (10, 20, 1, 2))
    fake.script(
        tool_call("subagent", {"task": "CHILD-A: with the strong one", "model": "strong/other"}),
        tool_call(
            "subagent", {"tasks": [{"task": "CHILD-B: cheap", "model": "cheap/small"}, {"task": "CHILD-C"}]}
        ),
        text("done"),
    )
    cheap.script(text("cheap answer"))
    fake.route("CHILD-C", text("strong answer"))
    run = home.run("PARENT: choose")
    assert run.rc == 0, run.stderr

    # Offered: the allowed model, the default being this session's.
    (task,) = [t for t in fake.turn_requests[0].body["tools"] if t["function"]["name"] == "subagent"]
    offered = task["function"]["parameters"]["properties"]["model"]
    assert offered["enum"] == ["cheap/small"] and "default: this session's" in offered["description"]
    # A model outside the list is refused before any child starts.
    refused, answers = (_tool_answers(r)[-1] for r in fake.marked("PARENT")[1:3])
    assert refused == "error: task 1: no model `strong/other` for subagents; choose one of: cheap/small"
    assert fake.marked("CHILD-A") == []
    # The chosen one went to the cheap fake; the task without a model ran on this session's.
    assert [r.body["model"] for r in cheap.turn_requests] == ["small"]
    assert "CHILD-B: cheap" in _user_text(cheap.turn_requests[0])
    assert [r.body["model"] for r in fake.marked("CHILD-C")] == ["big"]
    assert "cheap answer" in answers and "strong answer" in answers
    assert len(_children(home.db, run.session_id)) == 2


def test_without_models_a_task_may_not_choose_one(home: Home, fake: Routed, cheap: Routed) -> None:
    _two_models(home, fake, cheap, "", (10, 20, 1, 2))
    fake.script(tool_call("subagent", {"task": "CHILD-A", "model": "cheap/small"}), text("ok"))
    run = home.run("PARENT: choose")
    assert run.rc == 0, run.stderr
    assert _tool_answers(fake.turn_requests[1])[0] == (
        "error: task 1: this session does not let you choose a subagent's model; leave `model` out"
    )
    assert cheap.turn_requests == [] and _children(home.db, run.session_id) == []


def test_the_parents_budget_counts_the_childs_cost_at_the_childs_prices(
    home: Home, fake: Routed, cheap: Routed
) -> None:
    """The parent's own request costs $0.00003; the child's one, at its model's $1000 per
    million, $0.015: over --max-cost 0.01, so the parent stops before its next request.
    Priced at the parent's model, the child would have cost $0.00003 and the run gone on."""
    _two_models(home, fake, cheap, 'model = "cheap/small"', (1, 6, 1000, 1000))
    fake.script(tool_call("subagent", {"task": "CHILD-A: expensive"}), text("never asked"))
    cheap.script(text("expensive answer"))
    run = home.run("PARENT: delegate", "--max-cost", "0.01")
    assert run.rc == 3, run.stderr
    assert len(fake.turn_requests) == 1 and len(cheap.turn_requests) == 1
    child_cost = _request_cost(1000, 1000)
    assert run.done["cost"] == pytest.approx(_request_cost(1, 6) + child_cost)
    (budget,) = run.of("budget")
    assert budget["limit"] == "max_cost" and budget["used"] == pytest.approx(run.done["cost"])


def test_a_bad_model_option_is_told_at_start(home: Home) -> None:
    home.init(PLUGIN % 'model = "small"')
    run = home.run("hi")
    line = home.line_of("subagent")
    (notice,) = [e["text"] for e in run.of("notice") if "config error" in e["text"]]
    assert f'init.lua:{line}: subagent: `model` must be "provider/model"' in notice
