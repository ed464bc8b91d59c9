"""uji.ui: select, prompt, confirm, toggle_thinking, size — through the UI port.

The questions return `Pending` so the calling Lua task waits for the answer. When the
port has nobody to ask (no screen) they give nil at once and say so in a notice,
rather than hanging a headless run on a question nobody can answer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from uji.lua.api.fs import later
from uji.lua.runtime import ApiError, Pending
from uji.ui.port import Deferred

if TYPE_CHECKING:
    from uji.lua.runtime import Runtime
    from uji.ui.port import Ui

NO_SCREEN = "no screen to ask on"
T = TypeVar("T")


def install(ui: Ui, lua: Callable[[], Runtime]) -> dict[str, Callable[..., Any]]:
    return {**_questions_api(ui, lua), **_screen_api(ui, lua)}


def _asked(ui: Ui, answer: Awaitable[T] | None, fname: str) -> Awaitable[T] | None:
    """The port's answer to come, or None (said in a notice) when nobody can be asked."""
    if answer is None:
        ui.notice(f"{fname}: {NO_SCREEN}")
    return answer


def _questions_api(ui: Ui, lua: Callable[[], Runtime]) -> dict[str, Callable[..., Any]]:
    """uji.ui.select, pick, prompt, confirm: a question on the screen, its answer pending."""

    def ui_select(title: str, labels: Any, current: int | None, fname: str | None = None) -> Pending | None:
        items = [str(x) for x in lua().convert.to_python(labels)]
        answer = _asked(
            ui, ui.select(title, items, current - 1 if current else None), fname or "uji.ui.select"
        )
        if answer is None:
            return None

        async def ask(answer: Awaitable[int | None]) -> int | None:
            index = await answer
            return None if index is None else index + 1  # Lua counts from 1

        return Pending(Deferred(ask, answer))

    def ui_prompt(title: str, value: str, hidden: bool) -> Pending | None:
        answer = _asked(ui, ui.prompt(title, value, hidden), "uji.ui.prompt")
        return None if answer is None else Pending(answer)

    def ui_confirm(title: str, body: str, timeout: float | None, preview: str | None) -> Pending | None:
        answer = _asked(ui, ui.confirm(title, body, preview), "uji.ui.confirm")
        if answer is None:
            return None

        async def ask(answer: Awaitable[bool]) -> bool | None:
            try:
                async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancel
                    return await answer
            except TimeoutError:
                return None

        return Pending(Deferred(ask, answer))

    return {
        "ui_select": ui_select,
        "ui_pick": _pick(ui, lua),
        "ui_prompt": ui_prompt,
        "ui_confirm": ui_confirm,
    }


def _pick(ui: Ui, lua: Callable[[], Runtime]) -> Callable[..., Pending | None]:
    """uji.ui.pick: the Lua side keeps the lists: `preview_fn(list, i)` gives a label's
    lines, `query_fn(text)` a new list's labels and number; the answer is (list, i)."""

    def ui_pick(
        title: str, labels: Any, current: int | None, preview_fn: Any, query_fn: Any
    ) -> Pending | None:
        rt = lua()
        items = [str(x) for x in rt.convert.to_python(labels)]
        preview = _pick_preview(rt, preview_fn) if preview_fn is not None else None
        query = _pick_query(rt, query_fn) if query_fn is not None else None
        answer = _asked(
            ui, ui.pick(title, items, current - 1 if current else None, preview, query), "uji.ui.pick"
        )
        if answer is None:
            return None

        async def ask(answer: Awaitable[tuple[int, int] | None]) -> Any:
            chosen = await answer
            # Lua counts from 1
            return None if chosen is None else rt.convert.to_lua([chosen[0], chosen[1] + 1])

        return Pending(Deferred(ask, answer))

    return ui_pick


def _pick_preview(rt: Runtime, preview_fn: Any) -> Callable[[int, int], Awaitable[list[str]]]:
    async def preview(list_id: int, index: int) -> list[str]:
        values = await rt.call(preview_fn, list_id, index + 1)
        lines = rt.convert.to_python(values[0]) if values else None
        return [str(x) for x in lines] if isinstance(lines, list) else []

    return preview


def _pick_query(rt: Runtime, query_fn: Any) -> Callable[[str], Awaitable[tuple[list[str], int]]]:
    async def query(text: str) -> tuple[list[str], int]:
        values = await rt.call(query_fn, text)
        found = rt.convert.to_python(values[0]) if values else None
        return ([str(x) for x in found] if isinstance(found, list) else []), int(values[1])

    return query


def _screen_api(ui: Ui, lua: Callable[[], Runtime]) -> dict[str, Callable[..., Any]]:
    """uji.ui.configure{notify}, toggle_thinking, size, exec, open."""

    def ui_configure_notify(notify: Any) -> None:
        from uji.ui.bell import STYLES

        if isinstance(notify, str) and notify not in STYLES:
            raise ApiError(f"uji.ui.configure: `notify` must be one of {', '.join(STYLES)}, got {notify!r}")
        ui.notify = notify

    def ui_toggle_thinking() -> bool:
        return ui.toggle_thinking()

    def ui_size() -> tuple[int, int] | None:
        return ui.size()

    def ui_exec(command: Any) -> Pending:
        value = lua().convert.to_python(command)
        argv = ["sh", "-c", value] if isinstance(value, str) else [str(a) for a in value]

        async def run() -> int:
            try:
                return await ui.run_program(argv)
            except OSError as e:
                raise ApiError(f"uji.ui.exec: {argv[0]}: {e.strerror or e}") from None

        return later(run)

    return {
        "ui_toggle_thinking": ui_toggle_thinking,
        "ui_size": ui_size,
        "ui_configure_notify": ui_configure_notify,
        "ui_exec": ui_exec,
        "ui_open": _open,
    }


def _open(target: str) -> Any:
    """uji.ui.open: the system's opener for a file or URL, started and left to run."""
    import shutil
    import subprocess
    import sys

    opener = {"darwin": "open", "win32": "explorer"}.get(sys.platform, "xdg-open")
    if shutil.which(opener) is None:
        return None, f"uji.ui.open: {opener} was not found"
    subprocess.Popen(
        [opener, target],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    return True
