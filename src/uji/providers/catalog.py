"""Providers and their models: the built-in catalog, `uji.provider.add` merging, and
lazy model lists.

A provider's models come from its table, from a `models = function() ... end` given
to `uji.provider.add`, or, for Ollama, LM Studio and custom, from the server itself
(`providers/discovery.py`). The last two are *lazy*: loaded when first needed, with the
states of the reference (idle, loading, loaded, failed). A load merges its models into
the list by id; a failed one keeps the old list and the next need tries again.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from uji.providers.efforts import DEFAULT_EFFORTS
from uji.record import Record, Struct, field, record_fields
from uji.wires.base import EFFORTS

if TYPE_CHECKING:
    from uji.providers.builtin import ProviderSpec
    from uji.providers.oauth import OAuthSettings
    from uji.wires.base import Usage, Wire

__all__ = [
    "DEFAULT_EFFORTS",
    "EFFORTS",
    "STATES",
    "Catalog",
    "CatalogError",
    "Model",
    "Prices",
    "Provider",
]

IDLE, LOADING, LOADED, FAILED = "idle", "loading", "loaded", "failed"
STATES = (IDLE, LOADING, LOADED, FAILED)

# Fetches a lazy provider's model specs (a list of ids or tables); raises on failure.
Fetch = Callable[["Provider"], Awaitable[Any]]


PRICE_FIELDS = ("input", "output", "cache_read", "cache_write")


class Prices(Record):
    """A model's list prices in dollars per million tokens, the shape models.dev uses.
    A cache price left out is charged as input (a provider without a separate price for
    it bills those tokens as input)."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def of(self, usage: Usage) -> float:
        """What `usage` cost, in dollars."""
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (
            usage.input * self.input
            + usage.output * self.output
            + usage.cache_read * read
            + usage.cache_write * write
        ) / 1_000_000

    def as_dict(self) -> dict[str, float]:
        return {k: v for k in PRICE_FIELDS if (v := getattr(self, k)) is not None}


def parse_prices(spec: Any, where: str) -> Prices:
    """`cost = { input, output, cache_read?, cache_write? }`, checked; raises CatalogError."""
    if not isinstance(spec, dict) or not spec:
        raise CatalogError(
            f"{where}: cost must be a table {{input=, output=, cache_read=, cache_write=}} "
            "in dollars per million tokens"
        )
    unknown = set(spec) - set(PRICE_FIELDS)
    if unknown:
        raise CatalogError(
            f"{where}: unknown cost field(s) {', '.join(sorted(map(str, unknown)))} "
            f"(known: {', '.join(PRICE_FIELDS)})"
        )
    for key in PRICE_FIELDS:
        value = spec.get(key)
        if key in ("input", "output") and value is None:
            raise CatalogError(f"{where}: cost.{key} is required (dollars per million tokens)")
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0
        ):
            raise CatalogError(
                f"{where}: cost.{key} must be a number >= 0 (dollars per million tokens), got {value!r}"
            )
    return Prices(
        input=float(spec["input"]),
        output=float(spec["output"]),
        cache_read=None if spec.get("cache_read") is None else float(spec["cache_read"]),
        cache_write=None if spec.get("cache_write") is None else float(spec["cache_write"]),
    )


class Model(Struct):
    id: str
    context: int | None = None
    output: int | None = None
    reasoning: bool = False
    cache: bool | None = None  # prompt-cache breakpoints (Anthropic): None lets the wire decide
    images: bool | None = None
    efforts: list[str] | None = None
    name: str | None = None
    wire: str | None = None  # overrides the provider's wire for this model
    cost: Prices | None = None  # list prices, when known

    def as_dict(self) -> dict[str, Any]:
        row = {
            name: getattr(self, name) for name in record_fields(type(self)) if getattr(self, name) is not None
        }
        if self.cost is not None:
            row["cost"] = self.cost.as_dict()
        return row


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ProviderRow(TypedDict):
        """A provider as Lua sees it (`uji.provider.get`/`list`)."""

        id: str
        name: str
        wire: str
        api: str  # the late era's name for `wire`
        base_url: str
        auth_env: list[str]
        context_window: int | None
        models: list[dict[str, Any]]  # each Model.as_dict
        oauth: bool
        loop: bool
        state: str
        error: NotRequired[str]


