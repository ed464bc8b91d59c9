"""Golden requests of the openai-chat wire: the fixed conversations against OpenAI itself,
and the text conversation against each OpenAI-compatible dialect with its own knobs."""

from __future__ import annotations

from typing import Any

import pytest

from tests import golden
from uji.wires.base import WireRequest
from uji.wires.openai_chat import build_body, build_headers, chat_url

OPENAI = "https://api.openai.com/v1"
DIALECTS = {
    "deepseek": "https://api.deepseek.com/v1",  # thinking.type + reasoning_effort
    "openrouter": "https://openrouter.ai/api/v1",  # reasoning.effort
    "qwen": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",  # enable_thinking
    "zai": "https://api.z.ai/api/paas/v4",  # thinking only
    "ollama": "http://localhost:11434/v1",  # the common case
    "mistral": "https://api.mistral.ai/v1",  # no stream_options
}


def render(request: WireRequest) -> dict[str, Any]:
    return {
        "url": chat_url(request.provider["base_url"]),
        "headers": build_headers(request),
        "body": build_body(request),
    }


@pytest.mark.parametrize("conversation", list(golden.conversations("gpt-5")))
def test_golden_requests(conversation: str) -> None:
    messages = golden.conversations("gpt-5")[conversation]
    golden.check(f"openai-chat/{conversation}", golden.render_all("gpt-5", OPENAI, messages, render))


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_golden_dialects(dialect: str) -> None:
    messages = golden.conversations("m")["text"]
    golden.check(
        f"openai-chat/dialect_{dialect}", golden.render_all("m", DIALECTS[dialect], messages, render)
    )


def test_mistral_bridges_tool_images() -> None:
    messages = golden.conversations("m")["tool_images"]
    body = build_body(golden.request("m", "https://api.mistral.ai/v1", messages, "high", "short"))
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    # Mistral refuses fields it does not know (`stream_options`); it takes `reasoning_effort`.
    assert "stream_options" not in body and body["reasoning_effort"] == "high"
