"""uji.keymap: add, remove, reset, list. The bindings live in the UI port's keymap, so
they are recorded (and listed) with or without a screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError

if TYPE_CHECKING:
    from uji.lua.runtime import Runtime
    from uji.ui.port import Ui


def install(ui: Ui, lua: Callable[[], Runtime]) -> dict[str, Callable[..., Any]]:
    # uji.ui.keys is imported on first use: a headless run that binds no keys never loads it.
    def modes_of(table: Any, fname: str) -> list[str]:
        from uji.ui.keys import KeyError_, check_mode

        modes = lua().convert.to_python(table)
        try:
            return [check_mode(m) for m in modes]
        except KeyError_ as e:
            raise ApiError(f"{fname}: {e}") from None

    def key_of(key: str, fname: str) -> str:
        from uji.ui.keys import KeyError_, parse_key

        try:
            parse_key(key)
        except KeyError_ as e:
            raise ApiError(f"{fname}: {e}") from None
        return key

    def keymap_add(modes: Any, key: str, kind: str, value: Any, origin: str | None) -> None:
        from uji.ui.keys import KeyError_, check_binding

        fname = "uji.keymap.add"
        names = modes_of(modes, fname)
        key = key_of(key, fname)
        try:
            binding = check_binding(kind, value, origin, ui.actions)
        except KeyError_ as e:
            raise ApiError(f"{fname}: {e}") from None
        ui.keymap.add(names, key, binding)

    def keymap_remove(modes: Any, key: str) -> None:
        fname = "uji.keymap.remove"
        ui.keymap.remove(modes_of(modes, fname), key_of(key, fname))

    def keymap_reset() -> None:
        ui.keymap.reset()

    def keymap_list() -> Any:
        return lua().convert.to_lua(ui.keymap.rows())

    return {
        "keymap_add": keymap_add,
        "keymap_remove": keymap_remove,
        "keymap_reset": keymap_reset,
        "keymap_list": keymap_list,
    }
