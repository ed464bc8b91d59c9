"""uji.input: get, set, append, clear — the composer's text, or a plain draft string
when there is no screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.app import App


def install(app: App) -> dict[str, Any]:
    # uji.tui is imported on first use: a headless run never loads it.
    def input_get() -> str:
        from uji.tui import host

        return host.input_get(app)

    def input_set(text: str) -> None:
        from uji.tui import host

        host.input_set(app, text)

    def input_append(text: str) -> None:
        from uji.tui import host

        host.input_set(app, host.input_get(app) + text)

    return {"input_get": input_get, "input_set": input_set, "input_append": input_append}
