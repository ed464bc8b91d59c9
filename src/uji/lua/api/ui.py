"""uji.ui: select, prompt, confirm, toggle_thinking, size.

The questions return `Pending` so the calling Lua task waits for the answer. With no
screen attached they give nil and say so in a notice, rather than hanging a headless
run on a question nobody can answer."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Pending

if TYPE_CHECKING:
    from uji.app import App
    from uji.tui import host

NO_SCREEN = "no screen to ask on"


def install(app: App) -> dict[str, Any]:
    # uji.tui is imported on first use: a headless run never loads it.
    def surface(fname: str) -> host.Surface | None:
        from uji.tui import host

        found = host.ui_state(app).surface
        if found is None:
            app.notice(f"{fname}: {NO_SCREEN}")
        return found

    def ui_select(title: str, labels: Any, current: int | None) -> Pending | None:
        screen = surface("uji.ui.select")
        if screen is None:
            return None
        items = [str(x) for x in app.lua.convert.to_python(labels)]

        async def ask() -> int | None:
            index = await screen.select(title, items, current - 1 if current else None)
            return None if index is None else index + 1  # Lua counts from 1

        return Pending(ask())

    def ui_prompt(title: str, value: str, hidden: bool) -> Pending | None:
        screen = surface("uji.ui.prompt")
        if screen is None:
            return None
        return Pending(screen.prompt(title, value, hidden))

    def ui_confirm(title: str, body: str, timeout: float | None, preview: str | None) -> Pending | None:
        screen = surface("uji.ui.confirm")
        if screen is None:
            return None

        async def ask() -> bool | None:
            try:
                async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancel
                    return await screen.confirm(title, body, preview)
            except TimeoutError:
                return None

        return Pending(ask())

    def ui_toggle_thinking() -> bool:
        from uji.tui import host

        return host.toggle_thinking(app)

    def ui_size() -> tuple[int, int] | None:
        from uji.tui import host

        screen = host.ui_state(app).surface
        return screen.screen_size() if screen is not None else None

    return {
        "ui_select": ui_select,
        "ui_prompt": ui_prompt,
        "ui_confirm": ui_confirm,
        "ui_toggle_thinking": ui_toggle_thinking,
        "ui_size": ui_size,
    }
