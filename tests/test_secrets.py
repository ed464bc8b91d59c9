"""Keys: auth.toml (0600, refused when wider, atomic), `auth_env`, `uji.auth`, and a
planted key that must never show up in the session database, the output, a notice, a
JSON event or an error message, even when the server echoes it back."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes import anthropic_server, gemini_server, openai_server
from tests.fakes.openai_server import call, text, tool_call, tool_calls
from uji.app import App
from uji.paths import resolve
from uji.providers.auth import (
    AuthError,
    authenticated,
    dumps,
    find_key,
    save_key,
    saved_key,
)
from uji.providers.catalog import Provider

PLANTED = "sk-test-PLANTED-123"


# --------------------------------------------------------------------------- the planted key, end to end


@pytest.fixture(params=["openai-chat", "anthropic", "gemini"])
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def server(wire: str) -> Iterator[Any]:
    kind = {
        "openai-chat": openai_server.FakeOpenAI,
        "anthropic": anthropic_server.FakeAnthropic,
        "gemini": gemini_server.FakeGemini,
    }[wire]
    with kind() as fake:
        yield fake


ECHO = {
    "openai-chat": f"Authorization: Bearer {PLANTED}",
    "anthropic": f"x-api-key: {PLANTED}",
    "gemini": f"x-goog-api-key: {PLANTED}",
}


def leaks(home: Home, *texts: str) -> list[str]:
    """Where the key shows up: the given texts, or any file uji wrote (the database and
    its WAL included) other than auth.toml, which is where a saved key belongs."""
    found = [f"output {i}" for i, t in enumerate(texts) if PLANTED in t]
    for path in home.data.rglob("*"):
        if path.is_file() and path.name != "auth.toml" and PLANTED.encode() in path.read_bytes():
            found.append(str(path))
    return found


def test_a_planted_key_never_leaks(home: Home, wire: str, server: Any) -> None:
    fakes = {"openai-chat": openai_server, "anthropic": anthropic_server, "gemini": gemini_server}[wire]
    # The key comes from auth.toml (saved by the config through uji.auth) for anthropic,
    # and from the provider's auth_env variable for the other two.
    save = f'assert(uji.auth.save_key("p", "{PLANTED}"))' if wire == "anthropic" else ""
    home.init(
        f"""
        uji.provider.add({{ id = "p", name = "P", wire = "{wire}", base_url = "{server.base_url}",
          auth_env = {{ "UJI_SECRET_KEY" }}, models = {{ "m" }} }})
        uji.model.use({{ provider = "p", model = "m" }})
        {save}
        uji.notify("authenticated: " .. tostring(uji.auth.authenticated("p")))
        """,
        provider=False,
    )
    env = {} if wire == "anthropic" else {"UJI_SECRET_KEY": PLANTED}
    (home.work / "a.txt").write_text("alpha\n")
    server.script(fakes.tool_call("read_file", {"path": "a.txt"}), fakes.text("fine"))
    ok = home.run("read it", env=env)
    assert ok.rc == 0, ok.stderr
    assert "authenticated: true" in ok.notices
    # The key did go to the server, in the API's header.
    header = {"openai-chat": "authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}[wire]
    assert PLANTED in server.turn_requests[0].headers[header]

    # Now every attempt fails with a body that echoes the key back.
    echo = {"error": {"message": f"internal error; request headers were {ECHO[wire]}"}}
    server.script(*[fakes.status(500, echo, {"retry-after": "0"}) for _ in range(6)])
    bad = home.run("again", env=env)
    assert bad.rc == 1
    assert "[redacted]" in bad.done["error"] and len(bad.notices) >= 5
    assert leaks(home, ok.stdout, ok.stderr, bad.stdout, bad.stderr) == []
    assert (home.data / "uji.db").exists()


def test_a_world_readable_auth_toml_is_refused(home: Home) -> None:
    auth = home.data / "auth.toml"
    auth.write_text(f'[test]\ntype = "api_key"\nkey = "{PLANTED}"\n')
    auth.chmod(0o644)
    home.init("")
    run = home.run("hi")
    assert run.rc == 1
    assert f"run `chmod 600 {auth}` so uji will use it" in run.stderr
    assert PLANTED not in run.stdout + run.stderr


# --------------------------------------------------------------------------- auth.toml


def provider(env: list[str] | None = None) -> Provider:
    return Provider("p", "P", "openai-chat", "http://x", auth_env=env or ["UJI_T_KEY", "UJI_T_KEY2"])


def test_save_key_creates_the_file_0600_even_with_a_wide_umask(tmp_path: Path) -> None:
    path = tmp_path / "data" / "auth.toml"
    old = os.umask(0)
    try:
        save_key(str(path), "p", PLANTED)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert tomllib.loads(path.read_text()) == {"p": {"type": "api_key", "key": PLANTED}}
    assert saved_key(str(path), "p") == PLANTED


def test_the_key_is_never_readable_by_others_while_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real = os.replace

    def spy(src: Any, dst: Any) -> None:
        seen.append(stat.S_IMODE(os.stat(src).st_mode))
        assert Path(src).parent == Path(dst).parent  # same directory: the rename is atomic
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    path = tmp_path / "auth.toml"
    save_key(str(path), "a", "k1")
    save_key(str(path), "b", "k2")
    assert seen == [0o600, 0o600]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["auth.toml"]  # no temp file left


def test_save_key_keeps_the_other_entries(tmp_path: Path) -> None:
    path = tmp_path / "auth.toml"
    path.write_text(
        'plain = "sk-bare"\n\n[oauthy]\ntype = "oauth"\naccess = "a"\nexpires = 1700000000\n'
        'scopes = ["x", "y"]\n\n[oauthy.extra]\nok = true\n\n[old]\ntype = "api_key"\nkey = "before"\n'
    )
    path.chmod(0o600)
    save_key(str(path), "old", "after")
    data = tomllib.loads(path.read_text())
    assert data == {
        "plain": "sk-bare",
        "oauthy": {
            "type": "oauth",
            "access": "a",
            "expires": 1700000000,
            "scopes": ["x", "y"],
            "extra": {"ok": True},
        },
        "old": {"type": "api_key", "key": "after"},
    }
    assert saved_key(str(path), "plain") == "sk-bare"  # a bare string means an API key


def test_the_writer_round_trips_awkward_strings() -> None:
    data = {
        "weird id.with dots": {"type": "api_key", "key": 'q"uote\\back\nnew\ttab\x7fdel\x01ünï'},
        "n": {"f": 1.5, "inf": float("inf"), "list": [{"a": 1}, "b"]},
    }
    assert tomllib.loads(dumps(data)) == data


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_wider_mode_is_refused_with_the_fix(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "auth.toml"
    path.write_text('[p]\ntype = "api_key"\nkey = "k"\n')
    path.chmod(mode)
    with pytest.raises(AuthError, match=rf"run `chmod 600 {path}` so uji will use it"):
        find_key(str(path), provider())
    with pytest.raises(AuthError, match="chmod 600"):
        save_key(str(path), "p", "new")  # nor is a key added to it
    assert "new" not in path.read_text()


def test_a_saved_key_wins_and_an_empty_variable_is_unset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(tmp_path / "auth.toml")
    monkeypatch.setenv("UJI_T_KEY", "")
    monkeypatch.setenv("UJI_T_KEY2", "from-env-2")
    assert find_key(path, provider()) == "from-env-2"  # the empty first one is skipped
    monkeypatch.setenv("UJI_T_KEY2", "")
    assert find_key(path, provider()) is None
    assert authenticated(path, provider()) is False
    monkeypatch.setenv("UJI_T_KEY", "from-env")
    assert find_key(path, provider()) == "from-env"
    save_key(path, "p", "saved")
    assert find_key(path, provider()) == "saved"
    assert authenticated(path, provider()) is True


def test_an_empty_key_is_not_saved(tmp_path: Path) -> None:
    with pytest.raises(AuthError):
        save_key(str(tmp_path / "auth.toml"), "p", "")


# --------------------------------------------------------------------------- uji.auth


@pytest.fixture
def app(tmp_path: Path) -> App:
    return App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path))


async def lua(app: App, source: str) -> tuple[Any, ...]:
    rt = app.lua
    return tuple(await rt.call(rt.load_source(source, "/cfg/init.lua")))


async def test_uji_auth_save_key_and_authenticated(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before, saved, after = await lua(
        app,
        'local a = uji.auth.authenticated("openai")\n'
        'local ok = uji.auth.save_key("openai", "sk-lua")\n'
        'return a, ok, uji.auth.authenticated("openai")',
    )
    assert (before, saved, after) == (False, True, True)
    assert saved_key(app.paths.auth_file, "openai") == "sk-lua"


async def test_uji_auth_returns_nil_err_when_the_file_cannot_be_used(app: App) -> None:
    os.makedirs(app.paths.data, exist_ok=True)
    Path(app.paths.auth_file).write_text("")
    os.chmod(app.paths.auth_file, 0o644)
    ok, err = await lua(app, 'return uji.auth.save_key("openai", "sk-x")')
    assert ok is None and "chmod 600" in err


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('uji.auth.save_key("nope", "k")', "uji.auth.save_key: unknown provider 'nope'"),
        ('uji.auth.save_key("openai", "")', "uji.auth.save_key: the key must be a non-empty string"),
        ('uji.auth.save_key("openai")', "uji.auth.save_key: the key must be a non-empty string"),
        ('uji.auth.authenticated("nope")', "uji.auth.authenticated: unknown provider 'nope'"),
        ("uji.auth.authenticated(3)", "uji.auth.authenticated expects a provider id"),
    ],
)
async def test_uji_auth_raises_at_the_callers_line(app: App, code: str, message: str) -> None:
    from uji.lua.runtime import LuaError

    with pytest.raises(LuaError) as e:
        await lua(app, f"local x = 1\n{code}")
    assert str(e.value) == f"/cfg/init.lua:2: {message}"


# --------------------------------------------------------------------------- tool output


ENV_KEY = "sk-env-PLANTED-0123456789abcdef"
SAVED_KEY = "sk-ant-SAVED-fedcba9876543210"

# An after_tool hook writes down every result it sees and copies each overflow file while
# it still exists (uji deletes them at exit), so the test can grep them afterwards.
HOOK = r"""
uji.on("after_tool", function(e)
  local seen = io.open(WORK .. "/hook-saw.txt", "a")
  seen:write(e.content, "\n")
  seen:close()
  local spill = e.content:match("kept until uji exits%): (%S+)%]")
  if spill then
    local src = io.open(spill, "rb")
    local dst = io.open(WORK .. "/spill-copy.txt", "ab")
    dst:write(src:read("a"))
    src:close()
    dst:close()
  end
end)
"""


def planted_home(home: Home, lua: str = "") -> dict[str, str]:
    """Keys in the environment (OPENAI_API_KEY) and in auth.toml (anthropic); returns the
    environment to run uji with (its temp dir a fresh one, to search afterwards)."""
    auth = home.data / "auth.toml"
    auth.write_text(f'[anthropic]\ntype = "api_key"\nkey = "{SAVED_KEY}"\n')
    auth.chmod(0o600)
    (home.work / "notes.txt").write_text(f"env {ENV_KEY}\nsaved {SAVED_KEY}\n")
    home.init(f'WORK = "{home.work}"\n' + HOOK + lua)
    tmp = home.root / "tmp"
    tmp.mkdir()
    return {"OPENAI_API_KEY": ENV_KEY, "TMPDIR": str(tmp)}


def key_leaks(home: Home, run: Any) -> list[str]:
    """Every place outside auth.toml that holds a planted key."""
    found = []
    texts = {"stdout": run.stdout, "stderr": run.stderr}
    texts.update({f"request {i}": json.dumps(r.body) for i, r in enumerate(home.fake.turn_requests)})
    for where, seen in texts.items():
        found += [f"{where}: {k}" for k in (ENV_KEY, SAVED_KEY) if k in seen]
    for base in (home.data, home.root / "tmp", home.work):
        for path in base.rglob("*"):
            if path.is_file() and path.name not in ("auth.toml", "notes.txt"):
                data = path.read_bytes()
                found += [f"{path}: {k}" for k in (ENV_KEY, SAVED_KEY) if k.encode() in data]
    return found


def test_keys_never_leak_through_tool_results(home: Home) -> None:
    # The layer tested here is the redaction: the sandbox (on by default) would keep
    # auth.toml from being read at all (tests/test_sandbox.py), so it is off.
    env = planted_home(home, 'uji.sandbox.configure{ mode = "off" }\n')
    auth = home.data / "auth.toml"
    home.fake.script(
        tool_calls(
            call("run_command", {"command": "echo $OPENAI_API_KEY"}),
            call("run_command", {"command": "env"}),
            call("run_command", {"command": f"cat {auth}"}),
            call("read_file", {"path": "notes.txt"}),
            call("read_file", {"path": str(auth)}),
            # Over 50 KB of output: the rest goes to an overflow file, keys and all.
            # (One `cat` of 6,000 files rather than 6,000 of two: the same bytes, and no 6,000
            # process starts.)
            call("run_command", {"command": f"cat $(for i in $(seq 3000); do echo notes.txt {auth}; done)"}),
            # uji's own environment still holds the key: the shell's parent is uji.
            call("run_command", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ"}),
        ),
        text("done"),
    )
    # fresh: /proc/PID/environ shows the environment uji was exec'd with.
    run = home.run("leak it", "--on-ask", "allow", env=env, fresh=True)
    assert run.rc == 0, run.stderr
    results = [m["content"] for m in run.tool_results()]
    assert results[0] == "(no output, exit code 0)"  # the variable is not even there
    assert "OPENAI_API_KEY" not in results[1]
    assert "[redacted anthropic key]" in results[2]
    assert "env [redacted OPENAI_API_KEY]" in results[3] and "[redacted anthropic key]" in results[3]
    assert "Full output (its last 50.0MB, kept until uji exits): " in results[5]
    assert "OPENAI_API_KEY=[redacted OPENAI_API_KEY]" in results[6].splitlines()
    copy = home.work / "spill-copy.txt"
    assert copy.stat().st_size > 100_000 and b"[redacted anthropic key]" in copy.read_bytes()
    assert "[redacted OPENAI_API_KEY]" in (home.work / "hook-saw.txt").read_text()
    assert key_leaks(home, run) == []
    # The overflow files are gone once uji has exited.
    assert not list((home.root / "tmp").iterdir())


def test_inherit_keys_passes_them_on_and_redaction_still_holds(home: Home) -> None:
    env = planted_home(home, 'uji.tool.inherit_keys({ "OPENAI_API_KEY" })\n')
    home.fake.script(
        tool_calls(
            call("run_command", {"command": "echo $OPENAI_API_KEY"}),
            call("run_command", {"command": "echo ${#OPENAI_API_KEY}"}),
        ),
        text("done"),
    )
    run = home.run("go", "--on-ask", "allow", env=env)
    assert run.rc == 0, run.stderr
    results = [m["content"] for m in run.tool_results()]
    assert results == ["[redacted OPENAI_API_KEY]", str(len(ENV_KEY))]
    assert key_leaks(home, run) == []


def test_short_values_are_not_redacted(home: Home) -> None:
    env = planted_home(home, "uji.tool.inherit_keys(true)\n")
    env["GROQ_API_KEY"] = "short"  # under 8 characters: redacting it would garble output
    home.fake.script(tool_call("run_command", {"command": "echo $GROQ_API_KEY; echo shorter"}), text("ok"))
    run = home.run("go", "--on-ask", "allow", env=env)
    assert [m["content"] for m in run.tool_results()] == ["short\nshorter"]


@pytest.mark.parametrize(("setting", "seen"), [("", "k="), ("uji.tool.inherit_keys(true)", f"k={ENV_KEY}")])
async def test_lua_jobs_follow_the_same_env_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, seen: str
) -> None:
    import asyncio

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    lines: list[str] = []
    app = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path), notice=lines.append)
    rt = app.lua
    source = (
        setting
        + """
    uji.job.start({ cmd = "echo k=$OPENAI_API_KEY", on_stdout = function(l) uji.notify(l) end,
      on_exit = function() uji.notify("exit") end })
    """
    )
    await rt.call(rt.load_source(source, "/cfg/init.lua"))
    async with asyncio.timeout(10):
        while "exit" not in lines:
            await asyncio.sleep(0.01)
    assert lines == [seen, "exit"]
    await app.close()


async def test_uji_tool_inherit_keys_reads_and_checks_its_argument(app: App) -> None:
    assert await lua(app, "return uji.tool.inherit_keys()") == (False,)
    assert await lua(app, "return uji.tool.inherit_keys(true)") == (True,)
    (names,) = await lua(app, 'return uji.tool.inherit_keys({ "A_KEY", "B_KEY" })')
    assert app.lua.convert.to_python(names) == ["A_KEY", "B_KEY"]
    assert app.gate.inherit_keys == ["A_KEY", "B_KEY"]
    from uji.lua.runtime import LuaError

    with pytest.raises(LuaError, match=r"uji\.tool\.inherit_keys expects true, false, a list"):
        await lua(app, "uji.tool.inherit_keys(3)")


# --------------------------------------------------------------------------- streamed output


SHORT = "sk-nest-0123456789"  # a saved key that begins another saved key
LONG = SHORT + "-TAILPART-abcdef"
STREAM_TEXT = f"before {LONG} middle {SHORT} and sk-nest- almost, {ENV_KEY} end"


def streamed(chunks: list[str]) -> str:
    """The chunks through the stream redaction of run_command's output, as it comes out."""
    from uji.tools.secrets import Redactor

    stream = Redactor({LONG: "[L]", SHORT: "[S]", ENV_KEY: "[E]"}).stream()
    return b"".join([*(stream.feed(c.encode()) for c in chunks), stream.flush()]).decode()


