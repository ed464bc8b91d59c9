"""uji.quit and uji.reload, through the UI port: the screen quits or restarts Lua;
`uji run` ends cleanly, or reads the config again before its prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.ui.port import Ui


def install(ui: Ui, loading_config: Callable[[], bool]) -> dict[str, Callable[..., Any]]:
    def quit_() -> None:
        ui.quit()

    def reload() -> None:
        ui.reload(loading_config())

    return {"quit": quit_, "reload": reload}