class Provider(Struct):
    id: str
    name: str
    wire: str
    base_url: str
    auth_env: list[str] = field(default_factory=list)
    models: list[Model] = field(default_factory=list)
    context_window: int | None = None
    idle: float | None = None  # stream stall timeout in seconds (default 120)
    needs_key: bool = True
    compat: dict[str, str | bool] = field(default_factory=dict)  # openai-chat dialect options
    # Lazy models: a `models` function from Lua (called through the app), or "ollama" /
    # "openai" to ask the server what it serves.
    loader: Any = None
    discover: str | None = None
    hint: str | None = None  # said when a connection to it is refused
    # An `api` object that overrides methods (lua/api_wire.py) or streams itself: its wire
    # runs this provider's calls. None: the wire named by `wire`.
    api_wire: Wire | None = None
    loop: Any = None  # a Lua loop class: the provider runs its turns itself (lua/provider_loop.py)
    oauth: OAuthSettings | None = None  # subscription sign-in (providers/oauth.py)
    # The api object's `efforts(model)` (the levels of a model without its own list) and
    # `ready(model)` (awaited before each request), when it has them.
    api_efforts: Callable[[str], list[str] | None] | None = None
    api_ready: Callable[[str], Awaitable[None]] | None = None
    state: str = LOADED
    error: str | None = None
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def lazy(self) -> bool:
        return self.loader is not None or self.discover is not None

    def model(self, model_id: str) -> Model | None:
        for m in self.models:
            if m.id == model_id:
                return m
        return None

    def default_efforts(self, model_id: str) -> Sequence[str]:
        """The levels of a model that lists none: the api object's, else the default."""
        if self.api_efforts is not None:
            found = self.api_efforts(model_id)
            if found:
                return found
        return DEFAULT_EFFORTS

    def wire_for(self, model_id: str | None) -> str:
        """The wire a model is called through: its own `wire`, else the one its id
        calls for on this provider (`MODEL_WIRES`), else the provider's."""
        if self.api_wire is not None:
            return self.wire  # the provider's api object speaks for every model
        m = self.model(model_id) if model_id else None
        if m is not None and m.wire:
            return m.wire
        rule = MODEL_WIRES.get(self.id)
        if model_id and rule is not None and self.wire == rule[0] and rule[1].match(model_id):
            return rule[2]
        return self.wire

    def as_dict(self) -> ProviderRow:
        row: ProviderRow = {
            "id": self.id,
            "name": self.name,
            "wire": self.wire,
            "api": self.wire,  # the late era's name for the same field
            "base_url": self.base_url,
            "auth_env": list(self.auth_env),
            "context_window": self.context_window,
            "models": [m.as_dict() for m in self.models],
            "oauth": self.oauth is not None,
            "loop": self.loop is not None,
            "state": self.state,
        }
        if self.error is not None:
            row["error"] = self.error
        return row

    def merge_models(self, new: list[Model]) -> None:
        """By id: a model with a known id replaces the old one whole, in its place;
        new ids are added at the end."""
        index = {m.id: i for i, m in enumerate(self.models)}
        for m in new:
            if m.id in index:
                self.models[index[m.id]] = m
            else:
                index[m.id] = len(self.models)
                self.models.append(m)


class CatalogError(ValueError):
    pass


# Models that default to another wire than their provider's, listed or not, as long as
# the provider keeps its built-in wire: {provider id: (its wire, model id pattern, wire)}.
# OpenAI's reasoning models speak the Responses API: only there do their encrypted
# reasoning items carry across a tool loop (and the codex models serve nothing else).
MODEL_WIRES: dict[str, tuple[str, re.Pattern[str], str]] = {
    "openai": ("openai-chat", re.compile(r"(gpt-5|o[1-9])(\b|-|$)"), "responses"),
}


FIELDS = {
    "id",
    "name",
    "wire",
    "api",
    "base_url",
    "auth_env",
    "models",
    "context_window",
    "idle",
    "needs_key",
    "compat",
    "oauth",
}
# Set only by the built-in table.
BUILTIN_FIELDS = {"discover", "hint"}
MODEL_FIELDS = {"id", "name", "context", "output", "reasoning", "cache", "images", "efforts", "wire", "cost"}


# The model fields that are checked (when set): whether a value fits, and what it must be.
MODEL_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "efforts": (
        lambda v: isinstance(v, list) and all(e in EFFORTS for e in v),
        f"efforts must be a list of {', '.join(EFFORTS)}",
    ),
    "context": (lambda v: isinstance(v, int), "model context must be a whole number of tokens"),
    "output": (lambda v: isinstance(v, int), "model output must be a whole number of tokens"),
    "cache": (lambda v: isinstance(v, bool), "model cache must be true or false"),
    "name": (lambda v: isinstance(v, str), "model name must be a string"),
    "wire": (lambda v: isinstance(v, str) and bool(v), "model wire must be a wire name"),
}