WHOLE = "before [L] middle [S] and sk-nest- almost, [E] end"


def test_a_secret_split_across_two_chunks_is_cut_at_every_split_point() -> None:
    from uji.tools.secrets import Redactor

    # The whole text, cut at once, longest key first (as a tool result is).
    assert Redactor({SHORT: "[S]", LONG: "[L]", ENV_KEY: "[E]"})(STREAM_TEXT) == WHOLE
    for k in range(len(STREAM_TEXT) + 1):
        assert streamed([STREAM_TEXT[:k], STREAM_TEXT[k:]]) == WHOLE, k


def test_nested_secrets_in_three_chunks_leak_no_part_at_any_split() -> None:
    # Where one saved key begins another, the shorter one complete at a chunk's end must not
    # be cut out before the next chunk shows whether the longer one goes on: "-TAILPART"
    # would leak.
    text = f"x {LONG} y"
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            out = streamed([text[:i], text[i:j], text[j:]])
            assert out == "x [L] y", (i, j, out)


def test_a_nested_key_printed_in_two_writes_reaches_nobody(home: Home) -> None:
    # Two saved keys, one the start of the other; the command prints the longer one in two
    # writes, the break just after the shorter one (the pipe reader usually gets two chunks).
    auth = home.data / "auth.toml"
    auth.write_text(
        f'[anthropic]\ntype = "api_key"\nkey = "{LONG}"\n\n[openai]\ntype = "api_key"\nkey = "{SHORT}"\n'
    )
    auth.chmod(0o600)
    (home.work / "k.txt").write_text(LONG)
    home.init("")
    cut = len(SHORT)
    home.fake.script(
        tool_call("run_command", {"command": f"head -c {cut} k.txt; sleep 0.3; tail -c +{cut + 1} k.txt"}),
        text("done"),
    )
    run = home.run("go", "--on-ask", "allow")
    assert run.rc == 0, run.stderr
    (c,) = run.calls
    assert (c["decision"], c["by"]) == ("allow", "auto")
    assert run.tool_results()[0]["content"] == "[redacted anthropic key]"
    sent = json.dumps([r.body for r in home.fake.turn_requests])
    assert "TAILPART" not in sent and SHORT not in sent and "TAILPART" not in run.stdout


