"""uji.job.start through real Lua and real processes: line callbacks, exit codes and
reasons, stdin, stopping the whole process group, spawn failures, argument errors."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.waiting import DEADLINE, alive
from uji.app import App
from uji.lua.runtime import LuaError
from uji.paths import resolve

# Every callback turns into a notice: "out:LINE", "err:LINE", "exit:CODE:REASON".
LOG = """
local function log(prefix) return function(...) uji.notify(prefix .. table.concat({...}, ':')) end end
CB = { on_stdout = log('out:'), on_stderr = log('err:'), on_exit = log('exit:') }
function spec(t) for k, v in pairs(CB) do if t[k] == nil then t[k] = v end end return t end
"""


@pytest.fixture
def app(tmp_path: Path) -> App:
    notices: list[str] = []
    (tmp_path / "work" / "sub").mkdir(parents=True)
    paths = resolve(str(tmp_path / "cfg"), str(tmp_path / "data"))
    a = App(paths, cwd=str(tmp_path / "work"), notice=notices.append)
    a.notices = notices  # type: ignore[attr-defined]
    return a


async def lua(app: App, source: str) -> tuple:
    rt = app.lua
    return await rt.call(rt.load_source(LOG + source, "/cfg/test.lua"))


def notices(app: App) -> list[str]:
    return app.notices  # type: ignore[attr-defined]


async def until(check: Callable[[], bool], timeout: float = DEADLINE) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.005)


async def exited(app: App) -> list[str]:
    await until(lambda: any(n.startswith("exit:") for n in notices(app)))
    return notices(app)


async def test_shell_command_lines_and_exit_code(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'echo one; echo two; echo oops >&2; printf last; exit 3' })")
    log = await exited(app)
    assert [n for n in log if n.startswith("out:")] == ["out:one", "out:two", "out:last"]
    assert "err:oops" in log
    assert log[-1] == "exit:3"


async def test_argv_list_skips_the_shell(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = { 'printf', '%s\\n', 'a b;c', '$HOME' } })")
    assert await exited(app) == ["out:a b;c", "out:$HOME", "exit:0"]


async def test_cwd_is_relative_to_the_working_directory(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'pwd', cwd = 'sub' })")
    assert await exited(app) == [f"out:{app.cwd}/sub", "exit:0"]


async def test_many_lines_arrive_in_order_before_the_exit(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'seq 1 2000' })")
    log = await exited(app)
    assert log == [f"out:{i}" for i in range(1, 2001)] + ["exit:0"]


async def test_send_and_close_drive_stdin(app: App) -> None:
    await lua(
        app,
        "local j = uji.job.start(spec{ cmd = 'cat' }); j.send('hello'); j:send(42); j.close()\n"
        "uji.notify('after close: ' .. tostring(j.send('late')))",
    )
    log = await exited(app)
    assert log == ["after close: false", "out:hello", "out:42", "exit:0"]


async def test_callbacks_are_tasks_that_may_wait(app: App, tmp_path: Path) -> None:
    (tmp_path / "work" / "note.txt").write_text("from a file")
    await lua(
        app,
        "uji.job.start(spec{ cmd = 'echo go', on_stdout = function(l) uji.notify(l .. ' ' .. uji.fs.read('note.txt')) end })",
    )
    assert await exited(app) == ["go from a file", "exit:0"]


async def test_a_raising_callback_is_a_notice_and_the_job_goes_on(app: App) -> None:
    await lua(
        app, "uji.job.start(spec{ cmd = 'echo a; echo b', on_stdout = function(l) error('bad ' .. l) end })"
    )
    log = await exited(app)
    assert log[-1] == "exit:0"
    assert len(log) == 3 and all("/cfg/test.lua:" in n for n in log[:2])
    assert "bad a" in log[0] and "bad b" in log[1]


async def test_stop_kills_the_whole_process_group(app: App) -> None:
    # The shell starts a grandchild and reports its pid; stop() must take it down too.
    await lua(
        app,
        "local j\n"
        "j = uji.job.start(spec{ cmd = 'sleep 30 & echo $!; wait',"
        " on_stdout = function(l) uji.notify('out:' .. l); j.stop() end })",
    )
    log = await exited(app)
    assert log[-1] == "exit:137:stopped"
    grandchild = int(log[0].removeprefix("out:"))
    await until(lambda: not alive(grandchild))


async def test_timeout_kills_and_says_so(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'sleep 30', timeout = 0.1 })")
    assert await exited(app) == ["exit:137:timeout"]


async def test_stop_returns_false_once_ended(app: App) -> None:
    await lua(app, "J = uji.job.start(spec{ cmd = 'true' })")
    await exited(app)
    (stopped,) = await lua(app, "return J.stop()")
    assert stopped is False


@pytest.mark.parametrize(
    ("cmd", "stderr"),
    [
        ("{ '/nonexistent/prog' }", "err:spawn: /nonexistent/prog: No such file or directory"),
        ("'true', cwd = 'missing'", "err:spawn: {cwd}/missing: No such file or directory"),
    ],
)
async def test_spawn_failure_reports_on_stderr_then_exit_minus_one(app: App, cmd: str, stderr: str) -> None:
    await lua(app, f"uji.job.start(spec{{ cmd = {cmd} }})")
    assert await exited(app) == [stderr.format(cwd=app.cwd), "exit:-1"]


async def test_close_of_the_app_kills_running_jobs(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'echo $$; exec sleep 30' })")
    await until(lambda: bool(notices(app)))
    pid = int(notices(app)[0].removeprefix("out:"))
    assert alive(pid)
    await app.close()
    await until(lambda: not alive(pid))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("{}", "uji.job.start: `cmd` is required: a shell command string or a list of arguments"),
        ("{ cmd = '  ' }", "uji.job.start: `cmd` is empty"),
        ("{ cmd = {} }", "uji.job.start: `cmd` is an empty list"),
        ("{ cmd = { 'ls', 1 } }", "uji.job.start: `cmd` entry 2 is not a string"),
        ("{ cmd = 'ls', timeout = -1 }", "uji.job.start: `timeout` must be a number of seconds > 0"),
        ("{ cmd = 'ls', on_exit = 'x' }", "uji.job.start: `on_exit` must be a function"),
        ("'ls'", "uji.job.start expects a table {cmd = ..., on_stdout = ..., ...}"),
    ],
)
async def test_bad_arguments_raise_at_the_callers_line(app: App, args: str, message: str) -> None:
    with pytest.raises(LuaError) as err:
        await lua(app, f"\nuji.job.start({args})")
    line = LOG.count("\n") + 2
    assert str(err.value) == f"/cfg/test.lua:{line}: {message}"


def pgid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[2])


async def test_nothing_is_left_running(app: App) -> None:
    await lua(app, "uji.job.start(spec{ cmd = 'exit 0' })")
    await exited(app)
    await until(lambda: not [t for t in app.lua.tasks if not t.done()])
    assert os.getpgrp() != 0  # the test process kept its own group


async def test_a_job_is_its_own_process_group_and_dies_as_one(app: App) -> None:
    await lua(app, "J = uji.job.start(spec{ cmd = 'sleep 30 & echo $$ $!; wait' })")
    await until(lambda: bool(notices(app)))
    shell, grandchild = map(int, notices(app)[0].removeprefix("out:").split())
    # The job leads a group of its own, apart from uji's (so a signal to uji's group does
    # not reach it), and what it starts is in that group.
    assert pgid(shell) == shell != os.getpgrp()
    assert pgid(grandchild) == shell
    await lua(app, "J.stop()")
    assert (await exited(app))[-1] == "exit:137:stopped"
    await until(lambda: not alive(shell) and not alive(grandchild))
    await until(lambda: not [t for t in app.lua.tasks if not t.done()])


async def test_callbacks_outlive_the_task_that_started_the_job(app: App) -> None:
    # lupa ties a Lua value to the coroutine it crossed in; a kept callback freed after
    # Lua collected that coroutine used to crash the process (see Anchor in api/fs.py).
    await lua(app, "J = uji.job.start(spec{ cmd = 'seq 1 50' })")
    await exited(app)
    await lua(app, "collectgarbage(); collectgarbage()")  # the starting coroutine goes
    await lua(app, "J = nil; collectgarbage(); collectgarbage()")  # then the job and its callbacks
    gc.collect()
    await lua(app, "uji.job.start(spec{ cmd = 'echo still here' })")
    await until(lambda: "out:still here" in notices(app))
