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
from uji.events.stream import ModelChanged
from uji.paths import Paths
from uji.providers.catalog import EFFORTS, Catalog, Model, Provider
from uji.tools.builtin import builtin_tools
from uji.tools.policy import Policy
from uji.tools.registry import Registry

if TYPE_CHECKING:
    from uji.agent.loop import Agent
    from uji.lua.runtime import Runtime
    from uji.store.sessions import Store
    from uji.tools.confine import Sandbox
    from uji.wires.base import Wire

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
        # Provider key variables commands keep (uji.tool.inherit_keys): none, all, or these.
        self.inherit_keys: bool | list[str] = False
        self.roots: list[str] = []
        self.catalog = Catalog()
        from uji.wires.http import Http
        from uji.wires.registry import Wires

        self.http = Http()  # made on first use, closed by close()
        self.wires = Wires(self.http)
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
        self.base_url_override: str | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._lua: Runtime | None = None
        self._store: Store | None = None
        self._loading_config = False
        self.config_interrupted: str | None = None  # the config file an interrupt stopped
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
            self.restore_custom()
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

    def wire_names(self) -> list[str]:
        return self.wires.names()

    def wire(self, name: str) -> Wire:
        return self.wires.get(name)  # built-in wires are imported on first use

    def use_model(
        self,
        provider: str | None,
        model: str | None,
        effort: str | None = None,
        save: bool = True,
        base_url: str | None = None,
    ) -> None:
        """Choose the model. `base_url` overrides the provider's ("" resets it); for
        `custom` it is the endpoint itself, saved so it survives a restart."""
        pid = provider or self.provider_id
        if pid is None:
            raise ValueError("name a provider")
        if pid == "custom" and base_url:
            self.set_custom(base_url, save=save)
            base_url = None
        found = self.catalog.get(pid) or (self.restore_custom() if pid == "custom" else None)
        if found is None:
            if pid == "custom":
                raise ValueError("custom needs a base_url (the OpenAI-compatible server's /v1 address)")
            raise ValueError(f"unknown provider {pid!r}")
        if pid != self.provider_id:
            self.base_url_override = None  # switching provider clears the override
        if base_url is not None:
            self.base_url_override = base_url.rstrip("/") or None
        if model is None:
            model = self._last_model(found)
        if not model and not found.lazy:
            raise ValueError(f"name a model for {pid} (it lists none)")
        changed = (pid, model) != (self.provider_id, self.model_id)
        self.provider_id, self.model_id = pid, model or None
        if effort is not None:
            self.effort = effort
        if save:
            self._save_model()
        if changed:
            self.events.publish(ModelChanged(pid, model or ""))
        if found.lazy and (found.loader is not None or not model):
            self._load_in_background(found)

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
            if self.model_id:
                self.store.set_setting(f"model.{self.provider_id}", self.model_id)
            self.store.set_setting("effort", self.effort)
            self.store.set_setting("base_url", self.base_url_override)
        except Exception as e:  # a read-only database must not stop a config from loading
            self.notice(f"could not save the model choice: {e}")

    def restore_model(self) -> None:
        """The model chosen last time, saved in the database."""
        pid = self.setting("provider")
        if pid == "custom":
            self.restore_custom()
        if pid and self.catalog.get(pid):
            self.provider_id = pid
            self.model_id = self.setting(f"model.{pid}")
            effort = self.setting("effort")
            self.effort = effort if effort in EFFORTS else None
            self.base_url_override = self.setting("base_url") or None

    # The custom endpoint ------------------------------------------------------------

    def set_custom(self, base_url: str, save: bool = True) -> Provider:
        """Point `custom` at an OpenAI-compatible server; saved (the URL only: a key
        goes to auth.toml) so the next start has it too."""
        url = base_url.strip().rstrip("/")
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"the base URL must start with http:// or https://, got {base_url!r}")
        provider = self.catalog.add({"id": "custom", "base_url": url})
        if save:
            try:
                self.store.set_setting("custom.base_url", url)
            except Exception as e:
                self.notice(f"could not save the custom base URL: {e}")
        return provider

    def restore_custom(self) -> Provider | None:
        """The custom endpoint saved by /login, unless the config defined one."""
        found = self.catalog.get("custom")
        if found is not None:
            return found
        url = self.setting("custom.base_url")
        return self.catalog.add({"id": "custom", "base_url": url}) if url else None

    # Lazy model lists -----------------------------------------------------------------

    def _load_in_background(self, provider: Provider) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # loaded at the next need instead
        task = loop.create_task(self.load_provider(provider))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def load_provider(self, provider: Provider, quiet: bool = False) -> Provider:
        """Load a lazy provider's models if needed. A failure keeps the old list, says
        so in a notice (unless `quiet`), and the next need tries again. Once loaded,
        a current provider without a model gets its first one."""
        from uji.providers.catalog import FAILED

        if not provider.lazy or provider.state == "loaded":
            return provider
        await self.catalog.load(provider, self._fetch_models)
        if provider.state == FAILED:
            if not quiet:
                kept = f"; keeping the {len(provider.models)} known" if provider.models else ""
                self.notice(f"could not load the models of {provider.name}: {provider.error}{kept}")
        elif self.provider_id == provider.id and not self.model_id and provider.models:
            self.model_id = _first_chat_model(provider)
            self.events.publish(ModelChanged(provider.id, self.model_id or ""))
        return provider

    async def _fetch_models(self, provider: Provider) -> Any:
        if provider.loader is not None:
            rt = self.lua
            values = await rt.call(provider.loader)
            if not values or values[0] is None:
                why = rt.convert.to_python(values[1]) if len(values) > 1 else None
                raise ValueError(str(why) if why else "the models function returned nothing")
            return rt.convert.to_python(values[0])
        from uji.providers.auth import find_key
        from uji.providers.discovery import discover

        try:
            key = find_key(self.paths.auth_file, provider)
        except Exception:
            key = None
        url = self.base_url(provider)
        try:
            return await discover(self.http, url, provider.discover or "openai", key)
        except Exception as e:
            hint = f" - {provider.hint}" if provider.hint and "connect" in str(e) else ""
            raise ValueError(f"{e}{hint}") from None

    async def ready_model(self) -> None:
        """Before a request: a `models` function has run, and a provider chosen without
        a model has one (its first)."""
        provider = self.provider()
        if provider is None or not provider.lazy or provider.state == "loaded":
            return
        if provider.loader is not None or not self.model_id:
            await self.load_provider(provider)

    async def model_choices(self) -> list[tuple[str, str]]:
        """What /models offers: the models of the providers that have a key (or need
        none) and of the current one, lazy lists loaded first (all at once). A local
        server that is not running just lists nothing."""
        from uji.providers import auth

        wanted: list[Provider] = []
        for provider in self.catalog.list():
            try:
                ready = not provider.needs_key or auth.find_key(self.paths.auth_file, provider) is not None
            except auth.AuthError:
                ready = False
            if ready or provider.id == self.provider_id:
                wanted.append(provider)
        await asyncio.gather(
            *(
                self.load_provider(p, quiet=p.loader is None and p.id != self.provider_id)
                for p in wanted
                if p.lazy
            )
        )
        choices = [(p.id, m.id) for p in wanted for m in p.models]
        current = (self.provider_id or "", self.model_id or "")
        if self.provider_id and self.model_id and current not in choices:
            choices.insert(0, current)
        return choices

    # The local server probe ---------------------------------------------------------

    async def find_local_server(self) -> str | None:
        """With no model chosen: look for a local server on the usual loopback ports and
        use it (not saved). Returns the notice saying what was picked, or None."""
        from uji.providers import probe

        try:
            targets = probe.targets()
        except ValueError as e:
            self.notice(str(e))
            return None
        found = await probe.find(self.http, targets)
        if found is None:
            return None
        if found.provider == "custom":
            provider = self.catalog.add({"id": "custom", "base_url": found.base_url})
        else:
            provider = self.catalog.get(found.provider) or self.catalog.add(
                {"id": found.provider, "base_url": found.base_url}
            )
        provider.merge_models([Model(m["id"]) for m in found.models])
        provider.state, provider.error = "loaded", None
        base = found.base_url if found.base_url != provider.base_url else None
        model = _first_chat_model(provider)
        self.use_model(provider.id, model, save=False)
        self.base_url_override = base
        return f"no model chosen; found {found.label} at {found.base_url}: using {provider.id}/{model}"

    def provider(self) -> Provider | None:
        return self.catalog.get(self.provider_id) if self.provider_id else None

    def base_url(self, provider: Provider | None = None) -> str:
        """Where requests go: the `uji.model.use{base_url=}` override for the current
        provider, else the provider's own."""
        provider = provider or self.provider()
        if provider is None:
            return ""
        if provider.id == self.provider_id and self.base_url_override:
            return self.base_url_override
        return provider.base_url

    def current_model(self) -> dict[str, Any]:
        provider = self.provider()
        model = provider.model(self.model_id) if provider and self.model_id else None
        return {
            "provider": self.provider_id or "",
            "name": provider.name if provider else "",
            "model": self.model_id or "",
            "base_url": self.base_url(provider) if provider else "",
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
        for task in list(self._background):
            task.cancel()
        for provider in self.catalog.list():  # a models load still running
            if provider._task is not None and not provider._task.done():
                provider._task.cancel()
        await self.events.drain()
        for hook in self.on_close:
            hook()
        from uji.tools.builtin.run_command import remove_spills

        remove_spills()  # run_command's overflow files live only as long as the session
        if self._lua is not None:
            self._lua.close()
        if self._store is not None:
            self._store.close()
        await self.http.aclose()


def _first_chat_model(provider: Provider) -> str | None:
    """The model to pick when none was named: the first that is not an embedding model."""
    for m in provider.models:
        if "embed" not in m.id.lower():
            return m.id
    return provider.models[0].id if provider.models else None
