"""Which model a turn uses: the provider catalog, the current choice and its saving,
lazy model lists, and the local server probe.

The choice is saved in the store's settings (the provider, its last model, the
effort, a base URL override, the custom endpoint) so the next start has it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypedDict

from uji.events.stream import ModelChanged
from uji.providers.catalog import EFFORTS, Catalog, Model, Provider

if TYPE_CHECKING:
    from uji.events.stream import Event
    from uji.store.sessions import Store
    from uji.wires.http import Http

Publish = Callable[["Event"], None]
# Runs a provider's `models` function (from the config) and returns its list.
RunLoader = Callable[[Any], Awaitable[Any]]


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class CurrentModel(TypedDict):
        """`uji.model.current()`."""

        provider: str
        name: str
        model: str
        base_url: str
        effort: str | None
        images: bool | None


class ModelSelection:
    def __init__(
        self,
        catalog: Catalog,
        store: Callable[[], Store],
        publish: Publish,
        notice: Callable[[str], None],
        auth_file: str,
        run_loader: RunLoader,
        http: Http,
    ) -> None:
        """`store` gives the settings store when first needed (opening it is not free);
        `publish` tells the hooks (`model_changed`)."""
        self.catalog = catalog
        self._store = store
        self._publish = publish
        self._notice = notice
        self.auth_file = auth_file
        self._run_loader = run_loader
        self._http = http
        self.provider_id: str | None = None
        self.model_id: str | None = None
        self.effort: str | None = None
        self.base_url_override: str | None = None
        self._background: set[asyncio.Task[Any]] = set()

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
        found = self._provider_to_use(pid)
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
            self._publish(ModelChanged(pid, model or ""))
        if found.lazy and (found.loader is not None or not model):
            self._load_in_background(found)

    def _provider_to_use(self, pid: str) -> Provider:
        """The provider `use_model` switches to (`custom` as last saved), or why none."""
        found = self.catalog.get(pid) or (self.restore_custom() if pid == "custom" else None)
        if found is None:
            if pid == "custom":
                raise ValueError("custom needs a base_url (the OpenAI-compatible server's /v1 address)")
            raise ValueError(f"unknown provider {pid!r}")
        return found

    def _last_model(self, provider: Provider) -> str | None:
        saved = self.setting(f"model.{provider.id}")
        if saved:
            return saved
        return provider.models[0].id if provider.models else None

    def setting(self, key: str) -> str | None:
        try:
            return self._store().get_setting(key)
        except Exception:
            return None

    def _save_model(self) -> None:
        try:
            values = {"provider": self.provider_id, "effort": self.effort, "base_url": self.base_url_override}
            if self.model_id:
                values[f"model.{self.provider_id}"] = self.model_id
            self._store().set_settings(values)
        except Exception as e:  # a read-only database must not stop a config from loading
            self._notice(f"could not save the model choice: {e}")

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
                self._store().set_setting("custom.base_url", url)
            except Exception as e:
                self._notice(f"could not save the custom base URL: {e}")
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
                self._notice(f"could not load the models of {provider.name}: {provider.error}{kept}")
        elif self.provider_id == provider.id and not self.model_id and provider.models:
            self.model_id = first_chat_model(provider)
            self._publish(ModelChanged(provider.id, self.model_id or ""))
        return provider

    async def _fetch_models(self, provider: Provider) -> Any:
        if provider.loader is not None:
            return await self._run_loader(provider.loader)
        from uji.providers.auth import find_key
        from uji.providers.discovery import discover

        try:
            key = find_key(self.auth_file, provider)
        except Exception:
            key = None
        url = self.base_url(provider)
        try:
            return await discover(self._http, url, provider.discover or "openai", key)
        except Exception as e:
            hint = f" - {provider.hint}" if provider.hint and "connect" in str(e) else ""
            raise ValueError(f"{e}{hint}") from None

    async def ready_model(self) -> None:
        """Before a request: a `models` function has run, and a provider chosen without
        a model has one (its first)."""
        provider = self.provider()
        if provider is not None and provider.api_ready is not None and self.model_id:
            await provider.api_ready(self.model_id)
        if provider is not None and provider.oauth is not None:
            from uji.providers.auth import refresh_if_expired

            await refresh_if_expired(self.auth_file, provider.id, provider.name, provider.oauth)
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
                ready = not provider.needs_key or auth.find_key(self.auth_file, provider) is not None
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
            self._notice(str(e))
            return None
        found = await probe.find(self._http, targets)
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
        model = first_chat_model(provider)
        self.use_model(provider.id, model, save=False)
        self.base_url_override = base
        return f"no model chosen; found {found.label} at {found.base_url}: using {provider.id}/{model}"

    # The current model ----------------------------------------------------------------

    def provider(self) -> Provider | None:
        return self.catalog.get(self.provider_id) if self.provider_id else None

    def own_loop(self) -> Any:
        """The current provider's own loop (agent/own_loop.py `OwnLoop`), or None."""
        provider = self.catalog.get(self.provider_id) if self.provider_id else None
        return provider.loop if provider is not None else None

    def model(self) -> Model | None:
        """The current model's catalog entry, if it has one."""
        provider = self.provider()
        return provider.model(self.model_id) if provider and self.model_id else None

    def base_url(self, provider: Provider | None = None) -> str:
        """Where requests go: the `uji.model.use{base_url=}` override for the current
        provider, else the provider's own."""
        provider = provider or self.provider()
        if provider is None:
            return ""
        if provider.id == self.provider_id and self.base_url_override:
            return self.base_url_override
        return provider.base_url

    def current_model(self) -> CurrentModel:
        provider = self.provider()
        model = self.model()
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
        model = self.model()
        if model is not None and model.images is not None:
            return model.images
        if self.setting(f"images.{self.provider_id}/{self.model_id}") == "no":
            return False
        return None

    def remember_text_only(self) -> None:
        try:
            self._store().set_setting(f"images.{self.provider_id}/{self.model_id}", "no")
        except Exception as e:
            self._notice(f"could not save that {self.model_id} takes no images: {e}")

    def model_efforts(self) -> list[str]:
        """What the current model accepts, least to most; empty if it does not reason."""
        from uji.providers.efforts import accepted

        provider = self.provider()
        if provider is None or not self.model_id:
            return accepted(self.model())
        return accepted(self.model(), provider.default_efforts(self.model_id))

    def close(self) -> None:
        """Cancel the model lists still loading."""
        for task in list(self._background):
            task.cancel()
        for provider in self.catalog.made():  # a models load still running
            if provider._task is not None and not provider._task.done():
                provider._task.cancel()


def first_chat_model(provider: Provider) -> str | None:
    """The model to pick when none was named: the first that is not an embedding model."""
    for m in provider.models:
        if "embed" not in m.id.lower():
            return m.id
    return provider.models[0].id if provider.models else None
