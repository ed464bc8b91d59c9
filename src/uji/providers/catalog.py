"""Providers and their models: the built-in catalog, and `uji.provider.add` merging."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any

from uji.providers.efforts import DEFAULT_EFFORTS, EFFORTS

__all__ = ["BUILTIN", "DEFAULT_EFFORTS", "EFFORTS", "Catalog", "CatalogError", "Model", "Provider"]


@dataclass
class Model:
    id: str
    context: int | None = None
    output: int | None = None
    reasoning: bool = False
    cache: bool = False
    images: bool | None = None
    efforts: list[str] | None = None
    wire: str | None = None  # this model's own wire, instead of the provider's

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


@dataclass
class Provider:
    id: str
    name: str
    wire: str
    base_url: str
    auth_env: list[str] = field(default_factory=list)
    models: list[Model] = field(default_factory=list)
    context_window: int | None = None
    idle: float | None = None  # stream stall timeout in seconds (default 120)
    needs_key: bool = True
    compat: dict[str, Any] = field(default_factory=dict)  # openai-chat dialect options

    def model(self, model_id: str) -> Model | None:
        for m in self.models:
            if m.id == model_id:
                return m
        return None

    def wire_for(self, model_id: str) -> str:
        """The wire a model is called through: its own `wire`, else the one its id
        calls for on this provider (`MODEL_WIRES`), else the provider's."""
        m = self.model(model_id)
        if m is not None and m.wire:
            return m.wire
        rule = MODEL_WIRES.get(self.id)
        if rule is not None and self.wire == rule[0] and rule[1].match(model_id):
            return rule[2]
        return self.wire

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "wire": self.wire,
            "api": self.wire,  # the late era's name for the same field
            "base_url": self.base_url,
            "auth_env": list(self.auth_env),
            "context_window": self.context_window,
            "models": [m.as_dict() for m in self.models],
        }


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
}
MODEL_FIELDS = {"id", "context", "output", "reasoning", "cache", "images", "efforts", "wire"}


def _model(spec: Any, where: str) -> Model:
    if isinstance(spec, str):
        return Model(spec)
    if not isinstance(spec, dict) or not isinstance(spec.get("id"), str) or not spec["id"]:
        raise CatalogError(f"{where}: each model is an id string or a table with an `id`")
    unknown = set(spec) - MODEL_FIELDS
    if unknown:
        raise CatalogError(f"{where}: unknown model field(s) {', '.join(sorted(unknown))}")
    efforts = spec.get("efforts")
    if efforts is not None and (not isinstance(efforts, list) or any(e not in EFFORTS for e in efforts)):
        raise CatalogError(f"{where}: efforts must be a list of {', '.join(EFFORTS)}")
    for key in ("context", "output"):
        if spec.get(key) is not None and not isinstance(spec[key], int):
            raise CatalogError(f"{where}: model {key} must be a whole number of tokens")
    if spec.get("wire") is not None and (not isinstance(spec["wire"], str) or not spec["wire"]):
        raise CatalogError(f"{where}: model wire must be a wire name")
    return Model(
        id=spec["id"],
        context=spec.get("context"),
        output=spec.get("output"),
        reasoning=bool(spec.get("reasoning", False)),
        cache=bool(spec.get("cache", False)),
        images=spec.get("images"),
        efforts=list(efforts) if efforts is not None else None,
        wire=spec.get("wire"),
    )


