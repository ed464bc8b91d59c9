"""Subscription sign-in (`uji.auth.login`, a provider's `oauth` settings) against a
loopback authorization server, with $BROWSER a script that follows the redirect to uji's
loopback callback; and credentials in the keychain (`uji.auth.configure{keychain}`)
through a fake `secret-tool` on PATH. Through `uji run`: what the model server receives,
what lands on disk (0600), and that no token reaches a session, an event or a log."""

from __future__ import annotations

import json
import stat
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.anthropic_server import text as claude_text
from tests.fakes.oauth_server import FakeAuthServer
from tests.fakes.openai_server import text, tool_call

BROWSER = f"{sys.executable} {Path(__file__).with_name('browser.py')} %s"


def claude(fake: FakeAnthropic, auth: FakeAuthServer) -> str:
    return f"""
uji.provider.add({{ id = "claude", name = "Claude", api = uji.api.anthropic(), base_url = "{fake.base_url}",
  auth_env = {{ "CLAUDE_TEST_KEY" }}, models = {{ {{ id = "claude-sonnet-4-5", context = 200000 }} }},
  oauth = {{ client_id = "uji-test", authorize_url = "{auth.url}/authorize", token_url = "{auth.url}/token",
    scopes = "user:inference", redirect_port = 0, redirect_path = "/callback", token_body = "json",
    state = "verifier", authorize_params = {{ code = "true" }},
    request_headers = {{ ["anthropic-beta"] = "oauth-2025-04-20" }},
    identity_prompt = "You are the test agent." }} }})
uji.model.use({{ provider = "claude", model = "claude-sonnet-4-5" }})
if not uji.auth.authenticated("claude") then
  local ok, err = uji.auth.login("claude")
  uji.notify("login: " .. tostring(ok) .. " " .. tostring(err))
end
"""


@pytest.fixture
def anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def saved(home: Home) -> dict[str, object]:
    path = home.data / "auth.toml"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return tomllib.loads(path.read_text())


def nowhere_else(home: Home, run_stdout: str, *secrets: str) -> None:
    """No secret in the events, the database, the logs or any other file uji wrote
    (auth.toml, the credential's own place, aside)."""
    for secret in secrets:
        assert secret not in run_stdout
        for path in [*home.data.rglob("*"), *home.work.rglob("*")]:
            if path.is_file() and path.name != "auth.toml":
                assert secret.encode() not in path.read_bytes(), path


@pytest.mark.timeout(90)
def test_login_signs_in_through_the_browser_and_requests_carry_the_token(
    home: Home, anthropic: FakeAnthropic
) -> None:
    with FakeAuthServer() as auth:
        home.init(claude(anthropic, auth), provider=False)
        anthropic.script(claude_text("signed in"))
        run = home.run("hi", env={"BROWSER": BROWSER}, timeout=80)
        assert run.rc == 0, run.stderr
        assert "login: true nil" in run.notices
        assert any(
            n.startswith(f"opened your browser to sign in - {auth.url}/authorize?") for n in run.notices
        )
        # The flow as the authorization server saw it: PKCE S256, the state, the extra
        # parameter, the code exchanged with the verifier (a JSON body).
        authorize = auth.seen("/authorize")[-1].params
        assert authorize["code_challenge_method"] == "S256" and authorize["code"] == "true"
        assert (
            authorize["redirect_uri"].startswith("http://localhost:") and authorize["client_id"] == "uji-test"
        )
        exchanged = auth.seen("/token")[-1].params
        assert json.loads(exchanged["grant_type"]) == "authorization_code"
        assert json.loads(exchanged["code_verifier"]) == authorize["state"]  # state = verifier
        entry = saved(home)["claude"]
        assert isinstance(entry, dict) and entry["type"] == "oauth"
        access, refresh = str(entry["access"]), str(entry["refresh"])
        assert access in auth.access
        # What the model server received: the token, the beta header, the identity first.
        sent = anthropic.turn_requests[0]
        assert sent.headers["authorization"] == f"Bearer {access}"
        assert "x-api-key" not in sent.headers
        assert sent.headers["anthropic-beta"] == "oauth-2025-04-20"
        assert sent.body["system"][0]["text"] == "You are the test agent."
        assert run.done["text"] == "signed in"
        nowhere_else(home, run.stdout, access, refresh)
        # The next run is signed in: no browser, the same token.
        again = home.run("again", timeout=60)
        assert again.rc == 0 and not any(n.startswith("login:") for n in again.notices)
        assert anthropic.turn_requests[-1].headers["authorization"] == f"Bearer {access}"


