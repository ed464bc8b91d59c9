"""uji.input: get, set, append, clear — the composer's text, or a plain draft string
when there is no screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.tui import host

if TYPE_CHECKING:
    from uji.app import App


def install(app: App) -> dict[str, Any]:
    def input_get() -> str:
        return host.input_get(app)

    def input_set(text: str) -> None:
        host.input_set(app, text)

    def input_append(text: str) -> None:
        host.input_set(app, host.input_get(app) + text)

    return {"input_get": input_get, "input_set": input_set, "input_append": input_append}