class Catalog:
    def __init__(self) -> None:
        self._providers: dict[str, Provider] = {}
        for spec in BUILTIN:
            self.add(spec)

    def get(self, provider_id: str) -> Provider | None:
        return self._providers.get(provider_id)

    def remove(self, provider_id: str) -> bool:
        return self._providers.pop(provider_id, None) is not None

    def list(self) -> list[Provider]:
        return sorted(self._providers.values(), key=lambda p: p.id)

    def add(self, spec: dict[str, Any]) -> Provider:
        """Add a provider, or merge the given fields into the one with the same id."""
        pid = spec.get("id")
        if not isinstance(pid, str) or not pid:
            raise CatalogError("uji.provider.add: `id` is required")
        unknown = set(spec) - FIELDS
        if unknown:
            raise CatalogError(f"uji.provider.add: unknown field(s) {', '.join(sorted(unknown))}")
        if "api" in spec and "wire" not in spec:
            spec = dict(spec, wire=spec["api"])
        old = self._providers.get(pid)
        if old is None:
            missing = [k for k in ("name", "wire", "base_url") if not spec.get(k)]
            if missing:
                raise CatalogError(f"uji.provider.add: a new provider needs {', '.join(missing)}")
        where = f"uji.provider.add {pid}"
        for key in ("name", "wire", "base_url"):
            if key in spec and not isinstance(spec[key], str):
                raise CatalogError(f"{where}: `{key}` must be a string")
        auth_env = spec.get("auth_env")
        if isinstance(auth_env, str):
            auth_env = [auth_env]
        if auth_env is not None and (
            not isinstance(auth_env, (list, dict)) or any(not isinstance(v, str) for v in auth_env)
        ):
            raise CatalogError(f"{where}: `auth_env` must be a list of variable names")
        models = spec.get("models")
        if models is not None and not isinstance(models, (list, dict)):
            raise CatalogError(f"{where}: `models` must be a list")
        new_models = [_model(m, where) for m in (models or [])] if models is not None else None
        provider = old or Provider(id=pid, name=spec["name"], wire=spec["wire"], base_url=spec["base_url"])
        if "name" in spec:
            provider.name = spec["name"]
        if "wire" in spec:
            provider.wire = spec["wire"]
        if "base_url" in spec:
            provider.base_url = spec["base_url"].rstrip("/")
        if auth_env is not None:
            provider.auth_env = list(auth_env) if isinstance(auth_env, list) else []
        if new_models is not None:
            provider.models = new_models
        if "context_window" in spec:
            provider.context_window = spec["context_window"]
        if "idle" in spec:
            idle = spec["idle"]
            if not isinstance(idle, (int, float)) or idle <= 0:
                raise CatalogError(f"{where}: `idle` must be a number of seconds > 0")
            provider.idle = float(idle)
        if "compat" in spec:
            from uji.wires.openai_chat import check_compat

            try:
                provider.compat = check_compat(spec["compat"])
            except ValueError as e:
                raise CatalogError(f"{where}: {e}") from None
        if "needs_key" in spec:
            provider.needs_key = bool(spec["needs_key"])
        elif old is None:
            provider.needs_key = bool(provider.auth_env)
        self._providers[pid] = provider
        return provider


# Model tables: a *starting list* as of early 2026, not a promise that it is complete
# or current. Any id the provider serves works with `uji.model.use` or `--model`; a
# model missing here just gets no capability hints (its effort is sent as asked). The
# first model of a provider is the one picked when a user names only the provider, so it
# is a widely available choice rather than the newest.
BUDGET_EFFORTS = ["off", "minimal", "low", "medium", "high", "xhigh"]


def _m(
    id: str,
    context: int,
    output: int,
    *,
    reasoning: bool = False,
    cache: bool = False,
    images: bool = True,
    efforts: list[str] | None = None,
    wire: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "id": id,
        "context": context,
        "output": output,
        "reasoning": reasoning,
        "cache": cache,
        "images": images,
    }
    if efforts is not None:
        spec["efforts"] = efforts
    if wire is not None:
        spec["wire"] = wire
    return spec


