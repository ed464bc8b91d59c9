"""uji.input: get, set, append, clear — the composer's text, or a plain draft string
when there is no screen (both kept by the UI port)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.ui.port import Ui


def install(ui: Ui) -> dict[str, Callable[..., Any]]:
    def input_get() -> str:
        return ui.input_get()

    def input_set(text: str) -> None:
        ui.input_set(text)

    def input_append(text: str) -> None:
        ui.input_append(text)

    return {"input_get": input_get, "input_set": input_set, "input_append": input_append}
