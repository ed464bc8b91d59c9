"""A config written for the original uji loads as it is: its missing functions become
notices naming them and their line, and what the file sets after them takes effect."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import PROVIDER_LUA, Home
from tests.fakes.openai_server import call, text, tool_calls


def original_init(home: Home, middle: str) -> None:
    """`middle`, then (after it) a provider and a policy rule that deny `rm *`."""
    assert home.fake is not None
    provider = PROVIDER_LUA.format(base_url=home.fake.base_url)
    (home.config / "init.lua").write_text(
        f"{middle}\nuji.tool.policy({{ run_command = {{ deny = {{ 'touch *' }} }} }})\n{provider}"
    )


def test_a_missing_function_is_a_notice_naming_it_and_its_line_and_the_file_goes_on(home: Home) -> None:
    assert home.fake is not None
    original_init(
        home,
        "local r = uji.frobnicate.widget({ size = 3 })\nuji.ui.sparkle('x')\nlocal nested = uji.a.b.c()\n",
    )
    home.fake.script(tool_calls(call("run_command", {"command": "touch marker"})), text("ok"))
    run = home.run("go")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    assert f"{init}:1: uji.frobnicate.widget is not supported yet; the call did nothing" in run.notices
    assert f"{init}:2: uji.ui.sparkle is not supported yet; the call did nothing" in run.notices
    assert f"{init}:3: uji.a.b.c is not supported yet; the call did nothing" in run.notices
    # The policy after those lines holds, and the provider after it answered.
    assert [c["decision"] for c in run.calls] == ["deny"]
    assert not (home.work / "marker").exists()
    assert len(home.fake.requests) == 2  # the call, then its denial sent back


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def source_repo(root: Path, greeting: str) -> tuple[Path, str]:
    """A plugin repository with lua/hello.lua, served over file://; its commit."""
    repo = root / "src" / "hello"
    (repo / "lua").mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    return repo, commit(repo, greeting)


def commit(repo: Path, greeting: str) -> str:
    (repo / "lua" / "hello.lua").write_text(f"return {{ greeting = {greeting!r} }}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", greeting)
    return git(repo, "rev-parse", "HEAD")


PACK_INIT = """
uji.pack.add({{ "{url}", {{ url = "file:///nonexistent/missing.git", name = "gone" }} }})
uji.notify("greeting: " .. require("hello").greeting)
uji.notify("roots: " .. table.concat(uji.pack.list(), ","))
"""


