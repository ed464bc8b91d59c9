"""Every request body the wires build, checked against the official SDKs' request types,
strictly (tests/sdk_check.py says how): for each built-in provider and each of its
models, across conversations with text, tool calls and results, images, reasoning and
replayed thinking, at every effort the model accepts and every cache setting.

- openai-chat providers: `openai`'s `CompletionCreateParamsStreaming`. A provider's own
  documented extensions (DeepSeek's `thinking` and `reasoning_content`, OpenRouter's
  `reasoning`, Qwen's `enable_thinking`) are taken out, checked against their documented
  shapes below, and the rest must still pass openai's types.
- Mistral: `mistralai`'s `ChatCompletionStreamRequest` (it refuses unknown fields).
- anthropic: `anthropic`'s `MessageCreateParamsStreaming`.
- gemini: `google-genai`'s `Content`, `Tool` and `GenerationConfig` models for the body's
  parts, only the REST request's own top-level fields, and roles `user` and `model`.

The SDKs are test-only dependencies: the last test shows `uji run` never imports them.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, TypedDict

import pytest

from tests import golden, sdks
from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI
from tests.sdk_check import Errors, check_model, check_typed
from uji.providers.catalog import Catalog, Model, Provider
from uji.providers.efforts import for_request
from uji.wires import anthropic, gemini, openai_chat, responses
from uji.wires.base import EFFORTS, WireRequest

pytestmark = sdks.ON_ONE_WORKER

SIGNATURE = "RXFVQ0NxSUNBYjQrOXZzaDhQZDV0YVpWb1B6U3Zq"  # base64, as Gemini's are

# --------------------------------------------------------------------------- conversations


def conversations(model: str) -> dict[str, list[dict[str, Any]]]:
    """The golden set, plus a tool loop that thought at each step (DeepSeek's case) and a
    replay signed by this model, with signatures in the providers' own encoding."""
    convs = copy.deepcopy(golden.conversations(model))
    for m in convs["reasoning_replay"]:
        for c in m.get("tool_calls") or []:
            if "signature" in c:
                c["signature"] = SIGNATURE
    replay = {"wire": "gemini", "model": model, "signature": SIGNATURE}
    convs["thinking_tool_loop"] = [
        {"type": "user", "text": "Read a.txt, then b.txt."},
        {
            "type": "assistant",
            "text": "",
            "reasoning": "a.txt first.",
            "tool_calls": [{"id": "c1", "name": "read_file", "arguments": '{"path":"a.txt"}'}],
        },
        {"type": "tool", "tool_call_id": "c1", "name": "read_file", "content": "alpha"},
        {
            "type": "assistant",
            "text": "Now b.",
            "reasoning": "Then b.txt.",
            "tool_calls": [
                {"id": "c2", "name": "read_file", "arguments": '{"path":"b.txt"}', "signature": SIGNATURE}
            ],
            "replay": replay,
        },
        {
            "type": "tool",
            "tool_call_id": "c2",
            "name": "read_file",
            "content": "beta",
            "images": [golden.PNG],
        },
        {"type": "assistant", "text": "Both read.", "replay": replay},
        {"type": "user", "text": "Thanks."},
    ]
    return convs


def requests_for(provider: Provider, model: Model | None, model_id: str) -> list[WireRequest]:
    """One request per conversation × effort the loop would send × cache × images."""
    sent_efforts = sorted({for_request(e, model) for e in (*EFFORTS, None)}, key=str)
    out = []
    for messages in conversations(model_id).values():
        for effort in sent_efforts:
            for cache in ("off", "short", "long"):
                for images in (None, False):
                    out.append(
                        WireRequest(
                            model=model_id,
                            system=golden.SYSTEM,
                            messages=messages,
                            tools=golden.TOOLS,
                            provider={"id": provider.id, "base_url": provider.base_url, "compat": {}},
                            auth={"key": golden.KEY, "oauth": None},
                            effort=effort,
                            reasoning=bool(model and model.reasoning),
                            max_output=model.output if model and model.output else 8192,
                            cache=cache,
                            session="sess-1",
                            model_cache=model.cache if model else None,
                            images=images,
                        )
                    )
    return out


# --------------------------------------------------------------------------- checks


class OpenRouterReasoning(TypedDict, total=False):  # openrouter.ai/docs: reasoning tokens
    effort: Literal["xhigh", "high", "medium", "low", "minimal", "none"]
    max_tokens: int
    exclude: bool
    enabled: bool


class Thinking(TypedDict):  # api-docs.deepseek.com thinking mode; docs.z.ai thinking
    type: Literal["enabled", "disabled"]


# Where each effort style puts its level, beside openai's own `reasoning_effort`.
EFFORT_EXTENSIONS: dict[str, dict[str, Any]] = {
    "reasoning": {"reasoning": OpenRouterReasoning},
    "thinking": {"thinking": Thinking},
    "thinking_only": {"thinking": Thinking},
    "enable_thinking": {"enable_thinking": bool},  # Alibaba Model Studio, Qwen 3
}


def check_openai_chat(body: dict[str, Any], dialect: openai_chat.Dialect) -> Errors:
    body = copy.deepcopy(body)
    errors: Errors = []
    for key, shape in EFFORT_EXTENSIONS.get(dialect.effort or "", {}).items():
        if key in body:
            errors += check_typed(body.pop(key), shape, f"body.{key}")
    if dialect.reasoning_field:
        for i, m in enumerate(body["messages"]):
            if m["role"] == "assistant":
                if dialect.reasoning_field not in m:
                    errors.append(f"body.messages[{i}].{dialect.reasoning_field}: missing")
                errors += check_typed(m.pop(dialect.reasoning_field, ""), str, f"body.messages[{i}]")
    return errors + check_typed(body, sdks.CompletionCreateParamsStreaming)


def check_mistral(body: dict[str, Any], dialect: openai_chat.Dialect) -> Errors:
    return check_model(body, sdks.ChatCompletionStreamRequest)


def check_anthropic(body: dict[str, Any]) -> Errors:
    return check_typed(body, sdks.MessageCreateParamsStreaming)


GEMINI_FIELDS: dict[str, Callable[[Any, str], Errors]] = {
    "contents": lambda v, p: _each(v, sdks.genai.Content, p),
    "systemInstruction": lambda v, p: check_model(v, sdks.genai.Content, p),
    "tools": lambda v, p: _each(v, sdks.genai.Tool, p),
    "toolConfig": lambda v, p: check_model(v, sdks.genai.ToolConfig, p),
    "safetySettings": lambda v, p: _each(v, sdks.genai.SafetySetting, p),
    "generationConfig": lambda v, p: check_model(v, sdks.genai.GenerationConfig, p),
    "cachedContent": lambda v, p: check_typed(v, str, p),
}


def _each(value: Any, model: Any, path: str) -> Errors:
    if not isinstance(value, list):
        return [f"{path}: expected an array"]
    return [e for i, v in enumerate(value) for e in check_model(v, model, f"{path}[{i}]")]


def check_gemini(body: dict[str, Any]) -> Errors:
    errors: Errors = []
    for key, value in body.items():
        check = GEMINI_FIELDS.get(key)
        errors += (
            check(value, f"body.{key}") if check else [f"body.{key}: not a GenerateContentRequest field"]
        )
    for i, content in enumerate(body.get("contents", [])):
        if content.get("role") not in ("user", "model"):
            errors.append(
                f"body.contents[{i}].role: {content.get('role')!r} (google-genai sends user or model)"
            )
    return errors


def build_body(provider: Provider, request: WireRequest) -> tuple[str, dict[str, Any]]:
    """The wire `provider` sends `request` on, and the body it sends."""
    wire = provider.wire_for(request.model)  # OpenAI's reasoning models: responses; Zen's Claude
    if wire == "anthropic":
        return wire, anthropic.build_body(request)
    if wire == "gemini":
        return wire, gemini.build_body(request)
    if wire == "responses":
        return wire, responses.build_body(request)
    return wire, openai_chat.build_body(request, openai_chat.dialect_for(provider.base_url, provider.compat))


def check_built(provider: Provider, wire: str, body: dict[str, Any]) -> Errors:
    if wire == "anthropic":
        return check_anthropic(body)
    if wire == "gemini":
        return check_gemini(body)
    if wire == "responses":
        return check_typed(body, sdks.ResponseCreateParamsStreaming)
    dialect = openai_chat.dialect_for(provider.base_url, provider.compat)
    if openai_chat.host_of(provider.base_url) == "api.mistral.ai":
        return check_mistral(body, dialect)
    return check_openai_chat(body, dialect)


def check_body(provider: Provider, request: WireRequest) -> Errors:
    return check_built(provider, *build_body(provider, request))


# --------------------------------------------------------------------------- the matrix

CHECKED_WIRES = ("openai-chat", "anthropic", "gemini")  # the other wires check their own


def _providers() -> list[Provider]:
    catalog = Catalog()
    catalog.add({"id": "custom", "base_url": "http://localhost:8080/v1"})  # custom joins with a URL
    return [p for p in catalog.list() if p.wire in CHECKED_WIRES]


PROVIDERS = _providers()


def test_the_matrix_covers_the_builtin_providers() -> None:
    wires = Counter(p.wire for p in PROVIDERS)
    assert set(wires) == set(CHECKED_WIRES)
    ids = {p.id for p in PROVIDERS}
    assert {
        "openai",
        "deepseek",
        "mistral",
        "groq",
        "openrouter",
        "xai",
        "ollama",
        "lmstudio",
        "custom",
    } <= ids
    assert {"anthropic", "google"} <= ids


@pytest.mark.parametrize("provider", PROVIDERS, ids=[p.id for p in PROVIDERS])
def test_every_body_validates_against_the_sdk_types(provider: Provider) -> None:
    models: list[tuple[Model | None, str]] = [(m, m.id) for m in provider.models] or [(None, "some-model")]
    checked = 0
    # Every body is built, and each different one checked once: models that differ only
    # in their name send the same body but for the name (a string to every SDK), so the
    # matrix's 8,670 bodies are 1,657 checks (the check is most of this test's CPU).
    found: dict[str, Errors] = {}
    for model, model_id in models:
        for request in requests_for(provider, model, model_id):
            wire, body = build_body(provider, request)
            named = {**body, "model": "-"} if isinstance(body.get("model"), str) else body
            key = json.dumps([wire, named], sort_keys=True)
            if key not in found:
                found[key] = check_built(provider, wire, body)
            errors = found[key]
            assert not errors, (
                f"{provider.id} {model_id} effort={request.effort} cache={request.cache}: "
                + "\n".join(errors)
            )
            checked += 1
    assert checked >= len(conversations("m")) * 3 * 2


def test_deepseek_assistant_messages_carry_their_reasoning() -> None:
    [provider] = [p for p in PROVIDERS if p.id == "deepseek"]
    [request] = [
        r
        for r in requests_for(provider, provider.model("deepseek-reasoner"), "deepseek-reasoner")
        if r.messages[0]["text"].startswith("Read a.txt, then")
        and (r.effort, r.cache, r.images) == ("high", "off", None)
    ]
    body = openai_chat.build_body(request)
    assistants = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == ["a.txt first.", "Then b.txt.", ""]
    assert all(m.get("tool_calls") for m in assistants[:2])
    assert body["thinking"] == {"type": "enabled"}


# --------------------------------------------------------------------------- the checks can fail


def _one(
    provider_id: str, conversation: str = "tool_images", effort: str | None = "high"
) -> tuple[Provider, WireRequest]:
    [provider] = [p for p in PROVIDERS if p.id == provider_id]
    model = provider.models[0] if provider.models else None
    request = requests_for(provider, model, model.id if model else "m")[0]
    request.messages = conversations(request.model)[conversation]
    request.effort = effort
    return provider, request


def test_mistral_refuses_what_it_does_not_know() -> None:
    _, request = _one("mistral")
    body = openai_chat.build_body(request)
    assert not check_mistral(body, openai_chat.Dialect())
    body["stream_options"] = {"include_usage": True}  # what every request sent before
    [error] = check_mistral(body, openai_chat.Dialect())
    assert error.startswith("body.stream_options: not a field of ChatCompletionStreamRequest")


def test_openai_types_refuse_unknown_and_mistyped_fields() -> None:
    provider, request = _one("openai")
    body = openai_chat.build_body(request)
    dialect = openai_chat.dialect_for(provider.base_url)
    assert not check_openai_chat(body, dialect)
    bad = copy.deepcopy(body)
    bad["messages"][1]["reasoning_content"] = "x"
    bad["tools"][0]["function"]["strict"] = "yes"
    bad["max_completion_tokens"] = True
    errors = check_openai_chat(bad, dialect)
    assert any(e.startswith("body.messages[1].reasoning_content: not a field of") for e in errors), errors
    assert "body.tools[0].function.strict: expected a boolean, got 'yes'" in errors
    assert "body.max_completion_tokens: expected an integer, got True" in errors


def test_deepseek_without_reasoning_content_fails_the_check() -> None:
    provider, request = _one("deepseek", "reasoning_replay")
    body = openai_chat.build_body(request)
    dialect = openai_chat.dialect_for(provider.base_url)
    assert not check_openai_chat(body, dialect)
    for m in body["messages"]:
        m.pop("reasoning_content", None)
    assert "body.messages[2].reasoning_content: missing" in check_openai_chat(body, dialect)


def test_gemini_function_role_and_stray_fields_fail_the_check() -> None:
    _, request = _one("google", "tool_calls")
    body = gemini.build_body(request)
    assert not check_gemini(body)
    bad = copy.deepcopy(body)
    bad["contents"][2]["role"] = "function"  # what uji sent before
    bad["generationConfig"]["thinkingConfig"]["thinkingBudgets"] = 1
    bad["stream"] = True
    errors = check_gemini(bad)
    assert "body.contents[2].role: 'function' (google-genai sends user or model)" in errors
    assert "body.stream: not a GenerateContentRequest field" in errors
    assert any(e.startswith("body.generationConfig.thinkingConfig.thinkingBudgets") for e in errors), errors


def test_anthropic_types_refuse_a_stray_block_field() -> None:
    _, request = _one("anthropic", "reasoning_replay")
    body = anthropic.build_body(request)
    assert not check_anthropic(body)
    body["messages"][1]["content"][0]["cache_control"] = {"type": "ephemeral", "ttl": "2h"}
    body["output_config"] = {"effort": "extreme"}
    errors = check_anthropic(body)
    assert any("ttl" in e for e in errors) and any("output_config.effort" in e for e in errors), errors


# --------------------------------------------------------------------------- runtime


def test_uji_run_never_imports_the_sdks(home: Home, fake: FakeOpenAI) -> None:
    home.init("")
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "uji", "run", "--json", "hi"],
        cwd=home.work,
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"type": "done"' in proc.stdout and len(fake.turn_requests) == 1
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "uji.wires.openai_chat" in imported  # the timing lines are there, and name modules
    loaded = sorted(m for m in imported if m.split(".")[0] in ("openai", "anthropic", "mistralai"))
    loaded += sorted(m for m in imported if m.startswith("google.genai"))
    assert loaded == []
