"""The composition root: the services of one running uji, made and wired together here.

One `App` per process. `uji run` and the terminal UI both build one, load the Lua
config into it, then drive turns through `agent.loop`. Each service is handed only to
those who use it:

- `gate` (tools/gate.py): the tool registry, the policy, confinement and its roots;
- `models` (providers/selection.py): the provider catalog and the model choice;
- `host` (lua/host.py): the Lua runtime, calling config functions, loading the config;
- `store` (store/sessions.py): sessions, messages and settings, opened on first use;
- `wires` (wires/registry.py): the wires by name, and `http`, the HTTP client they share;
- `events` (events.py): the hooks and notifications;
- `context` (agent/contexts.py): context providers, caching and compaction settings;
- `commands` (commands.py), `notice` (notices.py), `frontend` (frontend.py);
- `ui` (ui/port.py): the UI port uji.keymap, uji.ui and uji.input talk to, given by the
  frontend (the screen's, or one with no screen).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from uji.agent.contexts import PromptContext
from uji.commands import Commands
from uji.events import Events
from uji.frontend import Frontend
from uji.lua.host import LuaHost
from uji.notices import Notice, Notices
from uji.paths import Paths
from uji.providers.catalog import Catalog
from uji.providers.selection import ModelSelection
from uji.tools.builtin import builtin_tools
from uji.tools.gate import Gate
from uji.wires.http import Http
from uji.wires.registry import Wires

if TYPE_CHECKING:
    from uji.lua.runtime import Runtime
    from uji.store.sessions import Store
    from uji.tools.policy import Policy
    from uji.tools.registry import Registry
    from uji.ui.port import Ui


class _Via:
    """An attribute of App that is one of a service's (kept while callers move over)."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.service), self.name)

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(getattr(obj, self.service), self.name, value)


class App:
    def __init__(
        self, paths: Paths, cwd: str | None = None, notice: Notice | None = None, ui: Ui | None = None
    ) -> None:
        self.paths = paths
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self.notice = Notices(notice)  # called to say something; the frontend sets its sink
        if ui is None:  # no frontend: the port with no screen, its notices ours
            from uji.ui.headless import HeadlessUi

            ui = HeadlessUi(self.notice)
        self.ui = ui  # what uji.keymap, uji.ui and uji.input talk to
        self._store: Store | None = None
        self.host = LuaHost(paths, self._install_api, self.notice)
        self.events = Events(self.host.call_handler, self.notice)
        self.catalog = Catalog()
        self.http = Http()  # made on first use, closed by close()
        self.models = ModelSelection(
            self.catalog,
            lambda: self.store,
            self.events.publish,
            self.notice,
            paths.auth_file,
            self.host.run_loader,
            self.http,
        )
        self.gate = Gate(self.cwd, paths.auth_file, paths.rules_lua, self.catalog.list)
        for tool in builtin_tools(self.gate.sandbox):  # their previews read files as calls do
            self.gate.registry.add(tool)
        self.wires = Wires(self.http)
        self.commands = Commands()
        self.context = PromptContext(self.host.call_function)
        self.frontend = Frontend()

    def _install_api(self) -> dict[str, Any]:
        from uji.lua.api import install_all

        return install_all(self)

    @property
    def store(self) -> Store:
        if self._store is None:
            from uji.store.sessions import Store

            self._store = Store(self.paths.db)
        return self._store

    @property
    def lua(self) -> Runtime:
        return self.host.lua

    @property
    def _lua(self) -> Runtime | None:
        return self.host.loaded

    def set_notice_sink(self, sink: Notice) -> None:
        self.notice.set_sink(sink)

    async def load_config(self) -> None:
        self.models.restore_custom()
        await self.host.load_config()
        if self.models.provider_id is None:
            # The config chose no model: the one saved last time (its provider may be
            # one the config just added).
            self.models.restore_model()
        self.host.run_scheduled()

    async def close(self) -> None:
        self.models.close()
        await self.events.drain()
        from uji.tools.builtin.run_command import remove_spills

        remove_spills()  # run_command's overflow files live only as long as the session
        self.host.close()
        if self._store is not None:
            self._store.close()
        await self.http.aclose()

    # What callers reached through App before the services existed ---------------------

    @property
    def registry(self) -> Registry:
        return self.gate.registry

    @property
    def policy(self) -> Policy:
        return self.gate.policy

    @property
    def confined(self) -> bool:
        return self.gate.confined

    @confined.setter
    def confined(self, value: bool) -> None:
        self.gate.confined = value

    roots = _Via("gate")
    inherit_keys = _Via("gate")
    sandbox = _Via("gate")

    provider_id = _Via("models")
    model_id = _Via("models")
    effort = _Via("models")
    base_url_override = _Via("models")
    use_model = _Via("models")
    setting = _Via("models")
    restore_model = _Via("models")
    set_custom = _Via("models")
    restore_custom = _Via("models")
    load_provider = _Via("models")
    ready_model = _Via("models")
    model_choices = _Via("models")
    find_local_server = _Via("models")
    provider = _Via("models")
    base_url = _Via("models")
    current_model = _Via("models")
    model_images = _Via("models")
    remember_text_only = _Via("models")
    model_efforts = _Via("models")

    call_function = _Via("host")
    config_interrupted = _Via("host")
    on_close = _Via("host")

    cache = _Via("context")
    compaction = _Via("context")

    agent = _Via("frontend")
    on_submit = _Via("frontend")
    on_interrupt = _Via("frontend")

    def spawn_lua(self, fn: Any, *args: Any) -> None:
        self.host.spawn(fn, *args)

    def schedule_lua(self, fn: Any) -> None:
        self.host.schedule(fn)

    def add_context_provider(self, name: str, fn: Any, priority: float = 50) -> None:
        self.context.add(name, fn, priority)

    def remove_context_provider(self, name: str) -> bool:
        return self.context.remove(name)

    def context_providers(self) -> list[Any]:
        return self.context.providers()

    async def call_context_provider(self, provider: Any) -> Any:
        return await self.context.call(provider)

    def wire(self, name: str) -> Any:
        return self.wires.get(name)  # built-in wires are imported on first use

    def wire_names(self) -> list[str]:
        return self.wires.names()
