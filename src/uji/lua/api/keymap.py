"""uji.keymap: add, remove, reset, list. The bindings live in `uji.tui.host`, so they
are recorded (and listed) with or without a screen."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError

if TYPE_CHECKING:
    from uji.app import App


def install(app: App) -> dict[str, Any]:
    # uji.tui is imported on first use: a headless run that binds no keys never loads it.
    def modes_of(table: Any, fname: str) -> list[str]:
        from uji.tui.keys import KeyError_, check_mode

        modes = app.lua.convert.to_python(table)
        try:
            return [check_mode(m) for m in modes]
        except KeyError_ as e:
            raise ApiError(f"{fname}: {e}") from None

    def key_of(key: str, fname: str) -> str:
        from uji.tui.keys import KeyError_, parse_key

        try:
            parse_key(key)
        except KeyError_ as e:
            raise ApiError(f"{fname}: {e}") from None
        return key

    def keymap_add(modes: Any, key: str, kind: str, value: Any, origin: str | None) -> None:
        from uji.tui.host import ui_state
        from uji.tui.keys import ACTIONS, Binding

        fname = "uji.keymap.add"
        names = modes_of(modes, fname)
        key = key_of(key, fname)
        if kind == "action" and value not in ACTIONS:
            raise ApiError(f"{fname}: unknown action {value!r} (actions: {', '.join(sorted(ACTIONS))})")
        if kind == "command" and not value:
            raise ApiError(f'{fname}: `command` names a command such as "effort"')
        ui_state(app).keymap.add(names, key, Binding(kind, value, origin))

    def keymap_remove(modes: Any, key: str) -> None:
        from uji.tui.host import ui_state

        fname = "uji.keymap.remove"
        ui_state(app).keymap.remove(modes_of(modes, fname), key_of(key, fname))

    def keymap_reset() -> None:
        from uji.tui.host import ui_state

        ui_state(app).keymap.reset()

    def keymap_list() -> Any:
        from uji.tui.host import ui_state

        return app.lua.convert.to_lua(ui_state(app).keymap.rows())

    return {
        "keymap_add": keymap_add,
        "keymap_remove": keymap_remove,
        "keymap_reset": keymap_reset,
        "keymap_list": keymap_list,
    }
