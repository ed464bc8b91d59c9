"""uji.mode: add, set, get, list — the gate's modes (Shift+Tab in the terminal UI), each a
policy layer over the rules as written (`uji.tools.modes`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.tools.gate import Gate


def switch_mode(host: LuaHost, gate: Gate, name: str) -> None:
    """Make `name` the current mode, then run the old mode's on_leave and the new one's
    on_enter (Lua functions, in the background: a hook may wait)."""
    from uji.tools.modes import ModeError

    try:
        old, new = gate.modes.switch(name)
    except ModeError as e:
        raise ApiError(f"uji.mode.set: {e}") from None
    if old.name == new.name:
        return
    if old.on_leave is not None:
        host.spawn(old.on_leave, new.name)
    if new.on_enter is not None:
        host.spawn(new.on_enter, old.name)


def install(host: LuaHost, gate: Gate) -> dict[str, Callable[..., Any]]:
    def mode_add(name: str, rules: Any, desc: str, on_enter: Any, on_leave: Any, origin: str | None) -> None:
        from uji.tools.modes import ModeError

        data = host.lua.convert.to_python(rules)
        if data == []:  # an empty Lua table
            data = {}
        if not isinstance(data, dict):
            raise ApiError("uji.mode.add: the policy is a table of rules, as uji.tool.policy takes")
        try:
            notices = gate.modes.add(name, data, desc, origin, on_enter, on_leave)
        except ModeError as e:
            raise ApiError(f"uji.mode.add: {e}") from None
        for notice in notices:
            host.notice(notice)

    def mode_set(name: str) -> None:
        switch_mode(host, gate, name)

    def mode_get() -> str:
        return gate.modes.get().name

    def mode_list() -> Any:
        return host.lua.convert.to_lua(gate.modes.rows())

    return {"mode_add": mode_add, "mode_set": mode_set, "mode_get": mode_get, "mode_list": mode_list}
