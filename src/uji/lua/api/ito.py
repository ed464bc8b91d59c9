"""The host side of ito's screen APIs: uji.ui.toolbar, uji.ui.overlay, uji.ui.redraw,
uji.ui.configure's theme and the rest, uji.ui.save_theme, uji.input.capture/release.

The Lua side (`api/ui.lua`, `ito/init.lua`) makes an ito root per toolbar item or
overlay; here each becomes an `ItoSource` the screen draws through the UI port. With no
screen the port keeps the toolbars (listed, removable) and an overlay answers nil at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from uji.lua.api.fs import later
from uji.lua.host import THEME_SETTING
from uji.lua.runtime import ApiError, LuaError, Pending
from uji.ui.ito import PLACEMENTS, ItoError, Node, Theme, ToolbarEntry

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.store.sessions import Store
    from uji.ui.port import Ui


class LuaSource:
    """An ito root (a Lua table made by `ito.root`) as the screen sees it."""

    def __init__(self, host: LuaHost, root: Any) -> None:
        self._host = host
        self._root = root

    def render(self, width: int) -> Node | None:
        rt = self._host.lua
        try:
            values = rt.call_sync(self._root.render, self._root, width)
        except LuaError as e:
            raise ItoError(str(e)) from None
        tree = rt.convert.to_python(values[0]) if values else None
        return cast("Node", tree) if isinstance(tree, dict) else None

    def fire(self, handler: int, *args: Any) -> None:
        rt = self._host.lua
        self._host.spawn(self._root.fire, self._root, handler, *(rt.convert.to_lua(a) for a in args))

    def call(self, handler: int, *args: Any) -> Any:
        rt = self._host.lua
        try:
            values = rt.call_sync(self._root.fire, self._root, handler, *(rt.convert.to_lua(a) for a in args))
        except LuaError as e:
            raise ItoError(str(e)) from None
        return rt.convert.to_python(values[0]) if values else None

    def unshown(self) -> list[str]:
        rt = self._host.lua
        values = rt.call_sync(self._root.unshown_placements, self._root)
        found = rt.convert.to_python(values[0]) if values else None
        return [str(p) for p in found] if isinstance(found, list) else []


def theme_of(data: dict[str, Any]) -> Theme:
    """The flattened theme `api/ui.lua` sends: lists of [key, value] pairs."""

    def pairs(key: str) -> tuple[tuple[str, str], ...]:
        rows = data.get(key) or []
        return tuple((str(k), str(v)) for k, v in rows) if isinstance(rows, list) else ()

    numbers: list[tuple[str, float]] = []
    for key, value in data.get("limits") or []:
        if isinstance(value, (int, float)):
            numbers.append((str(key), float(value)))
        elif isinstance(value, str):  # a list, joined by spaces: float = {0.9, 0.8} is float.1, float.2
            for i, part in enumerate(value.split(), 1):
                try:
                    numbers.append((f"{key}.{i}", float(part)))
                except ValueError:
                    break
    return Theme(
        name=str(data.get("name") or "custom"),
        colors=pairs("colors"),
        symbols=pairs("symbols"),
        text=pairs("text"),
        limits=tuple(numbers),
    )


def install(host: LuaHost, ui: Ui, store: Callable[[], Store]) -> dict[str, Callable[..., Any]]:
    def ui_toolbar_add(handle: int, placement: str, root: Any, item_id: str | None) -> None:
        place = next((p for p in PLACEMENTS if p == placement), None)
        if place is None:
            raise ApiError(f"uji.ui.toolbar: unknown placement {placement!r}")
        ui.add_toolbar(ToolbarEntry(int(handle), place, LuaSource(host, root), item_id))

    def ui_toolbar_remove(handle: int) -> bool:
        return ui.remove_toolbar(int(handle))

    def ui_redraw() -> None:
        ui.redraw()

    def ui_overlay_open(handle: int, root: Any, floating: bool) -> bool:
        return ui.open_overlay(int(handle), LuaSource(host, root), bool(floating))

    def ui_overlay_wait(handle: int) -> Pending | None:
        closed = ui.overlay_closed(int(handle))
        if closed is None:
            return None

        async def wait() -> bool:
            await closed
            return True

        return later(wait)

    def ui_overlay_close(handle: int) -> None:
        ui.close_overlay(int(handle))

    def ui_set_theme(spec: Any) -> None:
        data = host.lua.convert.to_python(spec)
        if not isinstance(data, dict):
            raise ApiError("uji.ui.configure: a theme must be a table")
        ui.set_theme(theme_of(data))

    def ui_set_options(show_thinking: bool | None, suggest: bool | None) -> None:
        if show_thinking is not None:
            ui.show_thinking = bool(show_thinking)
            ui.set_thinking(ui.show_thinking)
        if suggest is not None:
            ui.suggest = bool(suggest)

    def ui_save_theme(name: str) -> None:
        store().set_setting(THEME_SETTING, name)

    def ui_saved_theme() -> str | None:
        try:
            return store().get_setting(THEME_SETTING)
        except Exception:  # no session store (a broken data dir): the default theme
            return None

    def input_capture(handler: Any) -> None:
        ui.capture = handler

    def input_release() -> bool:
        had = ui.capture is not None
        ui.capture = None
        return had

    return {
        "ui_toolbar_add": ui_toolbar_add,
        "ui_toolbar_remove": ui_toolbar_remove,
        "ui_redraw": ui_redraw,
        "ui_overlay_open": ui_overlay_open,
        "ui_overlay_wait": ui_overlay_wait,
        "ui_overlay_close": ui_overlay_close,
        "ui_set_theme": ui_set_theme,
        "ui_set_options": ui_set_options,
        "ui_save_theme": ui_save_theme,
        "ui_saved_theme": ui_saved_theme,
        "input_capture": input_capture,
        "input_release": input_release,
    }
