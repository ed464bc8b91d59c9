"""The Lua host: the one runtime (made on first use), calling what a config handed us
(hooks, context providers, `models` functions), `uji.schedule`, and loading the config.

The config is uji's defaults, then `init.lua`, then `plugin/*.lua` by name, then each
pack's `plugin/*.lua` by name (the packs `uji.pack.add` installed, in the order added),
then `<data>/rules.lua` (the approvals the user chose to "always allow"). An error in any
file is reported with its file and line, and uji goes on with what loaded before it.
Nothing in the working directory is ever run as config.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import ModuleType

    from uji.events import Handler
    from uji.lua.runtime import Api, HostLookup, Runtime
    from uji.paths import Paths
    from uji.restart import Handover

DEFAULTS_MODULE = "uji.builtin.defaults"
THEME_MODULE = "uji.themes.current"  # uji.ui's theme state (api/ui.lua)
THEME_SETTING = "theme"  # the store's setting holding the theme uji.ui.save_theme saved
# Makes the lookup of the host functions behind the `uji` table (called once, with the runtime).
InstallApi = Callable[[], "HostLookup"]


class Namespace:
    """One module of uji.lua.api: its name, the prefixes of its host functions' names
    (the text before the first `_`), and how its `install` is called (with the services
    it uses)."""

    __slots__ = ("install", "module", "prefixes")

    def __init__(self, module: str, prefixes: str, install: Callable[[ModuleType], Api]) -> None:
        self.module = module
        self.prefixes = frozenset(prefixes.split())
        self.install = install


class HostApi:
    """The host functions behind the `uji` table, installed a namespace at a time: a
    namespace's module is imported and installed when Lua first asks for one of its
    names, so a run pays only for the namespaces its config and tools use (about 30
    modules to import otherwise, a few percent of a headless turn). A name is looked for
    first in the namespaces whose prefixes hold its prefix, then in every other one, in
    order: a prefix left out of the list costs time, never a function."""

    def __init__(self, namespaces: list[Namespace]) -> None:
        self._waiting = list(namespaces)
        self._installed: Api = {}
        self.owner: dict[str, Namespace] = {}  # each name installed so far: its namespace

    def __call__(self, name: str) -> Callable[..., Any] | None:
        found = self._installed.get(name)
        if found is not None:
            return found
        prefix = name.split("_", 1)[0]
        for hinted in (True, False):
            for ns in [ns for ns in self._waiting if not hinted or prefix in ns.prefixes]:
                self._install(ns)
                if name in self._installed:
                    return self._installed[name]
        return None

    def _install(self, ns: Namespace) -> None:
        self._waiting.remove(ns)
        # __import__ rather than importlib's: its imports show in -X importtime.
        api = ns.install(__import__(f"uji.lua.api.{ns.module}", fromlist=["install"]))
        self._installed.update(api)
        self.owner.update(dict.fromkeys(api, ns))

    def waiting(self) -> list[str]:
        """The namespaces not installed yet, by module name."""
        return [ns.module for ns in self._waiting]


class LuaHost:
    def __init__(
        self,
        paths: Paths,
        install: InstallApi,
        notice: Callable[[str], None],
        handover: Handover | None = None,
        saved_theme: Callable[[], str | None] = lambda: None,
    ) -> None:
        """`saved_theme`: the theme uji.ui.save_theme saved, if any."""
        from uji.restart import Handover, read_overrides

        self.paths = paths
        # What the run before this one handed over (uji.os.restart), and the override packs
        # (overrides.json) whose lua/ and native/ come before uji's own Lua from boot.
        self.handover = handover if handover is not None else Handover()
        self.boot_overrides = read_overrides(paths.data)
        self._install = install
        self._saved_theme = saved_theme
        self.notice = notice
        self._lua: Runtime | None = None
        self._loading_config = False
        self._scheduled: list[Any] = []
        self._pack_roots: list[str] = []  # packs added while the config loads: their plugins wait
        self.config_interrupted: str | None = None  # the config file an interrupt stopped
        # Run by close() before the runtime goes, e.g. to kill plugin jobs.
        self.on_close: list[Callable[[], None]] = []
        # Awaited by settle(), before close(): e.g. interrupted jobs ending in their own way.
        self.on_settle: list[Callable[[], Awaitable[None]]] = []

    @property
    def lua(self) -> Runtime:
        if self._lua is None:
            from uji.lua.runtime import Runtime, runtime_dir

            tree = runtime_dir()
            roots = list(dict.fromkeys([*self.handover.roots, *self.boot_overrides]))
            self._lua = Runtime(
                self._install(),
                [self.paths.lua_dir, *(os.path.join(r, "lua") for r in roots), tree],
                [self.paths.native_dir, *(os.path.join(r, "native") for r in roots)],
                tree,
            )
            if self.handover.carry is not None:
                self._set_carry(self._lua, self.handover.carry)
        return self._lua

    def _set_carry(self, rt: Runtime, carry: str) -> None:
        """uji.os.carry: what the run before this one carried (JSON it encoded)."""
        import json

        table = rt.uji.os
        if rt.convert.lua_type(table) == "table":
            table.carry = rt.convert.to_lua(json.loads(carry), json_null=True)

    @property
    def loading_config(self) -> bool:
        """Whether the config files are running now."""
        return self._loading_config

    @property
    def loaded(self) -> Runtime | None:
        """The runtime if it was made (an interrupt has nothing to stop otherwise)."""
        return self._lua

    async def call_function(self, fn: Any, *args: Any) -> Any:
        """Call a handler a config gave us, Lua or Python (a hook, a context provider),
        and return its first result as a Python value."""
        if not self._is_lua(fn):
            result = fn(*args)
            return await result if asyncio.iscoroutine(result) else result
        rt = self.lua
        values = await rt.call(fn, *(rt.convert.to_lua(a, json_null=False) for a in args))
        return rt.convert.to_python(values[0]) if values else None

    async def call_handler(self, handler: Handler, payload: dict[str, Any]) -> Any:
        return await self.call_function(handler.fn, payload)

    def _is_lua(self, fn: Any) -> bool:
        return self._lua is not None and self._lua.convert.lua_type(fn) is not None

    async def run_loader(self, fn: Any) -> Any:
        """A provider's `models` function: its list, or a ValueError with its reason."""
        rt = self.lua
        values = await rt.call(fn)
        if not values or values[0] is None:
            why = rt.convert.to_python(values[1]) if len(values) > 1 else None
            raise ValueError(str(why) if why else "the models function returned nothing")
        return rt.convert.to_python(values[0])

    def spawn(self, fn: Any, *args: Any) -> None:
        self.lua.spawn(fn, *args, on_error=self.notice)

    def schedule(self, fn: Any) -> None:
        """uji.schedule: after the current code; during config, after all of it loaded."""
        if self._loading_config:
            self._scheduled.append(fn)
        else:
            asyncio.get_running_loop().call_soon(self.spawn, fn)

    async def load_config(self) -> list[str]:
        """Run the config files (what `uji.schedule` asks for meanwhile waits for
        `run_scheduled`); returns the errors, each also given as a notice."""
        self._loading_config = True
        try:
            return await self._load_config()
        finally:
            self._loading_config = False

    async def _load_config(self) -> list[str]:
        from uji.lua.runtime import LuaError

        rt = self.lua
        errors: list[str] = []
        g = rt.lua.globals()
        require = g.require
        # The saved theme, before the config. uji.ui, which holds the theme state, loads on
        # first use: only a theme other than the default is worth loading it for now.
        if self._saved_theme() not in (None, "default"):
            theme = rt.uji.ui and g.package.loaded[THEME_MODULE]
            if theme is not None and theme.apply_saved is not None:
                await rt.call(theme.apply_saved)
        try:
            await rt.call(require, DEFAULTS_MODULE)
        except LuaError as e:
            errors.append(f"uji's defaults failed to load: {e}")
        await self._run_files(errors)
        for error in errors:
            self.notice(error)
        return errors

    async def _run_files(self, errors: list[str]) -> None:
        """init.lua and plugin/*.lua, then the packs' plugins (a plugin may add packs
        too), then rules.lua; an interrupt stops them all."""
        files = config_files(self.paths)
        rules = files.pop() if files and files[-1] == self.paths.rules_lua else None
        for path in files:
            if not await self._run_file(path, errors):
                return
        while self._pack_roots:
            for path in plugin_files(self._pack_roots.pop(0)):
                if not await self._run_file(path, errors):
                    return
        if rules is not None:
            await self._run_file(rules, errors)

    async def _run_file(self, path: str, errors: list[str]) -> bool:
        """Run one config file; False when an interrupt stopped it (the rest do not run)."""
        from uji.lua.runtime import LuaError, LuaInterrupt

        rt = self.lua
        try:
            chunk = rt.load_file(path)
            await rt.call(chunk)
        except LuaInterrupt:
            # Esc or SIGINT while a file ran (a loop that never ends): it stops there,
            # and the files after it do not run.
            self.config_interrupted = path
            errors.append(f"config interrupted: {path} did not finish; the files after it were not loaded")
            return False
        except LuaError as e:
            errors.append(f"config error: {e}")
        except OSError as e:
            errors.append(f"config error: cannot read {path}: {e.strerror}")
        return True

    def pack_added(self, root: str) -> None:
        """A pack's `plugin/*.lua` run after the config's; added later, they run now."""
        from uji.lua.runtime import LuaError

        if self._loading_config:
            self._pack_roots.append(root)
            return
        for path in plugin_files(root):
            try:
                chunk = self.lua.load_file(path)
            except (OSError, LuaError) as e:
                self.notice(f"config error: {e}")
                continue
            self.spawn(chunk)

    def run_scheduled(self) -> None:
        scheduled, self._scheduled = self._scheduled, []
        for fn in scheduled:
            self.spawn(fn)

    async def settle(self) -> None:
        for hook in self.on_settle:
            await hook()

    def close(self) -> None:
        for hook in self.on_close:
            hook()
        if self._lua is not None:
            self._lua.close()


def plugin_files(root: str) -> list[str]:
    """`root/plugin/*.lua`, sorted by name."""
    folder = os.path.join(root, "plugin")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".lua"))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n))]


def config_files(paths: Paths) -> list[str]:
    files = []
    if os.path.isfile(paths.init_lua):
        files.append(paths.init_lua)
    files.extend(plugin_files(paths.config))
    if os.path.isfile(paths.rules_lua):
        files.append(paths.rules_lua)
    return files
