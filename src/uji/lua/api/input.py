"""uji.input: get, set, append, clear — the composer's text, or a plain draft string
when there is no screen (both kept by the UI port)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import later
from uji.lua.runtime import ApiError, Pending

if TYPE_CHECKING:
    from uji.providers.selection import ModelSelection
    from uji.ui.port import Ui


def install(ui: Ui, cwd: str, models: ModelSelection) -> dict[str, Callable[..., Any]]:
    def input_get() -> str:
        return ui.input_get()

    def input_set(text: str) -> None:
        ui.input_set(text)

    def input_append(text: str) -> None:
        ui.input_append(text)

    def input_attach(path: str) -> Pending:
        async def attach() -> bool:
            import asyncio

            from uji.images import ImageError, current_limits, load

            try:
                image = await asyncio.to_thread(load, path, current_limits(models), cwd)
            except ImageError as e:
                raise ApiError(str(e)) from None
            problem = await ui.attach_image(image)
            if problem is not None:
                raise ApiError(f"uji.input.attach: {problem}")
            return True

        return later(attach)

    return {
        "input_get": input_get,
        "input_set": input_set,
        "input_append": input_append,
        "input_attach": input_attach,
    }
