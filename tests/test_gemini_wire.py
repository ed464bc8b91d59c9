"""The gemini wire: golden requests, the pure builders, and recorded streams over real
loopback HTTP against the fake Gemini API."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests import golden
from tests.fakes.base import RecordingReply, wire_request
from tests.fakes.gemini_server import (
    FakeGemini,
    call,
    error_chunk,
    event,
    make_usage,
    raw_lines,
    text,
    tool_calls,
)
from tests.wire_fixtures import wire_fixtures
from uji.wires.base import WireRequest
from uji.wires.gemini import (
    SKIP_SIGNATURE,
    GeminiWire,
    build_body,
    build_contents,
    build_headers,
    gemini_version,
    stream_url,
    thinking_config,
)

MODEL = "gemini-2.5-flash"
MODEL_3 = "gemini-3-pro-preview"
GOLDEN_URL = "https://generativelanguage.googleapis.com/v1beta"


# --------------------------------------------------------------------------- fixtures


server, fake, wire = wire_fixtures(FakeGemini, GeminiWire)


def _request(base_url: str, **kw: Any) -> WireRequest:
    return wire_request(
        base_url, **({"model": MODEL, "auth": {"key": "AIza-test-key-1234"}, "reasoning": True} | kw)
    )


async def run(wire: GeminiWire, fake: FakeGemini, *steps: Any, **kw: Any) -> RecordingReply:
    fake.script(*steps)
    reply = RecordingReply()
    await wire.stream(_request(fake.base_url, **kw), reply)
    return reply


def render(request: WireRequest) -> dict[str, Any]:
    return {
        "url": stream_url(request.provider["base_url"], request.model),
        "headers": build_headers(request),
        "body": build_body(request),
    }


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("conversation", list(golden.conversations(MODEL)))
def test_golden_requests(conversation: str) -> None:
    messages = golden.conversations(MODEL)[conversation]
    golden.check(f"gemini/{conversation}", golden.render_all(MODEL, GOLDEN_URL, messages, render))


def test_golden_thinking_levels() -> None:
    messages = golden.conversations(MODEL_3)["reasoning_replay"]
    golden.check("gemini/levels_reasoning_replay", golden.render_all(MODEL_3, GOLDEN_URL, messages, render))


def test_golden_shapes_worth_reading() -> None:
    messages = golden.conversations(MODEL)["tool_images"]
    body = build_body(golden.request(MODEL, GOLDEN_URL, messages, "high", "long"))
    user, model, function, images = body["contents"]
    # Function responses go in a user turn of their own, as google-genai sends them.
    assert (user["role"], model["role"], function["role"], images["role"]) == (
        "user",
        "model",
        "user",
        "user",
    )
    assert [list(p) for p in function["parts"]] == [["functionResponse"]]
    assert user["parts"] == [
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"text": "What is on screen? Compare with this."},
    ]
    assert function["parts"] == [
        {"functionResponse": {"name": "screenshot", "response": {"result": "1 screenshot"}}}
    ]
    assert images["parts"][0] == {"text": "These are the images the tool calls above returned."}
    assert images["parts"][1] == {"inlineData": {"mimeType": "image/jpeg", "data": "/9j/4AAQSkZJRg=="}}
    assert body["systemInstruction"] == {"parts": [{"text": golden.SYSTEM}]}
    assert body["generationConfig"] == {
        "maxOutputTokens": 8192,
        "thinkingConfig": {"thinkingBudget": 16384, "includeThoughts": True},
    }
    # Gemini has no cache breakpoints: the cache setting changes nothing in the body.
    assert body == build_body(golden.request(MODEL, GOLDEN_URL, messages, "high", "off"))


# --------------------------------------------------------------------------- request rules


@pytest.mark.parametrize(
    ("model", "version"),
    [
        ("gemini-2.5-pro", (2, 5)),
        ("models/gemini-2.5-flash-lite", (2, 5)),
        ("gemini-3-pro-preview", (3, 0)),
        ("gemini-3.1-pro-preview", (3, 1)),
        ("gemini-2.0-flash", (2, 0)),
        ("gemma-3-27b-it", None),
    ],
)
def test_gemini_version(model: str, version: tuple[int, int] | None) -> None:
    assert gemini_version(model) == version


@pytest.mark.parametrize(
    ("model", "effort", "config"),
    [
        ("gemini-2.5-flash", "off", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "minimal", {"thinkingBudget": 1024, "includeThoughts": True}),
        ("gemini-2.5-flash", "medium", {"thinkingBudget": 8192, "includeThoughts": True}),
        ("gemini-2.5-flash", "max", {"thinkingBudget": 24576, "includeThoughts": True}),  # the flash cap
        ("gemini-2.5-pro", "max", {"thinkingBudget": 32768, "includeThoughts": True}),
        ("gemini-2.5-pro", "off", {"thinkingBudget": 128, "includeThoughts": True}),  # pro always thinks
        ("gemini-2.5-flash", None, {"includeThoughts": True}),
        ("gemini-3-pro-preview", "off", {"thinkingLevel": "LOW", "includeThoughts": True}),
        ("gemini-3-pro-preview", "medium", {"thinkingLevel": "LOW", "includeThoughts": True}),
        ("gemini-3-pro-preview", "xhigh", {"thinkingLevel": "HIGH", "includeThoughts": True}),
        ("gemini-3-flash-preview", "off", {"thinkingLevel": "MINIMAL", "includeThoughts": True}),
        ("gemini-3-flash-preview", "medium", {"thinkingLevel": "MEDIUM", "includeThoughts": True}),
        ("gemini-2.0-flash", "high", None),
        ("gemma-3-27b-it", "high", None),
    ],
)
def test_thinking_config(model: str, effort: str | None, config: dict[str, Any] | None) -> None:
    assert thinking_config(effort, model, reasoning=True) == config


def test_no_thoughts_asked_of_a_model_that_does_not_reason() -> None:
    assert thinking_config(None, "gemini-2.5-flash", reasoning=False) is None


def test_signatures_go_back_only_to_their_model() -> None:
    messages = golden.conversations(MODEL)["reasoning_replay"]
    own = build_contents(messages, MODEL)[3]["parts"][0]
    assert own == {
        "functionCall": {"name": "read_file", "args": {"path": "a.txt"}},
        "thoughtSignature": "gsig-1",
    }
    # Another 2.5 model: no signature. A Gemini 3 model needs one: the placeholder.
    assert "thoughtSignature" not in build_contents(messages, "gemini-2.5-pro")[3]["parts"][0]
    assert build_contents(messages, MODEL_3)[3]["parts"][0]["thoughtSignature"] == SKIP_SIGNATURE


def test_text_signature_replayed_on_the_text_part() -> None:
    replay = {"wire": "gemini", "model": MODEL, "signature": "tsig"}
    messages = [{"type": "user", "text": "q"}, {"type": "assistant", "text": "a", "replay": replay}]
    assert build_contents(messages, MODEL)[1]["parts"] == [{"text": "a", "thoughtSignature": "tsig"}]
    assert build_contents(messages, "gemini-2.5-pro")[1]["parts"] == [{"text": "a"}]


def test_parallel_results_share_one_content() -> None:
    contents = build_contents(golden.conversations(MODEL)["tool_calls"], MODEL)
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert [list(p) for p in contents[2]["parts"]] == [["functionResponse"], ["functionResponse"]]
    assert contents[1]["parts"][2] == {"functionCall": {"name": "read_file", "args": {}}}  # unparsable → {}


def test_model_path_and_key_header() -> None:
    assert stream_url("https://g/v1beta/", "models/gemini-2.5-pro") == (
        "https://g/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
    )
    assert build_headers(_request(GOLDEN_URL, auth={"key": None})) == {"Content-Type": "application/json"}


def test_text_only_model_gets_the_note() -> None:
    messages = golden.conversations(MODEL)["tool_images"]
    contents = build_body(_request(GOLDEN_URL, messages=messages, images=False))["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[0]["parts"] == [
        {
            "text": "What is on screen? Compare with this.\n\n[1 image(s) left out: this model does not take images]"
        }
    ]


# --------------------------------------------------------------------------- streams: success


async def test_text_with_thoughts_and_usage(wire: GeminiWire, fake: FakeGemini) -> None:
    usage = make_usage(prompt=1000, candidates=9, cached=800, thoughts=20)
    reply = await run(wire, fake, text("hello world", thoughts="let me think", signature="ts", usage=usage))
    answer = reply.answer()
    assert reply.texts == ["hell", "o wo", "rld"]
    assert "".join(reply.thoughts) == "let me think" == answer.reasoning
    assert answer.usage.as_dict() == {"input": 200, "output": 29, "cache_read": 800, "cache_write": 0}
    assert answer.replay == {"wire": "gemini", "model": MODEL, "signature": "ts"}


async def test_calls_keep_their_signatures_and_gemini_ids(wire: GeminiWire, fake: FakeGemini) -> None:
    step = tool_calls(
        call("read_file", {"path": "a.txt"}, signature="s-a"),
        call("read_file", {"path": "b.txt"}, id="fc-2", signature=None),
        text="Reading.",
    )
    reply = await run(wire, fake, step)
    answer = reply.answer()
    assert answer.text == "Reading."
    # No id from Gemini: left empty so the loop gives a unique one (two calls share a name).
    assert [(c.id, c.name, json.loads(c.arguments), c.signature) for c in answer.tool_calls] == [
        ("", "read_file", {"path": "a.txt"}, "s-a"),
        ("fc-2", "read_file", {"path": "b.txt"}, None),
    ]
    assert answer.replay == {"wire": "gemini", "model": MODEL}
    assert reply.touches == 2


RECORDED = [
    ": keep-alive",
    "",
    "data: {not json",
    "",
    "garbage",
    "",
    "data: []",
    "",
    event({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}}]}),  # empty: no progress
    "",
    event(
        {"candidates": [{"content": {"parts": [{"text": "thinking…", "thought": True}], "role": "model"}}]}
    ),
    "",
    event({"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}, "index": 0}]}),
    "",
    event(
        {
            "candidates": [
                {
                    "content": {"parts": [{"functionCall": {"name": "screenshot"}}], "role": "model"},
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 5},
        }
    ),
    "",
    event({"usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 6}}),  # late usage still counts
    "",
]


async def test_recorded_stream_with_garbage_and_keepalives(wire: GeminiWire, fake: FakeGemini) -> None:
    reply = await run(wire, fake, raw_lines(RECORDED))
    answer = reply.answer()
    assert (answer.text, answer.reasoning) == ("ok", "thinking…")
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("", "screenshot", "")]
    assert answer.usage.as_dict() == {"input": 7, "output": 6, "cache_read": 0, "cache_write": 0}


async def test_crlf_separated_events(wire: GeminiWire, fake: FakeGemini) -> None:
    # The fake's own steps use CRLF, as Google does; this one is spelled out.
    lines = [
        event({"candidates": [{"content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"}]}) + "\r",
        "\r",
    ]
    assert (await run(wire, fake, raw_lines(lines))).answer().text == "a"


# --------------------------------------------------------------------------- streams: failures


@pytest.mark.parametrize(
    ("finish", "message"),
    [
        ("SAFETY", "the model stopped without an answer (finishReason SAFETY)"),
        ("MALFORMED_FUNCTION_CALL", "the model sent a malformed function call"),
        ("STOP", "empty reply"),
    ],
)
async def test_no_answer(wire: GeminiWire, fake: FakeGemini, finish: str, message: str) -> None:
    failure = (await run(wire, fake, text("", finish=finish))).failure()
    assert (failure.kind, failure.message) == ("provider", message)


async def test_blocked_prompt(wire: GeminiWire, fake: FakeGemini) -> None:
    lines = [event({"promptFeedback": {"blockReason": "SAFETY"}}), ""]
    failure = (await run(wire, fake, raw_lines(lines))).failure()
    assert (failure.kind, failure.message) == ("provider", "the prompt was blocked (SAFETY)")


async def test_error_inside_the_stream(wire: GeminiWire, fake: FakeGemini) -> None:
    failure = (await run(wire, fake, error_chunk(503, "The model is overloaded."))).failure()
    assert (failure.kind, failure.status, failure.retryable) == ("http", 503, True)
    assert failure.message == "http: 503: The model is overloaded."