def test_a_pack_is_cloned_put_on_the_lua_path_and_pinned_until_sync(home: Home) -> None:
    assert home.fake is not None
    repo, first = source_repo(home.root, "first")
    home.init(PACK_INIT.format(url=f"file://{repo}"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    site = home.data / "site" / "hello"
    assert "greeting: first" in run.notices
    assert f"roots: {home.config},{site}" in run.notices
    # The pack that cannot be fetched is a notice; the config went on past it.
    assert [n for n in run.notices if n.startswith("uji.pack.add: ")] == [
        "uji.pack.add: pack gone: git clone failed: "
        "fatal: '/nonexistent/missing.git' does not appear to be a git repository"
    ]
    lock = json.loads((home.config / "uji-lock.json").read_text())
    assert lock == {"hello": {"url": f"file://{repo}", "rev": first}}

    # A new commit upstream is not taken at start-up: the lock holds.
    second = commit(repo, "second")
    run = home.run("hi")
    assert "greeting: first" in run.notices
    assert json.loads((home.config / "uji-lock.json").read_text())["hello"]["rev"] == first

    # /sync takes it and rewrites the lock.
    run = home.run("/sync")
    assert run.rc == 0, run.stderr
    assert any(f"hello: {first[:12]} -> {second[:12]}" in n for n in run.notices), run.notices
    assert json.loads((home.config / "uji-lock.json").read_text())["hello"]["rev"] == second
    run = home.run("hi")
    assert "greeting: second" in run.notices


def test_a_fresh_clone_checks_out_the_locked_commit(home: Home) -> None:
    repo, first = source_repo(home.root, "first")
    commit(repo, "second")
    url = f"file://{repo}"
    (home.config / "uji-lock.json").write_text(json.dumps({"hello": {"url": url, "rev": first}}))
    home.init(PACK_INIT.format(url=url))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert "greeting: first" in run.notices
    assert git(home.data / "site" / "hello", "rev-parse", "HEAD") == first


def test_config_files_and_data(home: Home) -> None:
    (home.config / "agents").mkdir()
    (home.config / "agents" / "b.md").write_text("bee")
    (home.config / "agents" / "a.md").write_text("ay")
    (home.config / "agents" / "sub").mkdir()
    (home.work / ".uji" / "agents").mkdir(parents=True)
    (home.work / ".uji" / "agents" / "p.md").write_text("proj")
    home.init(
        """
        for _, f in ipairs(uji.config.files("agents", { project = true })) do
          uji.notify(f.name .. "=" .. f.text .. (f.project and " project" or ""))
        end
        uji.notify("user only: " .. #uji.config.files("agents"))
        uji.data.write("notes.txt", "kept")
        uji.notify("read: " .. uji.data.read("notes.txt") .. " " .. tostring(uji.data.read("none")))
        uji.notify("dirs: " .. uji.config.dir .. " " .. uji.data.dir)
        local ok, err = pcall(uji.config.files, "../x")
        uji.notify(err)
        ok, err = pcall(uji.data.write, "a/b", "x")
        uji.notify(err)
        """
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    notices = run.notices
    assert notices[:3] == ["a.md=ay", "b.md=bee", "p.md=proj project"]
    assert "user only: 2" in notices
    assert "read: kept nil" in notices
    assert f"dirs: {home.config} {home.data}" in notices
    assert (home.data / "notes.txt").read_text() == "kept"
    assert (home.data / "notes.txt").stat().st_mode & 0o777 == 0o600
    init = home.config / "init.lua"
    line = home.line_of("../x")
    assert any(n.startswith(f"{init}:{line}: uji.config.files: '../x' must be a folder") for n in notices)
    assert any("uji.data.write: 'a/b' must be a plain file name" in n for n in notices)


ORIGINAL = """
require("uji.builtin.defaults")
uji.pack.add({{ "{url}" }})
uji.action.add("greet", function() uji.notify("hello from an action") end)
uji.keymap.add("normal", "<C-g>", "greet")
uji.keymap.add("normal", "<C-y>", {{ action = "greet" }})
local choice = uji.ui.pick({{ title = "Theme", items = {{ "dark", "light" }}, preview = function() return {{}} end }})
uji.notify("picked: " .. tostring(choice))
uji.theme.set("gruvbox")
uji.notify("actions: " .. table.concat(uji.action.list(), ","))
for _, row in ipairs(uji.keymap.list()) do
  if row.key == "<C-g>" or row.key == "<C-y>" then uji.notify("bound " .. row.key .. " " .. row.action) end
end
local ok, err = pcall(uji.action.add, "quit", function() end)
uji.notify(err)
ok, err = pcall(uji.keymap.add, "normal", "<C-t>", "nope")
uji.notify("unknown: " .. tostring(ok))
uji.notify("removed: " .. tostring(uji.action.remove("greet")) .. " " .. tostring(uji.action.remove("greet")))
uji.action.add("greet", function() end)
uji.tool.policy({{ run_command = {{ deny = {{ "touch *" }} }} }})
{provider}
"""


def test_an_original_init_lua_loads_fully(home: Home) -> None:
    assert home.fake is not None
    repo, _ = source_repo(home.root, "first")
    (home.config / "init.lua").write_text(
        ORIGINAL.format(url=f"file://{repo}", provider=PROVIDER_LUA.format(base_url=home.fake.base_url))
    )
    home.fake.script(tool_calls(call("run_command", {"command": "touch marker"})), text("ok"))
    run = home.run("go")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    notices = run.notices
    assert "uji.ui.pick: no screen to ask on" in notices
    assert "picked: nil" in notices
    assert (
        f"{init}:{home.line_of('uji.theme.set')}: uji.theme.set is not supported yet; the call did nothing"
        in notices
    )
    actions = next(n for n in notices if n.startswith("actions: ")).removeprefix("actions: ").split(",")
    assert "greet" in actions and "quit" in actions and actions == sorted(actions)
    assert "bound <C-g> greet" in notices
    assert "bound <C-y> greet" in notices
    assert any(f"{init}:" in n and "uji.action.add: 'quit' is a built-in action" in n for n in notices)
    assert "unknown: false" in notices
    assert "removed: true false" in notices
    # What the file set after all of that holds: the pack, the policy and the provider.
    assert (home.data / "site" / "hello" / "lua" / "hello.lua").exists()
    assert [c["decision"] for c in run.calls] == ["deny"]
    assert not (home.work / "marker").exists()


def test_quit_from_the_config_ends_uji_run_cleanly_without_a_turn(home: Home) -> None:
    assert home.fake is not None
    home.init('uji.quit()\nuji.notify("after quit")\n')
    run = home.run("go")
    assert run.rc == 0, run.stderr
    assert "after quit" in run.notices  # the rest of the file still ran
    assert home.fake.requests == []  # but no prompt went to the model


def test_reload_from_the_config_reads_it_again_once(home: Home) -> None:
    assert home.fake is not None
    count = home.root / "count"
    home.init(
        f"""
        local f = io.open({str(count)!r}, "a"); f:write("x"); f:close()
        uji.reload()
        """
    )
    home.fake.script(text("ok"))
    run = home.run("go")
    assert run.rc == 0, run.stderr
    assert count.read_text() == "xx"  # read twice, not more
    assert "uji.reload: the config was read again once already in this run" in run.notices
    assert len(home.fake.requests) == 1


def test_diagnostics_keep_what_went_wrong_without_secrets(home: Home) -> None:
    secret = "sk-diag-0123456789abcdef0123456789"
    home.init(
        """
        uji.provider.add({ id = "k", name = "K", wire = "openai-chat", base_url = "http://127.0.0.1:9",
          auth_env = { "UJI_DIAG_KEY" }, models = { "m" } })
        uji.not_here(1)
        error("the key is " .. os.getenv("UJI_DIAG_KEY"))
        """,
        provider=False,
    )
    run = home.run("/diagnostics", env={"UJI_DIAG_KEY": secret})
    assert run.rc == 0, run.stderr
    log = (home.data / "diagnostics.log").read_text()
    assert secret not in log
    assert "[redacted UJI_DIAG_KEY]" in log
    assert f"{home.config / 'init.lua'}:4: uji.not_here is not supported yet" in log
    # The next run lists them, newest first, in /diagnostics and in uji.diagnostics.list().
    home.init(
        """
        local rows = uji.diagnostics.list()
        uji.notify("newest: " .. rows[1].source .. " " .. rows[1].text)
        uji.notify("time: " .. tostring(rows[1].time:match("^%d%d%d%d%-%d%d%-%d%d %d%d:%d%d:%d%d$") ~= nil))
        """,
        provider=False,
    )
    run = home.run("/diagnostics")
    assert run.rc == 0, run.stderr
    assert "time: true" in run.notices
    newest = next(n for n in run.notices if n.startswith("newest: "))
    assert newest.startswith("newest: lua ") and "the key is [redacted UJI_DIAG_KEY]" in newest
    shown = next(n for n in run.notices if n.startswith("diagnostics, newest first"))
    assert shown.index("the key is") < shown.index("uji.not_here is not supported yet")
    assert secret not in run.stdout