@pytest.mark.timeout(90)
def test_an_expired_token_is_refreshed_before_the_request(home: Home, anthropic: FakeAnthropic) -> None:
    with FakeAuthServer(lifetime=60) as auth:  # within the expiry margin: expired at once
        home.init(claude(anthropic, auth), provider=False)
        anthropic.script(claude_text("fresh"))
        run = home.run("hi", env={"BROWSER": BROWSER}, timeout=80)
        assert run.rc == 0, run.stderr
        grants = [json.loads(r.params["grant_type"]) for r in auth.seen("/token")]
        assert grants == ["authorization_code", "refresh_token"]
        entry = saved(home)["claude"]
        assert isinstance(entry, dict)
        assert anthropic.turn_requests[0].headers["authorization"] == f"Bearer {entry['access']}"
        assert entry["access"] in auth.access


@pytest.mark.timeout(60)
def test_login_without_oauth_or_for_an_unknown_provider(home: Home) -> None:
    home.init(
        """
        local ok, err = uji.auth.login("test")
        uji.notify("login: " .. tostring(ok) .. " " .. tostring(err))
        uji.notify("row: " .. tostring(uji.provider.get("test").oauth))
        local fine, raised = pcall(uji.auth.login, "nope")
        uji.notify("unknown: " .. tostring(raised))
        """
    )
    run = home.run("hi", check=True)
    assert "login: nil this provider does not support subscription sign-in" in run.notices
    assert "row: false" in run.notices
    assert any("uji.auth.login: unknown provider 'nope'" in n for n in run.notices)


@pytest.mark.timeout(60)
def test_a_bad_oauth_table_is_an_error_at_its_line(home: Home) -> None:
    home.init('uji.provider.add({ id = "test", oauth = { client_id = "x", token_url = 3 } })\n')
    run = home.run("hi")
    line = home.line_of("oauth = ")
    out = run.stdout + run.stderr
    assert f"init.lua:{line}:" in out and "`oauth.authorize_url` is required" in out


# The keychain ---------------------------------------------------------------------------

FAKE_SECRET_TOOL = """#!{python}
import json, os, sys
store = os.environ["FAKE_KEYRING"]
data = json.load(open(store)) if os.path.exists(store) else {{}}
args = sys.argv[1:]
command, rest = args[0], args[1:]
if command == "store":
    rest = rest[2:]  # --label LABEL
key = "/".join(rest)
if command == "store":
    if os.environ.get("FAKE_KEYRING_REFUSE"):
        sys.exit("the keyring is locked")
    data[key] = sys.stdin.read()
elif command == "lookup":
    if key not in data:
        sys.exit(1)
    sys.stdout.write(data[key])
elif command == "clear":
    data.pop(key, None)
json.dump(data, open(store, "w"))
"""


def keychain_env(home: Home, **extra: str) -> dict[str, str]:
    bin_dir = home.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "secret-tool"
    tool.write_text(FAKE_SECRET_TOOL.format(python=sys.executable))
    tool.chmod(0o755)
    import os

    return {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "FAKE_KEYRING": str(home.root / "keyring.json"),
        **extra,
    }


def no_keychain_env(home: Home) -> dict[str, str]:
    """A PATH with the tools uji uses (git, sh) and no keychain tool, whatever this machine has."""
    import shutil

    bin_dir = home.root / "plain-bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("git", "sh", "bash"):
        found = shutil.which(name)
        if found and not (bin_dir / name).exists():
            (bin_dir / name).symlink_to(found)
    return {"PATH": str(bin_dir)}


KEYCHAIN_LUA = """
uji.auth.configure({ keychain = true })
local ok, err = uji.auth.save_key("test", "sk-kc-1234567")
uji.notify("saved: " .. tostring(ok) .. " " .. tostring(err))
"""