# Claude before 4.6 thinks on a token budget (any level up to the output limit works);
# 4.6 and later think adaptively at an effort of low, medium, high (and max on Opus).
ANTHROPIC_MODELS = [
    _m("claude-sonnet-4-5", 200_000, 64_000, reasoning=True, cache=True, efforts=BUDGET_EFFORTS),
    _m(
        "claude-opus-4-6",
        200_000,
        128_000,
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high", "max"],
    ),
    _m(
        "claude-sonnet-4-6",
        200_000,
        64_000,
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high"],
    ),
    _m("claude-opus-4-5", 200_000, 64_000, reasoning=True, cache=True, efforts=BUDGET_EFFORTS),
    _m("claude-haiku-4-5", 200_000, 64_000, reasoning=True, cache=True, efforts=BUDGET_EFFORTS),
    _m("claude-opus-4-1", 200_000, 32_000, reasoning=True, cache=True),
    _m("claude-sonnet-4-0", 200_000, 64_000, reasoning=True, cache=True),
]

# OpenAI caches long prompts by itself; `cache` here means "benefits from a cache key".
# "off" is listed only for models whose lowest `reasoning_effort` is "none".
OPENAI_MODELS = [
    _m("gpt-5", 400_000, 128_000, reasoning=True, cache=True, efforts=["minimal", "low", "medium", "high"]),
    _m(
        "gpt-5.2",
        400_000,
        128_000,
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high", "xhigh"],
    ),
    _m("gpt-5.1", 400_000, 128_000, reasoning=True, cache=True, efforts=["off", "low", "medium", "high"]),
    _m(
        "gpt-5-mini",
        400_000,
        128_000,
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m(
        "gpt-5-nano",
        400_000,
        128_000,
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m("gpt-4.1", 1_047_576, 32_768, cache=True),
    _m("gpt-4.1-mini", 1_047_576, 32_768, cache=True),
    _m("o3", 200_000, 100_000, reasoning=True, cache=True, efforts=["low", "medium", "high"]),
    _m("o4-mini", 200_000, 100_000, reasoning=True, cache=True, efforts=["low", "medium", "high"]),
]

# Gemini 2.5 Pro cannot switch thinking off; 3.x thinks at named levels (see the wire).
GOOGLE_MODELS = [
    _m(
        "gemini-2.5-pro",
        1_048_576,
        65_536,
        reasoning=True,
        efforts=["minimal", "low", "medium", "high", "xhigh"],
    ),
    _m(
        "gemini-2.5-flash",
        1_048_576,
        65_536,
        reasoning=True,
        efforts=["off", "minimal", "low", "medium", "high"],
    ),
    _m(
        "gemini-2.5-flash-lite",
        1_048_576,
        65_536,
        reasoning=True,
        efforts=["off", "minimal", "low", "medium", "high"],
    ),
    _m("gemini-3-pro-preview", 1_048_576, 65_536, reasoning=True, efforts=["low", "high"]),
    _m(
        "gemini-3-flash-preview",
        1_048_576,
        65_536,
        reasoning=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
]

OPENROUTER_MODELS = [
    _m(
        "anthropic/claude-sonnet-4.5",
        200_000,
        64_000,
        reasoning=True,
        efforts=["off", "low", "medium", "high"],
    ),
    _m("openai/gpt-5", 400_000, 128_000, reasoning=True, efforts=["minimal", "low", "medium", "high"]),
    _m("google/gemini-2.5-pro", 1_048_576, 65_536, reasoning=True, efforts=["low", "medium", "high"]),
    _m("deepseek/deepseek-chat", 163_840, 16_384, images=False),
]

GROQ_MODELS = [
    _m(
        "openai/gpt-oss-120b",
        131_072,
        65_536,
        reasoning=True,
        images=False,
        efforts=["low", "medium", "high"],
    ),
    _m(
        "openai/gpt-oss-20b", 131_072, 65_536, reasoning=True, images=False, efforts=["low", "medium", "high"]
    ),
    _m("llama-3.3-70b-versatile", 131_072, 32_768, images=False),
    _m("moonshotai/kimi-k2-instruct-0905", 262_144, 16_384, images=False),
]

# deepseek-chat thinks when asked (`thinking.type`); deepseek-reasoner always thinks.
DEEPSEEK_MODELS = [
    _m("deepseek-chat", 128_000, 8_192, reasoning=True, cache=True, images=False, efforts=["off", "high"]),
    _m("deepseek-reasoner", 128_000, 64_000, reasoning=True, cache=True, images=False, efforts=["high"]),
]

# Mistral rejects unknown body fields, so no effort is ever sent to it (see the dialect).
MISTRAL_MODELS = [
    _m("mistral-medium-latest", 131_072, 32_768),
    _m("mistral-large-latest", 131_072, 32_768),
    _m("devstral-medium-latest", 131_072, 32_768, images=False),
    _m("codestral-latest", 256_000, 32_768, images=False),
]

# grok-4 reasons but refuses a `reasoning_effort`; listing it as not reasoning keeps
# uji from sending one.
XAI_MODELS = [
    _m("grok-4", 256_000, 32_768),
    _m("grok-code-fast-1", 256_000, 32_768, images=False),
    _m("grok-3-mini", 131_072, 32_768, reasoning=True, images=False, efforts=["low", "high"]),
]


# The built-in providers (SPEC §4).
BUILTIN: list[dict[str, Any]] = [
    {
        "id": "anthropic",
        "name": "Anthropic",
        "wire": "anthropic",
        "base_url": "https://api.anthropic.com/v1",
        "auth_env": ["ANTHROPIC_API_KEY"],
        "models": ANTHROPIC_MODELS,
    },
    {
        "id": "openai",
        "name": "OpenAI",
        "wire": "openai-chat",
        "base_url": "https://api.openai.com/v1",
        "auth_env": ["OPENAI_API_KEY"],
        "models": OPENAI_MODELS,
    },
    {
        "id": "google",
        "name": "Google Gemini",
        "wire": "gemini",
        "base_url": "https://generativelanguage.googleapis.com/v1beta",
        "auth_env": ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        "models": GOOGLE_MODELS,
    },
    {
        "id": "openrouter",
        "name": "OpenRouter",
        "wire": "openai-chat",
        "base_url": "https://openrouter.ai/api/v1",
        "auth_env": ["OPENROUTER_API_KEY"],
        "models": OPENROUTER_MODELS,
    },
    {
        "id": "groq",
        "name": "Groq",
        "wire": "openai-chat",
        "base_url": "https://api.groq.com/openai/v1",
        "auth_env": ["GROQ_API_KEY"],
        "models": GROQ_MODELS,
    },
    {
        "id": "deepseek",
        "name": "DeepSeek",
        "wire": "openai-chat",
        "base_url": "https://api.deepseek.com/v1",
        "auth_env": ["DEEPSEEK_API_KEY"],
        "models": DEEPSEEK_MODELS,
    },
    {
        "id": "mistral",
        "name": "Mistral",
        "wire": "openai-chat",
        "base_url": "https://api.mistral.ai/v1",
        "auth_env": ["MISTRAL_API_KEY"],
        "models": MISTRAL_MODELS,
    },
    {
        "id": "xai",
        "name": "xAI",
        "wire": "openai-chat",
        "base_url": "https://api.x.ai/v1",
        "auth_env": ["XAI_API_KEY"],
        "models": XAI_MODELS,
    },
    {"id": "ollama", "name": "Ollama", "wire": "openai-chat", "base_url": "http://localhost:11434/v1"},
    {"id": "lmstudio", "name": "LM Studio", "wire": "openai-chat", "base_url": "http://localhost:1234/v1"},
    {
        "id": "custom",
        "name": "Custom (OpenAI-compatible)",
        "wire": "openai-chat",
        "base_url": "http://localhost:8080/v1",
        "auth_env": ["UJI_CUSTOM_API_KEY"],
        "needs_key": False,
    },
]