def _model(spec: Any, where: str) -> Model:
    if isinstance(spec, str) and spec:
        return Model(spec)
    if not isinstance(spec, dict) or not isinstance(spec.get("id"), str) or not spec["id"]:
        raise CatalogError(f"{where}: each model is an id string or a table with an `id`")
    unknown = set(spec) - MODEL_FIELDS
    if unknown:
        raise CatalogError(f"{where}: unknown model field(s) {', '.join(sorted(unknown))}")
    for key, (fits, must) in MODEL_CHECKS.items():
        if spec.get(key) is not None and not fits(spec[key]):
            raise CatalogError(f"{where}: {must}")
    efforts = spec.get("efforts")
    cost = spec.get("cost")
    prices = parse_prices(cost, f"{where} model {spec['id']}") if cost is not None else None
    return Model(
        id=spec["id"],
        context=spec.get("context"),
        output=spec.get("output"),
        reasoning=bool(spec.get("reasoning", False)),
        cache=spec.get("cache"),
        images=spec.get("images"),
        efforts=list(efforts) if efforts is not None else None,
        name=spec.get("name"),
        wire=spec.get("wire"),
        cost=prices,
    )


def parse_models(specs: Any, where: str) -> list[Model]:
    """A `models` list (ids or tables), checked; raises CatalogError."""
    if isinstance(specs, dict) and not specs:
        specs = []  # an empty Lua table
    if not isinstance(specs, list):
        raise CatalogError(f"{where}: `models` must be a list (or a function that returns one)")
    return [_model(m, where) for m in specs]


def _text(key: str) -> Check:
    def check(value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise CatalogError(f"{where}: `{key}` must be a string")
        return value

    return check


def _base_url(value: Any, where: str) -> str:
    url: str = _text("base_url")(value, where)
    return url.rstrip("/")


def _auth_env(value: Any, where: str) -> list[str]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, dict)) or any(not isinstance(v, str) for v in names):
        raise CatalogError(f"{where}: `auth_env` must be a list of variable names")
    return list(names) if isinstance(names, list) else []  # {}: an empty Lua table


def _context_window(value: Any, where: str) -> int | None:
    if value is not None and (not isinstance(value, int) or value <= 0):
        raise CatalogError(f"{where}: `context_window` must be a whole number of tokens")
    return value


def _idle(value: Any, where: str) -> float:
    if not isinstance(value, (int, float)) or value <= 0:
        raise CatalogError(f"{where}: `idle` must be a number of seconds > 0")
    return float(value)


def _oauth(value: Any, where: str) -> OAuthSettings:
    from uji.providers.oauth import parse_settings

    try:
        return parse_settings(value)
    except ValueError as e:
        raise CatalogError(f"{where}: {e}") from None


def _compat(value: Any, where: str) -> dict[str, str | bool]:
    from uji.wires.openai_chat import check_compat

    try:
        return check_compat(value)
    except ValueError as e:
        raise CatalogError(f"{where}: {e}") from None


# Each field of a provider table, in the order they are checked: how its value is checked
# and made what the Provider holds (a CatalogError names what is wrong).
Check = Callable[[Any, str], Any]
CHECKS: dict[str, Check] = {
    "name": _text("name"),
    "wire": _text("wire"),
    "base_url": _base_url,
    "auth_env": _auth_env,
    "models": parse_models,
    "context_window": _context_window,
    "idle": _idle,
    "compat": _compat,
    "oauth": _oauth,
    "needs_key": lambda value, where: bool(value),
}
UNSET_BY_NIL = {"auth_env", "models"}  # a nil value leaves these as they are
SETTABLE = ("name", "wire", "base_url", "auth_env", "context_window", "idle", "compat", "oauth", "needs_key")


def _checked(spec: dict[str, Any], where: str) -> dict[str, Any]:
    """The fields `spec` sets, checked, as the Provider holds them: all are checked before
    any is set, so a provider is never left half changed."""
    return {
        key: check(spec[key], where)
        for key, check in CHECKS.items()
        if key in spec and not (spec[key] is None and key in UNSET_BY_NIL)
    }


def _new_provider_spec(
    pid: str, spec: dict[str, Any], builtin: bool, has_loop: bool = False
) -> tuple[dict[str, Any], bool]:
    """The spec of a provider not known yet: `custom` filled in from its template (what a
    custom endpoint needs besides its URL, as the built-in table does), and checked
    whole. Returns it and whether it counts as built in."""
    if pid == "custom":
        from uji.providers.builtin import CUSTOM

        spec = {**CUSTOM, **{k: v for k, v in spec.items() if v is not None}}
        builtin = True
    missing = [
        k for k in ("name", "wire", "base_url") if not spec.get(k) and not (k == "base_url" and has_loop)
    ]
    if missing:
        raise CatalogError(f"uji.provider.add: a new provider needs {', '.join(missing)}")
    return spec, builtin