@pytest.mark.timeout(60)
def test_keychain_credentials_are_saved_there_and_used(home: Home) -> None:
    home.init(KEYCHAIN_LUA)
    assert home.fake is not None
    home.fake.script(text("ok"))
    run = home.run("hi", env=keychain_env(home), check=True)
    assert "saved: true nil" in run.notices
    ring = json.loads((home.root / "keyring.json").read_text())
    assert json.loads(ring["service/uji/account/test"]) == {"type": "api_key", "key": "sk-kc-1234567"}
    assert not (home.data / "auth.toml").exists()
    assert home.fake.turn_requests[0].headers["authorization"] == "Bearer sk-kc-1234567"
    nowhere_else(home, run.stdout, "sk-kc-1234567")


@pytest.mark.timeout(60)
def test_a_keychain_that_refuses_leaves_the_key_in_auth_toml(home: Home) -> None:
    home.init(KEYCHAIN_LUA)
    assert home.fake is not None
    home.fake.script(text("ok"))
    run = home.run("hi", env=keychain_env(home, FAKE_KEYRING_REFUSE="1"), check=True)
    assert "saved: true nil" in run.notices
    assert saved(home)["test"] == {"type": "api_key", "key": "sk-kc-1234567"}
    assert home.fake.turn_requests[0].headers["authorization"] == "Bearer sk-kc-1234567"


@pytest.mark.timeout(60)
def test_without_a_keychain_configure_says_so_and_keys_stay_in_the_file(home: Home) -> None:
    home.init(KEYCHAIN_LUA)
    assert home.fake is not None
    home.fake.script(text("ok"))
    run = home.run("hi", env=no_keychain_env(home), check=True)
    line = home.line_of("keychain = true")
    assert any(
        f"init.lua:{line}: uji.auth.configure: no system keychain here" in n and "auth.toml" in n
        for n in run.notices
    )
    assert saved(home)["test"] == {"type": "api_key", "key": "sk-kc-1234567"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("opts", "error"),
    [("{ keychain = 1 }", "keychain must be a boolean"), ("{ vault = true }", "unknown key vault")],
)
def test_configure_checks_its_table(home: Home, opts: str, error: str) -> None:
    home.init(f"uji.auth.configure({opts})\n")
    run = home.run("hi")
    line = home.line_of("uji.auth.configure")
    out = run.stdout + run.stderr
    assert f"init.lua:{line}: uji.auth.configure: {error}" in out


@pytest.mark.timeout(60)
def test_uji_keychain_get_set_delete_through_the_same_tool(home: Home) -> None:
    home.init(
        """
        uji.notify("set: " .. tostring(uji.keychain.set("svc", "me", "s3cret-value")))
        uji.notify("get: " .. tostring(uji.keychain.get("svc", "me")))
        uji.notify("delete: " .. tostring(uji.keychain.delete("svc", "me")))
        uji.notify("gone: " .. tostring(uji.keychain.get("svc", "me")))
        """
    )
    run = home.run("hi", env=keychain_env(home), check=True)
    assert [n for n in run.notices if n.split(":")[0] in ("set", "get", "delete", "gone")] == [
        "set: true",
        "get: s3cret-value",
        "delete: true",
        "gone: nil",
    ]
    home.init('local ok, err = uji.keychain.get("svc", "me")\nuji.notify("none: " .. tostring(err))\n')
    run = home.run("hi", env=no_keychain_env(home), check=True)
    assert any(n.startswith("none: no system keychain here") for n in run.notices)


@pytest.mark.timeout(60)
def test_every_string_of_a_keychain_credential_is_cut_from_tool_results(home: Home) -> None:
    """A credential another program saved may hold fields uji does not use: they are
    secrets all the same (uji.tools.secrets cuts what the keychain gave, not only what uji
    reads of it)."""
    stored = {"type": "api_key", "key": "sk-kc-7654321", "account_token": "acct-secret-9999"}
    (home.root / "keyring.json").write_text(json.dumps({"service/uji/account/test": json.dumps(stored)}))
    (home.work / "notes.txt").write_text("token acct-secret-9999 here\n")
    home.init("uji.auth.configure({ keychain = true })\n")
    assert home.fake is not None
    home.fake.script(tool_call("run_command", {"command": "cat notes.txt"}), text("ok"))
    run = home.run("hi", env=keychain_env(home), check=True)
    assert home.fake.turn_requests[0].headers["authorization"] == "Bearer sk-kc-7654321"
    result = home.fake.turn_requests[1].body["messages"][-1]["content"]
    assert "token [redacted keychain credential] here" in result
    (home.work / "notes.txt").unlink()  # the file it was in: nowhere else
    nowhere_else(home, run.stdout, "acct-secret-9999")
