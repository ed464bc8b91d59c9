"""OAuth for HTTP MCP servers, through `uji mcp login` and `uji run --json`: an MCP server
written with the SDK's server side that wants a bearer token (tests/mcp_server.py --auth,
which asks a loopback fake authorization server, tests/fakes/oauth_server.py, about each
token), and $BROWSER a script that follows the authorization URL's redirects to uji's
loopback callback, as a user's browser does once they approve."""

from __future__ import annotations

import json
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home, tool_schemas
from tests.fakes.oauth_server import FakeAuthServer
from tests.fakes.openai_server import call, text, tool_call, tool_calls

SERVER = Path(__file__).with_name("mcp_server.py")
BROWSER = f"{sys.executable} {Path(__file__).with_name('browser.py')} %s"
LOGIN = "uji mcp login web"


class Locked:
    """The authorization server and the MCP server that wants its tokens."""

    def __init__(self, auth: FakeAuthServer, url: str, log: Path) -> None:
        self.auth, self.url, self.log = auth, url, log

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Locked]:
    log = tmp_path_factory.mktemp("locked") / "calls.jsonl"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with FakeAuthServer() as auth:
        proc = subprocess.Popen(
            [sys.executable, str(SERVER), str(log), "--http", str(port), "--auth", auth.url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:  # wait for it to listen
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert proc.poll() is None, "the MCP test server exited"
                    time.sleep(0.1)
            yield Locked(auth, f"http://127.0.0.1:{port}/mcp", log)
        finally:
            proc.kill()
            proc.wait()


def configure(home: Home, locked: Locked) -> None:
    home.init(f'uji.mcp.add("web", {{ url = "{locked.url}", wait = 90 }})')


def login(home: Home) -> Any:
    run = home.uji("mcp", "login", "web", env={"BROWSER": BROWSER}, timeout=120)
    assert run.rc == 0, run.stderr + run.stdout
    return run


def kept(home: Home) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((home.data / "mcp-auth.json").read_text())["web"]
    return entry


def everything_but_the_token_file(home: Home) -> bytes:
    """Every file uji wrote (the database and its WAL, diagnostics, caches), bar mcp-auth.json."""
    return b"".join(
        p.read_bytes() for p in sorted(home.root.rglob("*")) if p.is_file() and p.name != "mcp-auth.json"
    )


def test_login_keeps_a_0600_token_the_next_run_uses_and_nothing_else_records(
    home: Home, locked: Locked
) -> None:
    configure(home, locked)
    out = login(home)
    assert "logged in to web" in out.stdout and "/authorize?" in out.stdout  # the URL, said
    # The SDK's flow, as the authorization server saw it: registration, PKCE S256, the
    # resource indicator, the scope the resource's metadata lists, the code exchanged.
    register = locked.auth.seen("/register")[-1]
    assert json.loads(register.params["client_name"]) == "uji"
    authorize = locked.auth.seen("/authorize")[-1].params
    assert authorize["code_challenge_method"] == "S256" and authorize["code_challenge"]
    assert authorize["resource"] == locked.url and authorize["scope"] == "mcp"
    assert authorize["redirect_uri"].startswith("http://127.0.0.1:")
    token_request = locked.auth.seen("/token")[-1].params
    assert token_request["grant_type"] == "authorization_code" and token_request["code_verifier"]
    path = home.data / "mcp-auth.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = kept(home)["tokens"]["access_token"]
    assert token in locked.auth.access

    home.fake.script(
        tool_calls(call("web__echo", {"text": "hi"}), call("web__bearer", {}, id="c2")), text("ok")
    )
    run = home.run("go", "--on-ask", "allow", check=True)
    assert "web__bearer" in tool_schemas(home.fake.turn_requests[0].body)  # known from the login
    assert [c["tool"] for c in locked.calls()][-2:] == ["echo", "bearer"]
    # The server saw the token; the model, the events, the database, the logs did not.
    contents = [m["content"] for m in home.fake.turn_requests[1].body["messages"] if m["role"] == "tool"]
    assert contents == ["echo: hi", "token: [redacted mcp web token]"]
    assert token not in run.stdout + run.stderr
    assert token.encode() not in everything_but_the_token_file(home)


def test_an_expired_token_is_refreshed_on_the_next_run(home: Home, locked: Locked) -> None:
    configure(home, locked)
    login(home)
    old = kept(home)
    # Time passes: the token's hour is over (the authorization server forgets it too).
    locked.auth.expire(old["tokens"]["access_token"])
    entries = json.loads((home.data / "mcp-auth.json").read_text())
    entries["web"]["expires_at"] = time.time() - 60
    (home.data / "mcp-auth.json").write_text(json.dumps(entries))
    refreshes = len([r for r in locked.auth.seen("/token") if r.params["grant_type"] == "refresh_token"])

    home.fake.script(tool_call("web__echo", {"text": "again"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert [m["content"] for m in run.tool_results()] == ["echo: again"]
    refresh = [r for r in locked.auth.seen("/token") if r.params["grant_type"] == "refresh_token"]
    assert len(refresh) == refreshes + 1
    assert refresh[-1].params["refresh_token"] == old["tokens"]["refresh_token"]
    new = kept(home)
    assert new["tokens"]["access_token"] != old["tokens"]["access_token"]
    assert new["expires_at"] > time.time()
    assert stat.S_IMODE((home.data / "mcp-auth.json").stat().st_mode) == 0o600


def test_a_headless_run_without_a_login_names_the_command_and_goes_on(home: Home, locked: Locked) -> None:
    configure(home, locked)
    home.fake.script(text("ok"))
    before = len(locked.auth.requests)
    run = home.run("go", check=True)
    [notice] = [n for n in run.notices if "web" in n]
    assert notice.startswith("MCP server web failed: needs authorization: run `uji mcp login web`")
    assert run.done["text"] == "ok"
    assert "web__echo" not in tool_schemas(home.fake.turn_requests[0].body)
    assert len(locked.auth.requests) == before  # no registration, no authorization started
    plain = home.uji("run", "go", env={"BROWSER": BROWSER})  # a browser at hand changes nothing
    assert LOGIN in plain.stderr and plain.rc == 0
    assert not (home.data / "mcp-auth.json").exists()


def test_a_step_up_asks_for_a_login_with_more_scope_which_the_next_login_asks_for(
    home: Home, locked: Locked
) -> None:
    configure(home, locked)
    login(home)
    home.fake.script(tool_call("web__secret", {}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    [result] = [m["content"] for m in run.tool_results()]
    assert result == (
        "error: MCP server web needs authorization (scope mcp admin): run `uji mcp login web` "
        "(in the terminal UI: /mcp, then login)"
    )
    assert "secret" not in [c["tool"] for c in locked.calls()]
    assert kept(home)["scope"] == "mcp admin"

    login(home)
    assert locked.auth.seen("/authorize")[-1].params["scope"] == "mcp admin"
    home.fake.script(tool_call("web__secret", {}), text("ok"))
    run = home.run("go", "--on-ask", "allow", check=True)
    assert [m["content"] for m in run.tool_results()] == ["the secret"]
