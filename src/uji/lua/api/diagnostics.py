"""uji.diagnostics.list, and the notice the stand-in of a missing `uji.*` function gives
(kept in the diagnostics log too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.diagnostics import Diagnostics
    from uji.lua.runtime import Runtime
    from uji.notices import Notice


def install(
    diagnostics: Diagnostics, lua: Callable[[], Runtime], notice: Notice
) -> dict[str, Callable[..., Any]]:
    def diagnostics_list() -> Any:
        return lua().convert.to_lua(diagnostics.list())

    def unsupported(text: str) -> None:
        diagnostics.add("config", text)
        notice(text)

    return {"diagnostics_list": diagnostics_list, "unsupported": unsupported}
