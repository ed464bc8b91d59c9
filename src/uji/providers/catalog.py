"""Providers and their models: the built-in catalog, and `uji.provider.add` merging."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

EFFORTS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
DEFAULT_EFFORTS = ("off", "minimal", "low", "medium", "high")


@dataclass
class Model:
    id: str
    context: int | None = None
    output: int | None = None
    reasoning: bool = False
    cache: bool = False
    images: bool | None = None
    efforts: list[str] | None = None

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

    def model(self, model_id: str) -> Model | None:
        for m in self.models:
            if m.id == model_id:
                return m
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "wire": self.wire,
            "base_url": self.base_url,
            "auth_env": list(self.auth_env),
            "context_window": self.context_window,
            "models": [m.as_dict() for m in self.models],
        }


class CatalogError(ValueError):
    pass


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
}
MODEL_FIELDS = {"id", "context", "output", "reasoning", "cache", "images", "efforts"}


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
    return Model(
        id=spec["id"],
        context=spec.get("context"),
        output=spec.get("output"),
        reasoning=bool(spec.get("reasoning", False)),
        cache=bool(spec.get("cache", False)),
        images=spec.get("images"),
        efforts=efforts,
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
        if "needs_key" in spec:
            provider.needs_key = bool(spec["needs_key"])
        elif old is None:
            provider.needs_key = bool(provider.auth_env)
        self._providers[pid] = provider
        return provider


# The built-in providers. Model lists hold what is known to work well; any model id
# the provider serves can be used with `uji.model.use` or `--model`.
BUILTIN: list[dict[str, Any]] = [
    {
        "id": "anthropic",
        "name": "Anthropic",
        "wire": "anthropic",
        "base_url": "https://api.anthropic.com/v1",
        "auth_env": ["ANTHROPIC_API_KEY"],
    },
    {
        "id": "openai",
        "name": "OpenAI",
        "wire": "openai-chat",
        "base_url": "https://api.openai.com/v1",
        "auth_env": ["OPENAI_API_KEY"],
    },
    {
        "id": "google",
        "name": "Google Gemini",
        "wire": "gemini",
        "base_url": "https://generativelanguage.googleapis.com/v1beta",
        "auth_env": ["GEMINI_API_KEY", "GOOGLE_API_KEY"],
    },
    {
        "id": "openrouter",
        "name": "OpenRouter",
        "wire": "openai-chat",
        "base_url": "https://openrouter.ai/api/v1",
        "auth_env": ["OPENROUTER_API_KEY"],
    },
    {
        "id": "groq",
        "name": "Groq",
        "wire": "openai-chat",
        "base_url": "https://api.groq.com/openai/v1",
        "auth_env": ["GROQ_API_KEY"],
    },
    {
        "id": "deepseek",
        "name": "DeepSeek",
        "wire": "openai-chat",
        "base_url": "https://api.deepseek.com/v1",
        "auth_env": ["DEEPSEEK_API_KEY"],
    },
    {
        "id": "mistral",
        "name": "Mistral",
        "wire": "openai-chat",
        "base_url": "https://api.mistral.ai/v1",
        "auth_env": ["MISTRAL_API_KEY"],
    },
    {
        "id": "xai",
        "name": "xAI",
        "wire": "openai-chat",
        "base_url": "https://api.x.ai/v1",
        "auth_env": ["XAI_API_KEY"],
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
