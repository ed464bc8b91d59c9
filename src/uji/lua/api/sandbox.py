"""uji.sandbox: configure and status — the OS sandbox of the commands the model starts
(`uji.sandbox`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.sandbox.policy import Mode
    from uji.tools.gate import Gate


def install(host: LuaHost, gate: Gate) -> dict[str, Callable[..., Any]]:
    def status() -> Any:
        state = gate.sandbox_status()
        settings = gate.sandbox_settings()
        return host.lua.convert.to_lua(
            {
                "mode": state.mode,
                "available": state.available,
                "reason": state.reason,
                "network": settings.network,
                "writable": list(settings.writable),
                "deny_read": list(settings.deny_read),
            }
        )

    def configure(mode: str | None, network: bool | None, writable: Any, deny_read: Any) -> Any:
        settings = gate.os_sandbox
        if mode is not None:
            settings.mode = cast("Mode", mode)  # checked in sandbox.lua
        if network is not None:
            settings.network = bool(network)
        if writable is not None:
            settings.writable = [str(p) for p in host.lua.convert.to_python(writable)]
        if deny_read is not None:
            settings.deny_read = [str(p) for p in host.lua.convert.to_python(deny_read)]
        return status()

    return {"sandbox_configure": configure, "sandbox_status": status}
