"""Golden request files: the exact URL, headers and body each wire sends for a fixed set
of conversations × efforts (off, low, high) × cache (off, short, long).

Each `<wire>/<conversation>.json` maps "effort/cache" to {url, headers, body}. A test
builds the same requests and compares. After a deliberate change to what a wire sends,
regenerate and review the diff:

    UJI_REGEN_GOLDEN=1 python -m pytest tests/test_anthropic_wire.py tests/test_gemini_wire.py \
        tests/golden
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uji.wires.base import WireRequest

GOLDEN_DIR = Path(__file__).parent
EFFORTS = ("off", "low", "high")
CACHES = ("off", "short", "long")
KEY = "sk-golden-key-0001"
SYSTEM = "You are uji, a coding agent. Work in /home/user/project."

TOOLS: list[dict[str, Any]] = [
    {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "screenshot",
        "description": "Take a screenshot.",
        "parameters": {"type": "object", "properties": {}},
    },
]

PNG = {"media_type": "image/png", "data": "iVBORw0KGgo=", "name": "a.png", "width": 1, "height": 1}
JPEG = {"media_type": "image/jpeg", "data": "/9j/4AAQSkZJRg==", "name": "b.jpg", "width": 2, "height": 2}


def conversations(model: str) -> dict[str, list[dict[str, Any]]]:
    """The fixed set. `model` is the model the golden requests go to: the reasoning
    replay conversation holds one assistant message signed by it and one by another."""
    return {
        "text": [{"type": "user", "text": "Say hi."}],
        "tool_calls": [
            {"type": "user", "text": "Read a.txt and b.txt."},
            {
                "type": "assistant",
                "text": "Reading both.",
                "tool_calls": [
                    {"id": "call_a", "name": "read_file", "arguments": '{ "path": "a.txt" }'},
                    {"id": "call_b", "name": "read_file", "arguments": '{"path": "b.txt"'},
                ],
            },
            {"type": "tool", "tool_call_id": "call_a", "name": "read_file", "content": "alpha"},
            {
                "type": "tool",
                "tool_call_id": "call_b",
                "name": "read_file",
                "content": "error: the arguments are not valid JSON",
            },
            {"type": "user", "text": "[context] the user switched branches"},
        ],
        "tool_images": [
            {"type": "user", "text": "What is on screen? Compare with this.", "images": [PNG]},
            {
                "type": "assistant",
                "text": "",
                "tool_calls": [{"id": "call_s", "name": "screenshot", "arguments": "{}"}],
            },
            {
                "type": "tool",
                "tool_call_id": "call_s",
                "name": "screenshot",
                "content": "1 screenshot",
                "images": [JPEG],
            },
        ],
        "reasoning_replay": [
            {"type": "user", "text": "First question."},
            {
                "type": "assistant",
                "text": "An answer from another model.",
                "reasoning": "other thoughts",
                "replay": {
                    "wire": "anthropic",
                    "model": "other-model",
                    "blocks": [{"type": "thinking", "thinking": "other thoughts", "signature": "sig-other"}],
                },
            },
            {"type": "user", "text": "Now read a.txt."},
            {
                "type": "assistant",
                "text": "",
                "reasoning": "I should read it.",
                "tool_calls": [
                    {
                        "id": "call_r",
                        "name": "read_file",
                        "arguments": '{"path":"a.txt"}',
                        "signature": "gsig-1",
                    }
                ],
                "replay": _replay_for(model),
            },
            {"type": "tool", "tool_call_id": "call_r", "name": "read_file", "content": "alpha"},
        ],
    }


def _replay_for(model: str) -> dict[str, Any]:
    if model.startswith("gemini"):
        return {"wire": "gemini", "model": model}
    if model.startswith("gpt-"):
        reasoning = {"type": "reasoning", "id": "rs_own", "encrypted_content": "enc-own"}
        summary = [{"type": "summary_text", "text": "I should read it."}]
        return {"wire": "responses", "model": model, "items": [{**reasoning, "summary": summary}]}
    return {
        "wire": "anthropic",
        "model": model,
        "blocks": [
            {"type": "thinking", "thinking": "I should read it.", "signature": "sig-own"},
            {"type": "redacted_thinking", "data": "cmVkYWN0ZWQ="},
        ],
    }


def request(
    model: str, base_url: str, messages: list[dict[str, Any]], effort: str, cache: str
) -> WireRequest:
    return WireRequest(
        model=model,
        system=SYSTEM,
        messages=messages,
        tools=TOOLS,
        provider={"id": "golden", "base_url": base_url, "compat": {}},
        auth={"key": KEY, "oauth": None},
        effort=effort,
        reasoning=True,
        max_output=8192,
        cache=cache,
        session="sess-golden",
        model_cache=True,
        images=True,
    )


Render = Callable[[WireRequest], dict[str, Any]]


def render_all(model: str, base_url: str, messages: list[dict[str, Any]], render: Render) -> dict[str, Any]:
    """{"effort/cache": render(request)} over the whole grid."""
    return {
        f"{effort}/{cache}": render(request(model, base_url, messages, effort, cache))
        for effort in EFFORTS
        for cache in CACHES
    }


def check(name: str, actual: dict[str, Any]) -> None:
    """Compare with `<name>.json`; with UJI_REGEN_GOLDEN=1, write it instead."""
    path = GOLDEN_DIR / f"{name}.json"
    text = json.dumps(actual, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("UJI_REGEN_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f"no golden file {path}; run with UJI_REGEN_GOLDEN=1 to write it"
    expected = json.loads(path.read_text())
    actual = json.loads(text)  # the same JSON round trip as the file
    for case in sorted(set(expected) | set(actual)):
        assert actual.get(case) == expected.get(case), (
            f"{name} {case} differs from {path.name} (UJI_REGEN_GOLDEN=1 rewrites it after review)"
        )
