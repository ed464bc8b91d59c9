"""uji.action: add, remove, list. A config's actions live in the UI port beside the
keymap, so a key bound to one by name (`uji.keymap.add("normal", "<C-g>", "greet")`) runs
it on the screen, and they are listed with or without one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError

if TYPE_CHECKING:
    from uji.lua.runtime import Runtime
    from uji.ui.port import Ui


def install(ui: Ui, lua: Callable[[], Runtime]) -> dict[str, Callable[..., Any]]:
    def action_add(name: str, fn: Any) -> None:
        from uji.ui.keys import ACTIONS

        if name in ACTIONS:
            raise ApiError(f"uji.action.add: {name!r} is a built-in action")
        ui.actions[name] = fn

    def action_remove(name: str) -> bool:
        return ui.actions.pop(name, None) is not None

    def action_list() -> Any:
        from uji.ui.keys import ACTIONS

        return lua().convert.to_lua(sorted(set(ACTIONS) | set(ui.actions)))

    return {"action_add": action_add, "action_remove": action_remove, "action_list": action_list}