@pytest.mark.parametrize(
    ("first", "second"), [("sk-first-1234Z", "Z-second-5678"), ("sk-first-12YZ", "YZ-second-5678")]
)
def test_a_secret_whose_end_begins_another_is_cut_at_every_split_point(first: str, second: str) -> None:
    # The last bytes of one key are the first of another: a chunk ending with the first key
    # holds them back, and the first key must not go out uncut just before them.
    from uji.tools.secrets import Redactor

    text = f"{first}-second-5678 and {first} end"
    redactor = Redactor({first: "[F]", second: "[S]"})
    whole = redactor(text)
    assert whole == "[F][S] and [F] end"  # both keys cut, though they share bytes
    for k in range(len(text) + 1):
        stream = redactor.stream()
        out = b"".join([stream.feed(text[:k].encode()), stream.feed(text[k:].encode()), stream.flush()])
        assert out.decode() == whole, k


def _stream_all(redactor: Any, chunks: list[str]) -> str:
    stream = redactor.stream()
    return b"".join([*(stream.feed(c.encode()) for c in chunks), stream.flush()]).decode()


def test_a_key_inside_a_longer_key_is_not_cut_before_the_longer_one_shows() -> None:
    # The chunk ends "zzabcdefgh": the start of the longer key, holding the whole shorter
    # one. Cutting the shorter one there would send "zz" and "12", the longer key's ends.
    from uji.tools.secrets import Redactor

    redactor = Redactor({"zzabcdefgh12": "[B]", "abcdefgh": "[A]"})
    text = "x zzabcdefgh12 y and abcdefgh"
    for k in range(len(text) + 1):
        assert _stream_all(redactor, [text[:k], text[k:]]) == "x [B] y and [A]", k


