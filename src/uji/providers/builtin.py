"""The built-in providers: the original's 22, and the `custom` template.

Model tables are a *starting list* as of early 2026, not a promise that they are complete
or current. Any id a provider serves works with `uji.model.use` or `--model`; a model
missing here just gets no capability hints (its effort is sent as asked, and whether it
takes images is learnt from a refusal). The first model of a provider is the one picked
when a user names only the provider, so it is a widely available choice rather than the
newest. `images=None` means "not known"; `wire` on a model overrides the provider's.

Ollama, LM Studio and custom have no table: their models are discovered from the server
(`GET /v1/models`, and Ollama's `/api/tags`) when they are first needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Cost(TypedDict, total=False):
        """Dollars per million tokens."""

        input: float
        output: float
        cache_read: float
        cache_write: float

    class ModelSpec(TypedDict):
        """A model of a built-in provider's table (as `uji.provider.add`'s `models` take it)."""

        id: str
        context: int
        output: int
        reasoning: bool
        cache: bool
        name: NotRequired[str]
        images: NotRequired[bool]
        efforts: NotRequired[list[str]]
        wire: NotRequired[str]
        cost: NotRequired[Cost]

    class ProviderSpec(TypedDict, total=False):
        """A built-in provider, as `uji.provider.add` takes one (and the fields only a
        built-in one has: discover, hint)."""

        id: str
        name: str
        wire: str
        base_url: str
        auth_env: list[str]
        models: list[ModelSpec]
        needs_key: bool
        discover: str  # how its models are found: "openai" (GET /v1/models) or "ollama"
        hint: str  # what to check when its server does not answer


BUDGET_EFFORTS = ["off", "minimal", "low", "medium", "high", "xhigh"]
GPT_OSS_EFFORTS = ["low", "medium", "high"]


def _m(
    id: str,
    context: int,
    output: int,
    *,
    name: str | None = None,
    reasoning: bool = False,
    cache: bool = False,
    images: bool | None = True,
    efforts: list[str] | None = None,
    wire: str | None = None,
) -> ModelSpec:
    spec: ModelSpec = {
        "id": id,
        "context": context,
        "output": output,
        "reasoning": reasoning,
        "cache": cache,
    }
    if name is not None:
        spec["name"] = name
    if images is not None:
        spec["images"] = images
    if efforts is not None:
        spec["efforts"] = efforts
    if wire is not None:
        spec["wire"] = wire
    return spec


# Claude before 4.6 thinks on a token budget (any level up to the output limit works);
# 4.6 and later think adaptively at an effort of low, medium, high (and max on Opus).
ANTHROPIC_MODELS = [
    _m(
        "claude-sonnet-4-5",
        200_000,
        64_000,
        name="Claude Sonnet 4.5",
        reasoning=True,
        cache=True,
        efforts=BUDGET_EFFORTS,
    ),
    _m(
        "claude-opus-4-6",
        200_000,
        128_000,
        name="Claude Opus 4.6",
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high", "max"],
    ),
    _m(
        "claude-sonnet-4-6",
        200_000,
        64_000,
        name="Claude Sonnet 4.6",
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high"],
    ),
    _m(
        "claude-opus-4-5",
        200_000,
        64_000,
        name="Claude Opus 4.5",
        reasoning=True,
        cache=True,
        efforts=BUDGET_EFFORTS,
    ),
    _m(
        "claude-haiku-4-5",
        200_000,
        64_000,
        name="Claude Haiku 4.5",
        reasoning=True,
        cache=True,
        efforts=BUDGET_EFFORTS,
    ),
    _m("claude-opus-4-1", 200_000, 32_000, name="Claude Opus 4.1", reasoning=True, cache=True),
    _m("claude-sonnet-4-0", 200_000, 64_000, name="Claude Sonnet 4", reasoning=True, cache=True),
]

# OpenAI caches long prompts by itself; `cache` here means "benefits from a cache key".
# "off" is listed only for models whose lowest `reasoning_effort` is "none".
OPENAI_MODELS = [
    _m(
        "gpt-5",
        400_000,
        128_000,
        name="GPT-5",
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m(
        "gpt-5.2",
        400_000,
        128_000,
        name="GPT-5.2",
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high", "xhigh"],
    ),
    _m(
        "gpt-5.1",
        400_000,
        128_000,
        name="GPT-5.1",
        reasoning=True,
        cache=True,
        efforts=["off", "low", "medium", "high"],
    ),
    _m(
        "gpt-5-mini",
        400_000,
        128_000,
        name="GPT-5 mini",
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m(
        "gpt-5-nano",
        400_000,
        128_000,
        name="GPT-5 nano",
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m("gpt-4.1", 1_047_576, 32_768, name="GPT-4.1", cache=True),
    _m("gpt-4.1-mini", 1_047_576, 32_768, name="GPT-4.1 mini", cache=True),
    _m("o3", 200_000, 100_000, name="o3", reasoning=True, cache=True, efforts=["low", "medium", "high"]),
    _m(
        "o4-mini",
        200_000,
        100_000,
        name="o4-mini",
        reasoning=True,
        cache=True,
        efforts=["low", "medium", "high"],
    ),
]

# Gemini 2.5 Pro cannot switch thinking off; 3.x thinks at named levels (see the wire).
GOOGLE_MODELS = [
    _m(
        "gemini-2.5-pro",
        1_048_576,
        65_536,
        name="Gemini 2.5 Pro",
        reasoning=True,
        efforts=["minimal", "low", "medium", "high", "xhigh"],
    ),
    _m(
        "gemini-2.5-flash",
        1_048_576,
        65_536,
        name="Gemini 2.5 Flash",
        reasoning=True,
        efforts=["off", "minimal", "low", "medium", "high"],
    ),
    _m(
        "gemini-2.5-flash-lite",
        1_048_576,
        65_536,
        name="Gemini 2.5 Flash-Lite",
        reasoning=True,
        efforts=["off", "minimal", "low", "medium", "high"],
    ),
    _m(
        "gemini-3-pro-preview",
        1_048_576,
        65_536,
        name="Gemini 3 Pro (preview)",
        reasoning=True,
        efforts=["low", "high"],
    ),
    _m(
        "gemini-3-flash-preview",
        1_048_576,
        65_536,
        name="Gemini 3 Flash (preview)",
        reasoning=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
]

# grok-4 reasons but refuses a `reasoning_effort`; listing it as not reasoning keeps
# uji from sending one.
XAI_MODELS = [
    _m("grok-4", 256_000, 32_768, name="Grok 4"),
    _m("grok-code-fast-1", 256_000, 32_768, name="Grok Code Fast 1", images=False),
    _m(
        "grok-3-mini",
        131_072,
        32_768,
        name="Grok 3 Mini",
        reasoning=True,
        images=False,
        efforts=["low", "high"],
    ),
]

# deepseek-chat thinks when asked (`thinking.type`); deepseek-reasoner always thinks.
DEEPSEEK_MODELS = [
    _m(
        "deepseek-chat",
        128_000,
        8_192,
        name="DeepSeek V3 (chat)",
        reasoning=True,
        cache=True,
        images=False,
        efforts=["off", "high"],
    ),
    _m(
        "deepseek-reasoner",
        128_000,
        64_000,
        name="DeepSeek V3 (reasoner)",
        reasoning=True,
        cache=True,
        images=False,
        efforts=["high"],
    ),
]

MISTRAL_MODELS = [
    _m("mistral-medium-latest", 131_072, 32_768, name="Mistral Medium"),
    _m("mistral-large-latest", 131_072, 32_768, name="Mistral Large"),
    _m("devstral-medium-latest", 131_072, 32_768, name="Devstral Medium", images=False),
    _m("codestral-latest", 256_000, 32_768, name="Codestral", images=False),
    _m("magistral-medium-latest", 40_960, 40_960, name="Magistral Medium", reasoning=True),
]

GROQ_MODELS = [
    _m(
        "openai/gpt-oss-120b",
        131_072,
        65_536,
        name="GPT-OSS 120B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
    _m(
        "openai/gpt-oss-20b",
        131_072,
        65_536,
        name="GPT-OSS 20B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
    _m("llama-3.3-70b-versatile", 131_072, 32_768, name="Llama 3.3 70B", images=False),
    _m("moonshotai/kimi-k2-instruct-0905", 262_144, 16_384, name="Kimi K2", images=False),
]

CEREBRAS_MODELS = [
    _m(
        "gpt-oss-120b",
        131_072,
        40_960,
        name="GPT-OSS 120B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
    _m("zai-glm-4.6", 131_072, 40_960, name="GLM 4.6", images=False),
    _m("qwen-3-235b-a22b-instruct-2507", 131_072, 32_768, name="Qwen 3 235B Instruct", images=False),
    _m("llama-3.3-70b", 131_072, 8_192, name="Llama 3.3 70B", images=False),
]

FIREWORKS_MODELS = [
    _m(
        "accounts/fireworks/models/kimi-k2-instruct-0905",
        262_144,
        32_768,
        name="Kimi K2",
        images=False,
    ),
    _m(
        "accounts/fireworks/models/qwen3-coder-480b-a35b-instruct",
        262_144,
        32_768,
        name="Qwen3 Coder 480B",
        images=False,
    ),
    _m("accounts/fireworks/models/deepseek-v3p1", 163_840, 32_768, name="DeepSeek V3.1", images=False),
    _m("accounts/fireworks/models/glm-4p6", 202_752, 32_768, name="GLM 4.6", images=False),
    _m(
        "accounts/fireworks/models/gpt-oss-120b",
        131_072,
        32_768,
        name="GPT-OSS 120B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
]

# Open-weight models most hosts serve under these ids (Together, Hugging Face, Baseten).
OPEN_MODELS = [
    _m("moonshotai/Kimi-K2-Instruct-0905", 262_144, 32_768, name="Kimi K2", images=False),
    _m("Qwen/Qwen3-Coder-480B-A35B-Instruct", 262_144, 32_768, name="Qwen3 Coder 480B", images=False),
    _m("deepseek-ai/DeepSeek-V3.1", 131_072, 32_768, name="DeepSeek V3.1", images=False),
    _m("zai-org/GLM-4.6", 202_752, 32_768, name="GLM 4.6", images=False),
    _m(
        "openai/gpt-oss-120b",
        131_072,
        32_768,
        name="GPT-OSS 120B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
]

TOGETHER_MODELS: list[ModelSpec] = [
    {**m, "id": "Qwen/Qwen3-Coder-480B-A35B-Instruct-FP8"} if m["id"].startswith("Qwen/") else m
    for m in OPEN_MODELS
]

OPENROUTER_MODELS = [
    _m(
        "anthropic/claude-sonnet-4.5",
        200_000,
        64_000,
        name="Claude Sonnet 4.5",
        reasoning=True,
        efforts=["off", "low", "medium", "high"],
    ),
    _m(
        "openai/gpt-5",
        400_000,
        128_000,
        name="GPT-5",
        reasoning=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m(
        "google/gemini-2.5-pro",
        1_048_576,
        65_536,
        name="Gemini 2.5 Pro",
        reasoning=True,
        efforts=["low", "medium", "high"],
    ),
    _m("deepseek/deepseek-chat", 163_840, 16_384, name="DeepSeek V3", images=False),
    _m("qwen/qwen3-coder", 262_144, 65_536, name="Qwen3 Coder", images=False),
    _m("moonshotai/kimi-k2", 131_072, 32_768, name="Kimi K2", images=False),
]

PERPLEXITY_MODELS = [
    _m("sonar-pro", 200_000, 8_000, name="Sonar Pro", images=None),
    _m("sonar", 128_000, 8_000, name="Sonar", images=None),
    _m("sonar-reasoning-pro", 128_000, 8_000, name="Sonar Reasoning Pro", reasoning=True, images=None),
]

GITHUB_MODELS = [
    _m("openai/gpt-4.1", 1_047_576, 32_768, name="GPT-4.1"),
    _m(
        "openai/gpt-5-mini",
        400_000,
        128_000,
        name="GPT-5 mini",
        reasoning=True,
        efforts=["minimal", "low", "medium", "high"],
    ),
    _m("openai/gpt-4o", 128_000, 16_384, name="GPT-4o"),
    _m("deepseek/DeepSeek-V3-0324", 128_000, 8_192, name="DeepSeek V3", images=False),
    _m("mistral-ai/Codestral-2501", 256_000, 8_192, name="Codestral 25.01", images=False),
]

NVIDIA_MODELS = [
    _m("moonshotai/kimi-k2-instruct-0905", 262_144, 16_384, name="Kimi K2", images=False),
    _m("qwen/qwen3-coder-480b-a35b-instruct", 262_144, 32_768, name="Qwen3 Coder 480B", images=False),
    _m("deepseek-ai/deepseek-v3.1", 131_072, 16_384, name="DeepSeek V3.1", images=False),
    _m(
        "openai/gpt-oss-120b",
        131_072,
        32_768,
        name="GPT-OSS 120B",
        reasoning=True,
        images=False,
        efforts=GPT_OSS_EFFORTS,
    ),
    _m("meta/llama-3.3-70b-instruct", 131_072, 8_192, name="Llama 3.3 70B", images=False),
]

MOONSHOT_MODELS = [
    _m("kimi-k2-0905-preview", 262_144, 32_768, name="Kimi K2 (0905)", images=False),
    _m("kimi-k2-turbo-preview", 262_144, 32_768, name="Kimi K2 Turbo", images=False),
    _m(
        "kimi-k2-thinking",
        262_144,
        32_768,
        name="Kimi K2 Thinking",
        reasoning=True,
        images=False,
        efforts=["high"],
    ),
]

ZHIPU_MODELS = [
    _m("glm-4.6", 200_000, 128_000, name="GLM 4.6", reasoning=True, images=False, efforts=["off", "high"]),
    _m("glm-4.5", 131_072, 98_304, name="GLM 4.5", reasoning=True, images=False, efforts=["off", "high"]),
    _m(
        "glm-4.5-air",
        131_072,
        98_304,
        name="GLM 4.5 Air",
        reasoning=True,
        images=False,
        efforts=["off", "high"],
    ),
    _m("glm-4.5v", 65_536, 16_384, name="GLM 4.5V", reasoning=True, efforts=["off", "high"]),
]

# OpenCode Zen routes each model family to its own API: Claude to Messages, GPT to the
# Responses API, the rest to Chat Completions.
OPENCODE_ZEN_MODELS = [
    _m("qwen3-coder", 262_144, 65_536, name="Qwen3 Coder 480B", images=False),
    _m("kimi-k2", 262_144, 32_768, name="Kimi K2", images=False),
    _m("glm-4.6", 204_800, 131_072, name="GLM 4.6", images=False),
    _m("grok-code", 256_000, 32_768, name="Grok Code Fast 1", images=False),
    _m("big-pickle", 200_000, 128_000, name="Big Pickle", images=False),
    _m(
        "claude-sonnet-4-5",
        200_000,
        64_000,
        name="Claude Sonnet 4.5",
        reasoning=True,
        cache=True,
        efforts=BUDGET_EFFORTS,
        wire="anthropic",
    ),
    _m(
        "claude-haiku-4-5",
        200_000,
        64_000,
        name="Claude Haiku 4.5",
        reasoning=True,
        cache=True,
        efforts=BUDGET_EFFORTS,
        wire="anthropic",
    ),
    _m(
        "gpt-5",
        400_000,
        128_000,
        name="GPT-5",
        reasoning=True,
        cache=True,
        efforts=["minimal", "low", "medium", "high"],
        wire="responses",
    ),
]

OPENCODE_GO_MODELS = [
    _m("glm-5", 202_752, 131_072, name="GLM-5", reasoning=True, images=False, efforts=["off", "high"]),
    _m("kimi-k2.5", 262_144, 65_536, name="Kimi K2.5", reasoning=True, efforts=["off", "high"]),
    _m("minimax-m2.5", 204_800, 131_072, name="MiniMax M2.5", reasoning=True, images=False, efforts=["high"]),
]

# List prices in dollars per million tokens: (input, output, cache read, cache write), as
# the providers' pricing pages listed them in early 2026 (models.dev carries the same
# figures); None where a provider has no separate price (such tokens are charged as
# input). They are list prices, not what an account with discounts or a plan pays, and
# prices change: a config corrects one with `uji.provider.add{id=..., models={{id=...,
# cost={...}}}}`. The lowest tier is given where a price rises with the prompt's length
# (Gemini 2.5 Pro above 200k tokens). Hosts whose price depends on the route or the
# plan (Together, Hugging Face, Baseten, GitHub Models, NVIDIA, OpenCode Go) carry none,
# and their cost is shown as unknown.
Price = tuple[float, float, float | None, float | None]
CLAUDE_SONNET: Price = (3.0, 15.0, 0.30, 3.75)
CLAUDE_OPUS: Price = (5.0, 25.0, 0.50, 6.25)
CLAUDE_HAIKU: Price = (1.0, 5.0, 0.10, 1.25)
GPT_5: Price = (1.25, 10.0, 0.125, None)
GEMINI_25_PRO: Price = (1.25, 10.0, 0.125, None)
PRICES: dict[str, dict[str, Price]] = {
    "anthropic": {
        "claude-sonnet-4-5": CLAUDE_SONNET,
        "claude-opus-4-6": CLAUDE_OPUS,
        "claude-sonnet-4-6": CLAUDE_SONNET,
        "claude-opus-4-5": CLAUDE_OPUS,
        "claude-haiku-4-5": CLAUDE_HAIKU,
        "claude-opus-4-1": (15.0, 75.0, 1.50, 18.75),
        "claude-sonnet-4-0": CLAUDE_SONNET,
    },
    "openai": {
        "gpt-5": GPT_5,
        "gpt-5.2": (1.75, 14.0, 0.175, None),
        "gpt-5.1": GPT_5,
        "gpt-5-mini": (0.25, 2.0, 0.025, None),
        "gpt-5-nano": (0.05, 0.40, 0.005, None),
        "gpt-4.1": (2.0, 8.0, 0.50, None),
        "gpt-4.1-mini": (0.40, 1.60, 0.10, None),
        "o3": (2.0, 8.0, 0.50, None),
        "o4-mini": (1.10, 4.40, 0.275, None),
    },
    "google": {
        "gemini-2.5-pro": GEMINI_25_PRO,
        "gemini-2.5-flash": (0.30, 2.50, 0.03, None),
        "gemini-2.5-flash-lite": (0.10, 0.40, 0.01, None),
        "gemini-3-pro-preview": (2.0, 12.0, 0.20, None),
        "gemini-3-flash-preview": (0.50, 3.0, 0.05, None),
    },
    "xai": {
        "grok-4": (3.0, 15.0, 0.75, None),
        "grok-code-fast-1": (0.20, 1.50, 0.02, None),
        "grok-3-mini": (0.30, 0.50, 0.075, None),
    },
    "deepseek": {
        "deepseek-chat": (0.28, 0.42, 0.028, None),
        "deepseek-reasoner": (0.28, 0.42, 0.028, None),
    },
    "mistral": {
        "mistral-medium-latest": (0.40, 2.0, None, None),
        "mistral-large-latest": (0.50, 1.50, None, None),
        "devstral-medium-latest": (0.40, 2.0, None, None),
        "codestral-latest": (0.30, 0.90, None, None),
        "magistral-medium-latest": (2.0, 5.0, None, None),
    },
    "groq": {
        "openai/gpt-oss-120b": (0.15, 0.60, None, None),
        "openai/gpt-oss-20b": (0.075, 0.30, None, None),
        "llama-3.3-70b-versatile": (0.59, 0.79, None, None),
        "moonshotai/kimi-k2-instruct-0905": (1.0, 3.0, None, None),
    },
    "cerebras": {
        "gpt-oss-120b": (0.35, 0.75, None, None),
        "zai-glm-4.6": (2.25, 2.75, None, None),
        "qwen-3-235b-a22b-instruct-2507": (0.60, 1.20, None, None),
        "llama-3.3-70b": (0.85, 1.20, None, None),
    },
    "fireworks": {
        "accounts/fireworks/models/kimi-k2-instruct-0905": (0.60, 2.50, None, None),
        "accounts/fireworks/models/qwen3-coder-480b-a35b-instruct": (0.45, 1.80, None, None),
        "accounts/fireworks/models/deepseek-v3p1": (0.56, 1.68, None, None),
        "accounts/fireworks/models/glm-4p6": (0.55, 2.19, None, None),
        "accounts/fireworks/models/gpt-oss-120b": (0.15, 0.60, None, None),
    },
    # OpenRouter passes the first-party price on.
    "openrouter": {
        "anthropic/claude-sonnet-4.5": CLAUDE_SONNET,
        "openai/gpt-5": GPT_5,
        "google/gemini-2.5-pro": GEMINI_25_PRO,
    },
    # Per-request search fees come on top of these.
    "perplexity": {
        "sonar-pro": (3.0, 15.0, None, None),
        "sonar": (1.0, 1.0, None, None),
        "sonar-reasoning-pro": (2.0, 8.0, None, None),
    },
    "moonshotai": {
        "kimi-k2-0905-preview": (0.60, 2.50, 0.15, None),
        "kimi-k2-turbo-preview": (1.15, 8.0, 0.15, None),
        "kimi-k2-thinking": (0.60, 2.50, 0.15, None),
    },
    # Z.ai's dollar prices (bigmodel.cn bills the same models in yuan).
    "zhipuai": {
        "glm-4.6": (0.60, 2.20, 0.11, None),
        "glm-4.5": (0.60, 2.20, 0.11, None),
        "glm-4.5-air": (0.20, 1.10, 0.03, None),
        "glm-4.5v": (0.60, 1.80, 0.11, None),
    },
    "opencode-zen": {
        "qwen3-coder": (0.45, 1.80, None, None),
        "kimi-k2": (0.60, 2.50, None, None),
        "glm-4.6": (0.60, 2.20, 0.10, None),
        "claude-sonnet-4-5": CLAUDE_SONNET,
        "claude-haiku-4-5": CLAUDE_HAIKU,
    },
}


def _priced(provider_id: str, models: list[ModelSpec]) -> list[ModelSpec]:
    """`models` with the list prices of `PRICES` as their `cost`."""
    table = PRICES.get(provider_id, {})
    out = []
    for spec in models:
        price = table.get(spec["id"])
        if price is not None:
            cost: Cost = {"input": price[0], "output": price[1]}
            if price[2] is not None:
                cost["cache_read"] = price[2]
            if price[3] is not None:
                cost["cache_write"] = price[3]
            spec = {**spec, "cost": cost}
        out.append(spec)
    return out


def _p(
    id: str,
    name: str,
    base_url: str,
    auth_env: list[str],
    models: list[ModelSpec] | None = None,
    *,
    wire: str = "openai-chat",
    needs_key: bool | None = None,
    discover: str | None = None,
    hint: str | None = None,
) -> ProviderSpec:
    spec: ProviderSpec = {"id": id, "name": name, "wire": wire, "base_url": base_url, "auth_env": auth_env}
    if models is not None:
        spec["models"] = _priced(id, models)
    if needs_key is not None:
        spec["needs_key"] = needs_key
    if discover is not None:
        spec["discover"] = discover
    if hint is not None:
        spec["hint"] = hint
    return spec


# The original's 22 built-in providers (reference docs §2 `uji.provider`).
BUILTIN: list[ProviderSpec] = [
    _p(
        "anthropic",
        "Anthropic",
        "https://api.anthropic.com/v1",
        ["ANTHROPIC_API_KEY"],
        ANTHROPIC_MODELS,
        wire="anthropic",
    ),
    _p("openai", "OpenAI", "https://api.openai.com/v1", ["OPENAI_API_KEY"], OPENAI_MODELS),
    _p(
        "google",
        "Google Gemini",
        "https://generativelanguage.googleapis.com/v1beta",
        ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"],
        GOOGLE_MODELS,
        wire="gemini",
    ),
    _p("xai", "xAI", "https://api.x.ai/v1", ["XAI_API_KEY"], XAI_MODELS),
    _p("deepseek", "DeepSeek", "https://api.deepseek.com/v1", ["DEEPSEEK_API_KEY"], DEEPSEEK_MODELS),
    _p("mistral", "Mistral", "https://api.mistral.ai/v1", ["MISTRAL_API_KEY"], MISTRAL_MODELS),
    _p("groq", "Groq", "https://api.groq.com/openai/v1", ["GROQ_API_KEY"], GROQ_MODELS),
    _p("cerebras", "Cerebras", "https://api.cerebras.ai/v1", ["CEREBRAS_API_KEY"], CEREBRAS_MODELS),
    _p(
        "fireworks",
        "Fireworks AI",
        "https://api.fireworks.ai/inference/v1",
        ["FIREWORKS_API_KEY"],
        FIREWORKS_MODELS,
    ),
    _p("together", "Together AI", "https://api.together.xyz/v1", ["TOGETHER_API_KEY"], TOGETHER_MODELS),
    _p("openrouter", "OpenRouter", "https://openrouter.ai/api/v1", ["OPENROUTER_API_KEY"], OPENROUTER_MODELS),
    _p("perplexity", "Perplexity", "https://api.perplexity.ai", ["PERPLEXITY_API_KEY"], PERPLEXITY_MODELS),
    _p(
        "huggingface",
        "Hugging Face",
        "https://router.huggingface.co/v1",
        ["HF_TOKEN", "HUGGINGFACE_API_KEY"],
        [m.copy() for m in OPEN_MODELS],
    ),
    _p(
        "github-models",
        "GitHub Models",
        "https://models.github.ai/inference",
        ["GITHUB_TOKEN"],
        GITHUB_MODELS,
    ),
    _p("nvidia", "NVIDIA", "https://integrate.api.nvidia.com/v1", ["NVIDIA_API_KEY"], NVIDIA_MODELS),
    _p("moonshotai", "Moonshot AI", "https://api.moonshot.ai/v1", ["MOONSHOT_API_KEY"], MOONSHOT_MODELS),
    _p(
        "zhipuai",
        "Zhipu AI",
        "https://open.bigmodel.cn/api/paas/v4",
        ["ZHIPU_API_KEY"],
        ZHIPU_MODELS,
    ),
    _p(
        "baseten",
        "Baseten",
        "https://inference.baseten.co/v1",
        ["BASETEN_API_KEY"],
        [m.copy() for m in OPEN_MODELS],
    ),
    _p(
        "ollama",
        "Ollama",
        "http://localhost:11434/v1",
        ["OLLAMA_API_KEY"],
        needs_key=False,
        discover="ollama",
        hint="is `ollama serve` running?",
    ),
    _p(
        "lmstudio",
        "LM Studio",
        "http://localhost:1234/v1",
        ["LMSTUDIO_API_KEY"],
        needs_key=False,
        discover="openai",
        hint="is the LM Studio server running (`lms server start`)?",
    ),
    _p(
        "opencode-zen",
        "OpenCode Zen",
        "https://opencode.ai/zen/v1",
        ["OPENCODE_API_KEY"],
        OPENCODE_ZEN_MODELS,
    ),
    _p(
        "opencode-go",
        "OpenCode Go",
        "https://opencode.ai/zen/go/v1",
        ["OPENCODE_API_KEY"],
        OPENCODE_GO_MODELS,
    ),
]

# `custom`: any OpenAI-compatible server. It becomes a provider once it has a base URL
# (`/login` → Custom, `uji.model.use{provider="custom", base_url=...}` or
# `uji.provider.add{id="custom", base_url=...}`), so `uji.provider.list()` shows the 22
# above until then.
CUSTOM: ProviderSpec = {
    "id": "custom",
    "name": "Custom (OpenAI-compatible)",
    "wire": "openai-chat",
    "auth_env": ["UJI_CUSTOM_API_KEY"],
    "needs_key": False,
    "discover": "openai",
}
