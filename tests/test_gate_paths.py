"""File rules match the file, not its spelling (SPEC §3), tried as a hostile model would.

Every case runs the real `uji run --json` against the loopback fake server, with the model
calling a file tool with one spelling of a path, and asserts what actually happened: whether
the secret's content reached the model (the fake server records every request), and whether
the protected file changed on disk. Controls (`shown`, `changed`) prove a leak would be seen.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import call, text, tool_call, tool_calls
from tests.test_confine import flip_until
from uji.events.stream import CallDecided

SECRET = "TOPSECRET-4f1c9a"
PUBLIC = "PUBLIC-hello-7d2"
POLICY = """
uji.tool.policy({
  read_file = { deny = { "secret.txt", "secrets/*", "~/.ssh/*" } },
  write_file = { deny = { "secret.txt", "secrets/*", "~/.ssh/*" }, default = "allow" },
  edit_file = { deny = { "secret.txt", "secrets/*", "~/.ssh/*" }, default = "allow" },
})
"""


def build(home: Home) -> None:
    """The tree every case starts from."""
    w, root = home.work, home.root
    (w / "secret.txt").write_text(SECRET + "\n")
    (w / "public.txt").write_text(PUBLIC + "\n")
    (w / "secrets" / "inner").mkdir(parents=True)
    (w / "secrets" / "k.txt").write_text(SECRET + "\n")
    (w / "a").mkdir()
    (w / "deep" / "a" / "b").mkdir(parents=True)
    os.symlink("secret.txt", w / "alias.txt")
    os.symlink("alias.txt", w / "alias2.txt")
    os.symlink(w / "secret.txt", w / "abs_alias.txt")
    os.symlink("secrets", w / "dirlink")
    os.symlink("../../../secrets", w / "deep" / "a" / "b" / "link")
    os.symlink("secrets/inner", w / "inner")  # inner/../k.txt is secrets/k.txt
    os.symlink("secrets/new.txt", w / "dangling.txt")
    (root / "outside").mkdir()
    (root / "outside" / "secret.txt").write_text(SECRET + "\n")
    os.symlink("../outside/secret.txt", w / "escape.txt")
    (root / "ref").mkdir()
    (root / "ref" / "secret.txt").write_text(SECRET + "\n")
    (root / "ref" / "notes.txt").write_text(PUBLIC + "\n")
    ssh = home.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_rsa").write_text(SECRET + "\n")
    os.symlink(ssh / "id_rsa", w / "key")


def seen_by_model(home: Home) -> str:
    """Everything the model was sent, as one text."""
    return "\n".join(json.dumps(r.body) for r in home.fake.turn_requests)


def run_one(home: Home, tool: str, args: dict[str, Any], lua: str = "") -> dict[str, Any]:
    """One call through `uji run`; returns the tool result message. uji must end normally."""
    home.init(POLICY + lua)
    home.fake.script(tool_call(tool, args), text("ok"))
    run = home.run("go")
    assert run.rc == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.done["type"] == "done"
    results = run.tool_results()
    assert len(results) == 1
    return results[0]


@dataclass(frozen=True)
class Read:
    path: str | Callable[[Home], str]
    shown: bool = False  # a control: this one is allowed, and its content must arrive
    lua: str = ""
    says: str = ""  # text the result must contain

    def of(self, home: Home) -> str:
        return self.path(home) if callable(self.path) else self.path


OFF = "uji.tool.confine(false)\n"
ROOTS = 'uji.tool.roots({ "../ref" })\n'

READS: dict[str, Read] = {
    "as written": Read("secret.txt", says="policy rule `secret.txt`"),
    "dot slash": Read("./secret.txt", says="policy rule `secret.txt`"),
    "double slash": Read(".//secret.txt"),
    "dot in the middle": Read("secrets/./k.txt"),
    "absolute": Read(lambda h: str(h.work / "secret.txt")),
    "absolute, unconfined": Read(lambda h: str(h.work / "secret.txt"), lua=OFF),
    "a/../": Read("a/../secret.txt"),
    "missing/../": Read("missing/../secret.txt"),
    "out and back in": Read(lambda h: f"../{h.work.name}/secret.txt"),
    "glob with ./": Read("./secrets/k.txt", says="policy rule `secrets/*`"),
    "glob with //": Read("secrets//k.txt"),
    "symlink alias": Read("alias.txt", says="the file is `secret.txt`"),
    "symlink to a symlink": Read("alias2.txt"),
    "absolute symlink": Read("abs_alias.txt"),
    "sub/../alias": Read("a/../alias.txt"),
    "directory symlink": Read("dirlink/k.txt"),
    "directory symlink, dot slash": Read("./dirlink/k.txt"),
    "symlink three levels down": Read("deep/a/b/link/k.txt"),
    "physical .. after a symlink": Read("inner/../k.txt"),
    "trailing slash": Read("secret.txt/"),
    "confined: .. escape": Read("../outside/secret.txt", says="outside the working directory"),
    "confined: absolute outside": Read(lambda h: str(h.root / "outside" / "secret.txt")),
    "confined: symlink out": Read("escape.txt"),
    "confined: ~/ path": Read("~/.ssh/id_rsa"),
    "~/ rule, unconfined": Read("~/.ssh/id_rsa", lua=OFF, says="policy rule `~/.ssh/*`"),
    "~/ rule, absolute": Read(lambda h: str(h.home / ".ssh" / "id_rsa"), lua=OFF),
    "~/ rule, relative ..": Read("../home/.ssh/id_rsa", lua=OFF),
    "~/ rule, symlink in cwd": Read("key", lua=OFF),
    "root: relative to the root": Read("../ref/secret.txt", lua=ROOTS + OFF),
    "root: absolute": Read(lambda h: str(h.root / "ref" / "secret.txt"), lua=ROOTS),
    "NUL byte": Read("secret.txt\0.png", says="error: path contains a NUL byte"),
    "NUL byte, symlink": Read("alias.txt\0", says="error: path contains a NUL byte"),
    "newline": Read("secret.txt\n", says="error: path contains a newline"),
    "100 KB path": Read("a/" * 50_000 + "secret.txt", says="error: path is too long (100010 bytes"),
    "unpaired surrogate": Read("secret\udc80.txt", says="error: path is not valid text"),
    # Controls: these are allowed, so their content must reach the model.
    "control: public": Read("public.txt", shown=True),
    "control: ./public": Read("./public.txt", shown=True),
    "control: root": Read(lambda h: str(h.root / "ref" / "notes.txt"), shown=True, lua=ROOTS),
}


@pytest.mark.parametrize("case", READS.values(), ids=list(READS))
def test_read(home: Home, case: Read) -> None:
    build(home)
    result = run_one(home, "read_file", {"path": case.of(home)}, case.lua)
    model = seen_by_model(home)
    if case.shown:
        assert PUBLIC in result["content"] and PUBLIC in model
    else:
        assert SECRET not in model, result["content"]
        assert result["content"].startswith(("denied:", "error:")), result["content"]
    assert case.says in result["content"]


@dataclass(frozen=True)
class Write:
    tool: str
    path: str | Callable[[Home], str]
    target: str  # the file, relative to the test's root, that must not change
    changed: bool = False  # a control
    lua: str = ""


WRITES: dict[str, Write] = {
    "write as written": Write("write_file", "secret.txt", "work/secret.txt"),
    "write ./": Write("write_file", "./secret.txt", "work/secret.txt"),
    "write absolute": Write("write_file", lambda h: str(h.work / "secret.txt"), "work/secret.txt"),
    "write through a symlink": Write("write_file", "alias.txt", "work/secret.txt"),
    "write through two symlinks": Write("write_file", "alias2.txt", "work/secret.txt"),
    "write through a directory symlink": Write("write_file", "dirlink/k.txt", "work/secrets/k.txt"),
    "write a new file through a dangling symlink": Write(
        "write_file", "dangling.txt", "work/secrets/new.txt"
    ),
    "write a new file in a symlinked dir": Write("write_file", "dirlink/new.txt", "work/secrets/new.txt"),
    "write unconfined ~/ through a symlink": Write("write_file", "key", "home/.ssh/id_rsa", lua=OFF),
    "edit through a symlink": Write("edit_file", "alias.txt", "work/secret.txt"),
    "edit ./ glob": Write("edit_file", "./secrets/k.txt", "work/secrets/k.txt"),
    "edit a NUL path": Write("edit_file", "secret.txt\0", "work/secret.txt"),
    "control: write public": Write("write_file", "public.txt", "work/public.txt", changed=True),
}


@pytest.mark.parametrize("case", WRITES.values(), ids=list(WRITES))
def test_write(home: Home, case: Write) -> None:
    build(home)
    target = home.root / case.target
    before = target.read_text() if target.exists() else None
    path = case.path(home) if callable(case.path) else case.path
    if case.tool == "write_file":
        args = {"path": path, "content": "OVERWRITTEN\n"}
    else:
        args = {"path": path, "old_string": "TOPSECRET", "new_string": "OVERWRITTEN"}
    result = run_one(home, case.tool, args, case.lua)
    after = target.read_text() if target.exists() else None
    if case.changed:
        assert after == "OVERWRITTEN\n", result["content"]
    else:
        assert after == before, result["content"]
        assert result["content"].startswith(("denied:", "error:")), result["content"]
        assert not target.is_symlink()
    assert SECRET not in seen_by_model(home)


def test_the_call_event_explains_a_deny_through_a_symlink(home: Home) -> None:
    build(home)
    home.init(POLICY)
    home.fake.script(tool_call("read_file", {"path": "alias.txt"}), text("ok"))
    run = home.run("go", check=True)
    event = run.calls[0]
    assert event["subject"] == "alias.txt" and event["decision"] == "deny"
    assert event["rule"] == "secret.txt" and event["form"] == "secret.txt"
    assert event["source"] == f"{home.config / 'init.lua'}:{home.line_of('uji.tool.policy(')}"
    content = run.tool_results()[0]["content"]
    assert content == "denied: blocked by the policy rule `secret.txt` (the file is `secret.txt`)"


def test_a_directory_swapped_for_a_symlink_while_calls_run_never_leaks(home: Home) -> None:
    """`d` flips between a plain directory and a symlink to `secrets/` while the model
    reads `d/k.txt` over and over: the decision may see the directory, but the open checks
    the file it reached, so the secret never arrives."""
    build(home)
    w = home.work
    (w / "d").mkdir()
    (w / "d" / "k.txt").write_text(PUBLIC + "\n")
    os.symlink("secrets", w / "d.link")
    stop = threading.Event()
    flips = [0]

    def flip() -> None:
        flips[0] = flip_until(w, stop)

    home.init(POLICY)
    n = 300
    home.fake.script(tool_calls(*(call("read_file", {"path": "d/k.txt"}) for _ in range(n))), text("ok"))
    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    try:
        run = home.run("go", timeout=120)
    finally:
        stop.set()
        flipper.join()
    assert run.rc == 0, run.stderr
    contents = [r["content"] for r in run.tool_results()]
    assert len(contents) == n and flips[0] > 0
    assert SECRET not in seen_by_model(home)
    assert any(PUBLIC in c for c in contents)  # the directory was read when it was one


# In-process: what `uji run` cannot time exactly.


async def caller_for(tmp_path: Path, lua: str, approver: Any) -> tuple[Any, list[Any]]:
    from uji.agent.tool_calls import ToolCaller
    from uji.app import App
    from uji.paths import resolve

    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "init.lua").write_text(lua)
    app = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path / "work"))
    await app.load_config()
    events: list[Any] = []
    return ToolCaller(app.turn_services(), events.append, approver), events


async def test_a_symlink_swapped_in_while_the_user_is_asked_is_still_refused(tmp_path: Path) -> None:
    """Decided on a plain directory, opened after it became a symlink to `secrets/`: the
    open checks the file it reached against the deny rules."""
    from uji.agent.approval import Answer
    from uji.wires.base import ToolCall

    work = tmp_path / "work"
    (work / "secrets").mkdir(parents=True)
    (work / "secrets" / "k.txt").write_text(SECRET)
    (work / "d").mkdir()
    (work / "d" / "k.txt").write_text(PUBLIC)

    async def swap_then_allow(question: Any) -> Answer:
        (work / "d" / "k.txt").unlink()
        (work / "d").rmdir()
        os.symlink("secrets", work / "d")
        return Answer(True, "user")

    lua = 'uji.tool.policy({ write_file = { deny = { "secrets/*" } } })'
    caller, events = await caller_for(tmp_path, lua, swap_then_allow)
    args = json.dumps({"path": "d/k.txt", "content": "OVERWRITTEN"})
    message = await caller.run(ToolCall("c1", "write_file", args))
    assert (work / "secrets" / "k.txt").read_text() == SECRET
    assert message["content"] == (
        f"error: {os.path.realpath(work)}/secrets/k.txt is denied by the policy rule `secrets/*`"
    )
    assert [e.outcome.decision for e in events if isinstance(e, CallDecided)] == ["allow"]


async def test_any_exception_in_a_call_becomes_an_error_result(tmp_path: Path) -> None:
    from uji.wires.base import ToolCall

    async def broken(question: Any) -> Any:
        raise RuntimeError("the approval dialog fell over")

    (tmp_path / "work").mkdir()
    caller, _ = await caller_for(tmp_path, "", broken)
    message = await caller.run(ToolCall("c1", "write_file", json.dumps({"path": "x", "content": "y"})))
    assert message == {
        "type": "tool",
        "tool_call_id": "c1",
        "name": "write_file",
        "content": "error: write_file failed: the approval dialog fell over",
    }
    assert not (tmp_path / "work" / "x").exists()
