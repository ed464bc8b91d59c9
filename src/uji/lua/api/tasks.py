"""uji.task.spawn/race/timeout, uji.sleep and uji.promise: the original's task runtime on
the Lua driver (uji.lua.runtime).

A task is an asyncio task running a Lua coroutine; Lua holds it as an opaque handle. What
a task's function returns stays on the Lua side (tasks.lua keeps it in the task's table),
so nothing here converts Lua values: Python only knows when a task has ended.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, Pending

if TYPE_CHECKING:
    from uji.lua.host import LuaHost


def install(host: LuaHost) -> Api:
    def task_spawn(fn: Any) -> asyncio.Task[Any]:
        # Starts when the current Lua code waits (create_task runs it on the next turn
        # of the loop); its errors become notices.
        return host.lua.spawn(fn, on_error=host.notice)

    def task_cancel(task: asyncio.Task[Any]) -> None:
        task.cancel()

    def task_race(*tasks: asyncio.Task[Any]) -> Pending:
        return Pending(_race(list(tasks)))

    def task_timeout(seconds: float, task: asyncio.Task[Any]) -> Pending:
        return Pending(_within(seconds, task))

    def sleep(seconds: float) -> Pending:
        if math.isinf(seconds):
            return Pending(asyncio.get_running_loop().create_future())  # until cancelled
        return Pending(_sleep(seconds))

    def promise_new() -> asyncio.Future[None]:
        return asyncio.get_running_loop().create_future()

    def promise_settle(future: asyncio.Future[None]) -> None:
        if not future.done():
            future.set_result(None)

    def promise_wait(future: asyncio.Future[None]) -> Pending:
        # shield: a waiter that is cancelled must not cancel the promise for the others.
        return Pending(_shielded(future))

    return {
        "task_spawn": task_spawn,
        "task_cancel": task_cancel,
        "task_race": task_race,
        "task_timeout": task_timeout,
        "sleep": sleep,
        "promise_new": promise_new,
        "promise_settle": promise_settle,
        "promise_wait": promise_wait,
    }


async def _sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def _shielded(future: Awaitable[None]) -> None:
    await asyncio.shield(future)


async def _race(tasks: list[asyncio.Task[Any]]) -> int:
    """The position (from 1) of the first task to end; the others are cancelled, and all
    of them are when the waiting task is."""
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        return next(i for i, t in enumerate(tasks, 1) if t in done)
    finally:
        for t in tasks:
            t.cancel()


async def _within(seconds: float, task: asyncio.Task[Any]) -> bool:
    """Whether `task` ended within `seconds`; it is cancelled otherwise (and when the
    waiting task is)."""
    try:
        done, _ = await asyncio.wait([task], timeout=None if math.isinf(seconds) else seconds)
        return bool(done)
    finally:
        task.cancel()
