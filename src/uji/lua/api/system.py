"""uji.os, uji.modules, uji.keychain, uji.clipboard and uji.image.fit: the machine, the run,
saved secrets and the clipboard, as the original's runtime gives them.

The keychain is the system's own through its command-line tool (`security` on macOS,
`secret-tool` from libsecret elsewhere); without one, every call says so as `nil, err`.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TYPE_CHECKING, Any

from uji.lua.api.fs import later
from uji.lua.runtime import Api, ApiError, Pending

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.packs import Packs
    from uji.ui.port import Ui
    from uji.wires.base import Image

STARTED = time.monotonic()


def install(host: LuaHost, packs: Packs, cwd: str, ui: Ui) -> Api:
    return {**_os_api(host, packs, cwd, ui), **_desktop_api(host)}


def _os_api(host: LuaHost, packs: Packs, cwd: str, ui: Ui) -> Api:
    """uji.os: the machine and the run."""

    # These run while the runtime loads (before it can convert tables): several results
    # instead of a table.
    def os_values() -> tuple[str, str | None, str]:
        platform = {"darwin": "macos", "linux": "linux", "win32": "windows"}.get(sys.platform, "other")
        program = sys.argv[0] if sys.argv else ""
        executable = (shutil.which(program) or os.path.abspath(program)) if program else None
        return platform, executable, "dylib" if sys.platform == "darwin" else "so"

    def os_argv() -> tuple[str, ...]:
        return tuple(sys.argv)

    def os_roots() -> tuple[str, ...]:
        # The config dir, the roots a restart handed over, then each pack.
        config, *added = packs.all_roots()
        handed = [r for r in host.handover.roots if r not in added]
        return (config, *handed, *added)

    def os_env(name: str) -> str | None:
        return os.environ.get(name) or None

    def os_cwd() -> str:
        return cwd

    def os_home() -> str | None:
        home = os.path.expanduser("~")
        return None if home == "~" else home

    def os_now() -> int:
        return time.time_ns() // 1_000_000

    def os_clock() -> float:
        return time.monotonic() - STARTED

    def os_expand(path: str) -> str:
        return os.path.expandvars(os.path.expanduser(path))

    def os_exit(code: float | None) -> None:
        from uji import restart

        if code is not None:
            restart.set_exit_code(int(code))
        ui.quit()

    def os_restart(args: Any, roots: Any, carry: str | None) -> None:
        from uji import restart

        if restart.too_many(host.handover):
            raise ApiError(f"uji.os.restart: {restart.MAX_RESTARTS} restarts in a row already; not again")
        convert = host.lua.convert
        folders = [os.path.abspath(os.path.expanduser(str(r))) for r in convert.to_python(roots) or []]
        argv = None if args is None else [str(a) for a in convert.to_python(args)]
        handover = restart.next_run(host.handover, carry, folders)
        ui.restart(restart.Restart(handover=handover, args=argv), host.loading_config)

    return {
        "os_values": os_values,
        "os_argv": os_argv,
        "os_roots": os_roots,
        "os_env": os_env,
        "os_cwd": os_cwd,
        "os_home": os_home,
        "os_now": os_now,
        "os_clock": os_clock,
        "os_expand": os_expand,
        "os_exit": os_exit,
        "os_restart": os_restart,
    }


def _desktop_api(host: LuaHost) -> Api:
    """uji.modules, uji.keychain, uji.clipboard and uji.image.fit."""

    def lua(value: Any) -> Any:
        return host.lua.convert.to_lua(value, json_null=False)

    def modules(namespace: str, search_path: str) -> Any:
        return lua(list_modules(namespace, search_path))

    def keychain(action: str, service: str, account: str, secret: str | None) -> Pending:
        return later(_keychain, action, service, account, secret)

    def clipboard_get() -> Pending:
        from uji.clipboard import clipboard_text

        return later(clipboard_text)

    def clipboard_set(text: str) -> Pending:
        from uji.clipboard import set_clipboard_text

        async def put() -> bool:
            await set_clipboard_text(text)
            return True

        return later(put)

    def clipboard_image(edge: float, size: float) -> Pending:
        from uji.clipboard import clipboard_image as take

        async def image() -> Any:
            return lua(_fit(await take(), edge, size))

        return later(image)

    def image_fit(hex_data: str, edge: float, size: float) -> Any:
        from uji.images import ImageError

        try:
            return lua(_fit(bytes.fromhex(hex_data), edge, size))
        except ImageError as e:
            return None, str(e)

    return {
        "modules": modules,
        "keychain": keychain,
        "clipboard_get": clipboard_get,
        "clipboard_set": clipboard_set,
        "clipboard_image": clipboard_image,
        "image_fit": image_fit,
    }


def list_modules(namespace: str, search_path: str) -> list[str]:
    """The modules directly inside `namespace` on Lua's search path, as full names, sorted;
    a folder with an init.lua counts as one module."""
    sub = namespace.replace(".", "/")
    found: set[str] = set()
    for template in search_path.split(";"):
        if not template.endswith("/?.lua"):
            continue
        folder = os.path.join(template[: -len("/?.lua")], sub)
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(".lua") and name != "init.lua":
                found.add(f"{namespace}.{name[:-4]}")
            elif os.path.isfile(os.path.join(folder, name, "init.lua")):
                found.add(f"{namespace}.{name}")
    return sorted(found)


def _fit(data: bytes, edge: float, size: float) -> Image:
    from uji.images import Limits, from_bytes

    if edge < 1 or size < 1:
        raise ApiError("uji.image.fit: edge and bytes must be at least 1")
    return from_bytes(data, "image", Limits(int(edge), int(size)))


async def _keychain(action: str, service: str, account: str, secret: str | None) -> Any:
    """get: the secret or None; set/delete: True. Failures raise (Lua gets nil, err)."""
    from uji.keychain import KeychainError, action_of, run_async

    try:
        return await run_async(action_of(action), service, account, secret)
    except KeychainError as e:
        raise ApiError(str(e)) from None