def _apply(provider: Provider, fields: dict[str, Any], new: bool) -> None:
    """The checked fields set on the provider (a new one or the one they merge into)."""
    for key in SETTABLE:
        if key in fields:
            setattr(provider, key, fields[key])
    if "base_url" in fields and provider.discover is not None and not new:
        provider.state, provider.error = IDLE, None  # another server: ask it again
    if "models" in fields:
        provider.models = fields["models"]
        provider.loader = None
    if new and "needs_key" not in fields:
        provider.needs_key = bool(provider.auth_env)


class Catalog:
    def __init__(self) -> None:
        from uji.providers.builtin import BUILTIN

        self._providers: dict[str, Provider] = {}
        # A built-in provider is checked and made when first asked for: a run uses one or
        # two of them, and making them all (their hundreds of models) is 2 % of a turn.
        self._builtin: dict[str, ProviderSpec] = {spec["id"]: spec for spec in BUILTIN}

    def get(self, provider_id: str) -> Provider | None:
        spec = self._builtin.pop(provider_id, None)
        if spec is not None:
            self.add(dict(spec), builtin=True)
        return self._providers.get(provider_id)

    def remove(self, provider_id: str) -> bool:
        pending = self._builtin.pop(provider_id, None) is not None
        return self._providers.pop(provider_id, None) is not None or pending

    def key_variables(self) -> list[str]:
        """Every `auth_env` variable of the known providers, the built-in ones always
        (a secret the gate cuts out of results and keeps from commands)."""
        from uji.providers.builtin import BUILTIN

        names: list[str] = []
        for spec in BUILTIN:
            names += [v for v in spec.get("auth_env") or [] if isinstance(v, str)]
        for provider in self._providers.values():
            names += list(provider.auth_env)
        return sorted(set(names))

    def made(self) -> list[Provider]:
        """The providers made so far: a built-in one nobody asked for has no models and
        no load running."""
        return list(self._providers.values())

    def list(self) -> list[Provider]:
        for provider_id in list(self._builtin):
            self.get(provider_id)
        return sorted(self._providers.values(), key=lambda p: p.id)

    def add(
        self, spec: dict[str, Any], loader: Any = None, *, builtin: bool = False, loop: Any = None
    ) -> Provider:
        """Add a provider, or merge the given fields into the one with the same id.
        `loader` is a lazy `models` function (it replaces a `models` list); `loop` a Lua
        loop class (a provider with one needs no base_url)."""
        pid = spec.get("id")
        if not isinstance(pid, str) or not pid:
            raise CatalogError("uji.provider.add: `id` is required")
        unknown = set(spec) - FIELDS - (BUILTIN_FIELDS if builtin else set())
        if unknown:
            raise CatalogError(f"uji.provider.add: unknown field(s) {', '.join(sorted(unknown))}")
        if "api" in spec and "wire" not in spec:
            spec = dict(spec, wire=spec["api"])
        old = self.get(pid)  # a built-in one is made first, then merged into
        if old is None:
            if loop is not None and not spec.get("base_url"):
                spec = dict(spec, base_url="")
            spec, builtin = _new_provider_spec(pid, spec, builtin, loop is not None)
        fields = _checked(spec, f"uji.provider.add {pid}")
        provider = old or Provider(id=pid, name=spec["name"], wire=spec["wire"], base_url=spec["base_url"])
        _apply(provider, fields, old is None)
        if builtin:
            provider.discover = spec.get("discover", provider.discover)
            provider.hint = spec.get("hint", provider.hint)
        if loader is not None:
            provider.loader = loader
        if loop is not None:
            provider.loop = loop
        if "models" in fields or loader is not None or old is None:
            provider.state, provider.error = (IDLE if provider.lazy else LOADED), None
        self._providers[pid] = provider
        return provider

    async def load(self, provider: Provider, fetch: Fetch) -> None:
        """Load a lazy provider's models if they are not loaded yet (a failed load is
        tried again). Concurrent needs share one load. Never raises: the outcome is in
        `provider.state` and `provider.error`."""
        if not provider.lazy or provider.state == LOADED:
            return
        task = provider._task
        if task is None or task.done():
            task = asyncio.get_running_loop().create_task(self._load(provider, fetch))
            provider._task = task
        # Shielded: a waiter that is interrupted does not cancel the load for the others.
        await asyncio.shield(task)

    async def _load(self, provider: Provider, fetch: Fetch) -> None:
        provider.state = LOADING
        try:
            specs = await fetch(provider)
            models = parse_models(specs, f"{provider.id}: models")
        except asyncio.CancelledError:
            provider.state = FAILED
            provider.error = "the load was cancelled"
            raise
        except Exception as e:
            provider.state = FAILED
            provider.error = str(e) or type(e).__name__
            return
        provider.merge_models(models)
        provider.state, provider.error = LOADED, None
