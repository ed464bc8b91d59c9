"""The running uji: the registries a config fills in, and the services a turn uses.

One `App` per process. `uji run` and the terminal UI both build one, load the Lua
config into it, then drive turns through `agent.loop`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from uji.commands import Commands
from uji.events import Events, Handler
from uji.paths import Paths
from uji.providers.catalog import EFFORTS, Catalog, Provider
from uji.tools.builtin import builtin_tools
from uji.tools.policy import Policy
from uji.tools.registry import Registry

if TYPE_CHECKING:
    from uji.agent.loop import Agent
    from uji.lua.runtime import Runtime
    from uji.store.sessions import Store
    from uji.tools.confine import Sandbox

Notice = Callable[[str], None]


@dataclass
class ContextProvider:
    name: str
    fn: Any
    priority: float
    seq: int


class App:
    def __init__(self, paths: Paths, cwd: str | None = None, notice: Notice | None = None) -> None:
        self.paths = paths
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self._notice_sink: Notice = notice or (lambda text: None)
        self.registry = Registry()
        for tool in builtin_tools():
            self.registry.add(tool)
        self.policy = Policy()
        self.confined = True
        self.roots: list[str] = []
        self.catalog = Catalog()
        self.wires: dict[str, Any] = {}
        self.commands = Commands()
        self._context: dict[str, ContextProvider] = {}
        self._context_seq = 0
        self.cache = "short"  # prompt caching: off | short (5 min) | long (1 h)
        self.compaction: dict[str, Any] = {"enabled": True, "reserve": None, "keep_recent": None}
        # The frontend (uji run or the UI) fills these in.
        self.agent: Agent | None = None
        self.on_submit: Callable[[str], None] | None = None
        self.on_interrupt: Callable[[], bool] | None = None
        self.events = Events(self._invoke_handler, self.notice)
        self.provider_id: str | None = None
        self.model_id: str | None = None
        self.effort: str | None = None
        self._lua: Runtime | None = None
        self._store: Store | None = None
        self._loading_config = False
        self._scheduled: list[Any] = []
        # Run by close() before the Lua runtime goes, e.g. to kill plugin jobs.
        self.on_close: list[Callable[[], None]] = []

    # Notices ------------------------------------------------------------------

    def notice(self, text: str) -> None:
        self._notice_sink(text)

    def set_notice_sink(self, sink: Notice) -> None:
        self._notice_sink = sink

    # Lua ------------------------------------------------------------------------

    @property
    def lua(self) -> Runtime:
        if self._lua is None:
            self._lua = self._make_runtime()
        return self._lua

    def _make_runtime(self) -> Runtime:
        from uji.lua.api import install_all
        from uji.lua.runtime import RUNTIME_DIR, Runtime

        return Runtime(install_all(self), [self.paths.lua_dir, RUNTIME_DIR])

    async def _invoke_handler(self, handler: Handler, payload: dict[str, Any]) -> Any:
        return await self.call_function(handler.fn, payload)

    async def call_function(self, fn: Any, *args: Any) -> Any:
        """Call a handler a config gave us, Lua or Python (a hook, a context provider),
        and return its first result as a Python value."""
        if not self._is_lua(fn):
            result = fn(*args)
            return await result if asyncio.iscoroutine(result) else result
        rt = self.lua
        values = await rt.call(fn, *(rt.convert.to_lua(a, json_null=False) for a in args))
        return rt.convert.to_python(values[0]) if values else None

    def _is_lua(self, fn: Any) -> bool:
        return self._lua is not None and self._lua.convert.lua_type(fn) is not None

    def spawn_lua(self, fn: Any, *args: Any) -> None:
        self.lua.spawn(fn, *args, on_error=self.notice)

    def schedule_lua(self, fn: Any) -> None:
        """uji.schedule: after the current code; during config, after all of it loaded."""
        if self._loading_config:
            self._scheduled.append(fn)
        else:
            asyncio.get_running_loop().call_soon(self.spawn_lua, fn)

    async def load_config(self) -> None:
        from uji.config import load_config

        self._loading_config = True
        try:
            await load_config(self)
        finally:
            self._loading_config = False
        if self.provider_id is None:
            # The config chose no model: the one saved last time (its provider may be
            # one the config just added).
            self.restore_model()
        scheduled, self._scheduled = self._scheduled, []
        for fn in scheduled:
            self.spawn_lua(fn)

    # Context providers -----------------------------------------------------------

    def add_context_provider(self, name: str, fn: Any, priority: float = 50) -> None:
        old = self._context.get(name)
        if old is None:
            self._context_seq += 1
        self._context[name] = ContextProvider(name, fn, priority, old.seq if old else self._context_seq)

    def remove_context_provider(self, name: str) -> bool:
        return self._context.pop(name, None) is not None

    def context_providers(self) -> list[ContextProvider]:
        return sorted(self._context.values(), key=lambda p: (p.priority, p.seq))

    async def call_context_provider(self, provider: ContextProvider) -> Any:
        return await self.call_function(provider.fn)

    # Files ----------------------------------------------------------------------

    def sandbox(self) -> Sandbox:
        from uji.tools.confine import Sandbox

        return Sandbox(self.cwd, list(self.roots), self.confined)  # it expands `~/`

    @property
    def store(self) -> Store:
        if self._store is None:
            from uji.store.sessions import Store

            self._store = Store(self.paths.db)
        return self._store

    # Wires, providers, models --------------------------------------------------

    BUILTIN_WIRES = ("anthropic", "gemini", "openai-chat", "responses")

    def wire_names(self) -> list[str]:
        return sorted({*self.BUILTIN_WIRES, *self.wires})

    def wire(self, name: str) -> Any:
        if name in self.wires:
            return self.wires[name]
        # Imported on first use: a run talks to one provider, so it loads one wire.
        if name == "openai-chat":
            from uji.wires.openai_chat import OpenAIChatWire

            self.wires[name] = OpenAIChatWire()
        elif name == "anthropic":
            from uji.wires.anthropic import AnthropicWire

            self.wires[name] = AnthropicWire()
        elif name == "gemini":
            from uji.wires.gemini import GeminiWire

            self.wires[name] = GeminiWire()
        elif name == "responses":
            from uji.wires.responses import ResponsesWire

            self.wires[name] = ResponsesWire()
        else:
            raise LookupError(f"no wire named {name!r} (known: {', '.join(self.wire_names())})")
        return self.wires[name]

    def use_model(
        self, provider: str | None, model: str | None, effort: str | None = None, save: bool = True
    ) -> None:
        pid = provider or self.provider_id
        if pid is None:
            raise ValueError("name a provider")
        found = self.catalog.get(pid)
        if found is None:
            raise ValueError(f"unknown provider {pid!r}")
        if model is None:
            model = self._last_model(found)
        if not model:
            raise ValueError(f"name a model for {pid} (it lists none)")
        changed = (pid, model) != (self.provider_id, self.model_id)
        self.provider_id, self.model_id = pid, model
        if effort is not None:
            self.effort = effort
        if save:
            self._save_model()
        if changed:
            self.events.emit("model_changed", {"provider": pid, "model": model})

    def _last_model(self, provider: Provider) -> str | None:
        saved = self.setting(f"model.{provider.id}")
        if saved:
            return saved
        return provider.models[0].id if provider.models else None

    def setting(self, key: str) -> str | None:
        try:
            return self.store.get_setting(key)
        except Exception:
            return None

    def _save_model(self) -> None:
        try:
            self.store.set_setting("provider", self.provider_id)
            self.store.set_setting(f"model.{self.provider_id}", self.model_id)
            self.store.set_setting("effort", self.effort)
        except Exception as e:  # a read-only database must not stop a config from loading
            self.notice(f"could not save the model choice: {e}")

    def restore_model(self) -> None:
        """The model chosen last time, saved in the database."""
        pid = self.setting("provider")
        if pid and self.catalog.get(pid):
            self.provider_id = pid
            self.model_id = self.setting(f"model.{pid}")
            effort = self.setting("effort")
            self.effort = effort if effort in EFFORTS else None

    def provider(self) -> Provider | None:
        return self.catalog.get(self.provider_id) if self.provider_id else None

    def current_model(self) -> dict[str, Any]:
        provider = self.provider()
        model = provider.model(self.model_id) if provider and self.model_id else None
        return {
            "provider": self.provider_id or "",
            "name": provider.name if provider else "",
            "model": self.model_id or "",
            "base_url": provider.base_url if provider else "",
            "effort": self.effort,
            "images": model.images if model else None,
        }

    def model_images(self) -> bool | None:
        """Whether the current model takes images: the catalog's word, else what a
        refused request taught us (saved), else unknown (None)."""
        provider = self.provider()
        model = provider.model(self.model_id) if provider and self.model_id else None
        if model is not None and model.images is not None:
            return model.images
        if self.setting(f"images.{self.provider_id}/{self.model_id}") == "no":
            return False
        return None

    def remember_text_only(self) -> None:
        try:
            self.store.set_setting(f"images.{self.provider_id}/{self.model_id}", "no")
        except Exception as e:
            self.notice(f"could not save that {self.model_id} takes no images: {e}")

    def model_efforts(self) -> list[str]:
        """What the current model accepts, least to most; empty if it does not reason."""
        from uji.providers.efforts import accepted

        provider = self.provider()
        return accepted(provider.model(self.model_id) if provider and self.model_id else None)

    async def close(self) -> None:
        await self.events.drain()
        for hook in self.on_close:
            hook()
        if self._lua is not None:
            self._lua.close()
        if self._store is not None:
            self._store.close()