def test_generated_keys_streamed_in_two_chunks_match_the_whole_cut() -> None:
    # Keys over a two-letter alphabet overlap, nest and begin one another in every way;
    # each text, cut at every point, must come out as the whole text cut at once. The first
    # case needs the cut moved back twice (one key's start found inside another's).
    import random

    from uji.tools.secrets import Redactor

    cases = [({"bbbabb": "[0]", "baaa": "[1]", "babbb": "[2]"}, "bbbbbbabbbaa")]
    rnd = random.Random(22)
    for _ in range(400):
        keys = {"".join(rnd.choice("ab") for _ in range(rnd.randint(3, 7))): f"[{i}]" for i in range(3)}
        cases.append((keys, "".join(rnd.choice("ab") for _ in range(rnd.randint(4, 14)))))
    for keys, said in cases:
        redactor = Redactor(keys)
        whole = redactor(said)
        for k in range(len(said) + 1):
            assert _stream_all(redactor, [said[:k], said[k:]]) == whole, (keys, said, k)


def test_a_chunk_goes_on_at_once_up_to_what_could_begin_a_key() -> None:
    # Only a chunk's end that is the start of a longer key waits for the next chunk: plain
    # output and a whole key that begins no other go out, cut, as soon as they are read.
    from uji.tools.secrets import Redactor

    stream = Redactor({"sk-alone-12345": "[A]", "sk-nest-0123456789": "[N]"}).stream()
    assert stream.feed(b"plain line\n") == b"plain line\n"
    assert stream.feed(b"key sk-alone-12345") == b"key [A]"
    assert stream.feed(b" then sk-ne") == b" then "
    assert stream.feed(b"st-0123456789") == b"[N]"
    assert stream.flush() == b""
