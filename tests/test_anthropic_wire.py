"""The anthropic wire: golden requests, the pure builders, and recorded streams over real
loopback HTTP against the fake Messages API."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests import golden
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error_after,
    event,
    make_usage,
    raw_lines,
    text,
)
from tests.fakes.base import RecordingReply, wire_request
from tests.wire_fixtures import wire_fixtures
from uji.wires.anthropic import (
    AnthropicWire,
    build_body,
    build_headers,
    build_messages,
    claude_version,
    messages_url,
)
from uji.wires.base import WireRequest

BUDGET_MODEL = "claude-sonnet-4-5"
ADAPTIVE_MODEL = "claude-opus-4-6"
GOLDEN_URL = "https://api.anthropic.com/v1"


# --------------------------------------------------------------------------- fixtures


server, fake, wire = wire_fixtures(FakeAnthropic, AnthropicWire)


def _request(base_url: str, **kw: Any) -> WireRequest:
    return wire_request(
        base_url, **({"model": BUDGET_MODEL, "auth": {"key": "sk-ant-test-1234"}, "cache": "off"} | kw)
    )


async def run(wire: AnthropicWire, fake: FakeAnthropic, *steps: Any, **kw: Any) -> RecordingReply:
    fake.script(*steps)
    reply = RecordingReply()
    await wire.stream(_request(fake.base_url, **kw), reply)
    return reply


def render(request: WireRequest) -> dict[str, Any]:
    return {
        "url": messages_url(request.provider["base_url"]),
        "headers": build_headers(request),
        "body": build_body(request),
    }


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("conversation", list(golden.conversations(BUDGET_MODEL)))
def test_golden_requests(conversation: str) -> None:
    messages = golden.conversations(BUDGET_MODEL)[conversation]
    golden.check(f"anthropic/{conversation}", golden.render_all(BUDGET_MODEL, GOLDEN_URL, messages, render))


def test_golden_adaptive_thinking() -> None:
    messages = golden.conversations(ADAPTIVE_MODEL)["text"]
    golden.check("anthropic/adaptive_text", golden.render_all(ADAPTIVE_MODEL, GOLDEN_URL, messages, render))


def test_golden_shapes_worth_reading() -> None:
    """The rules the goldens pin, stated once in words."""
    messages = golden.conversations(BUDGET_MODEL)["tool_images"]
    body = build_body(golden.request(BUDGET_MODEL, GOLDEN_URL, messages, "low", "long"))
    user, assistant, result = body["messages"]
    assert [b["type"] for b in user["content"]] == ["image", "text"]
    assert assistant["content"] == [{"type": "tool_use", "id": "call_s", "name": "screenshot", "input": {}}]
    # The tool's image sits inside its tool_result; the breakpoint is on that last block.
    block = result["content"][-1]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "call_s"
    assert [p["type"] for p in block["content"]] == ["text", "image"]
    assert block["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "cache_control" not in body["tools"][0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] == 8192


# --------------------------------------------------------------------------- request rules


@pytest.mark.parametrize(
    ("model", "version"),
    [
        ("claude-opus-4-6", (4, 6)),
        ("claude-sonnet-4-5-20250929", (4, 5)),
        ("claude-sonnet-4-20250514", (4, 0)),
        ("claude-opus-4-1-20250805", (4, 1)),
        ("claude-3-7-sonnet-20250219", (3, 7)),
        ("claude-3-5-haiku-latest", (3, 5)),
        ("anthropic/claude-sonnet-4.6", (4, 6)),
        ("us.anthropic.claude-opus-4-6-v1:0", (4, 6)),
        ("claude-sonnet-5", (5, 0)),
        ("my-proxy-model", None),
    ],
)
def test_claude_version(model: str, version: tuple[int, int] | None) -> None:
    assert claude_version(model) == version


@pytest.mark.parametrize(
    ("effort", "max_output", "thinking"),
    [
        ("minimal", 8192, {"type": "enabled", "budget_tokens": 1024}),
        ("low", 8192, {"type": "enabled", "budget_tokens": 2048}),
        ("medium", 8192, {"type": "enabled", "budget_tokens": 7168}),  # shrunk: 1024 left to answer
        ("high", 64000, {"type": "enabled", "budget_tokens": 16384}),
        ("xhigh", 64000, {"type": "enabled", "budget_tokens": 32768}),
        ("max", 64000, {"type": "enabled", "budget_tokens": 62976}),
        ("low", 2500, {"type": "enabled", "budget_tokens": 1476}),
        ("high", 2000, None),  # 976 left for thinking: under the minimum, so none
        ("off", 64000, None),
        (None, 64000, None),
    ],
)
def test_thinking_budget(effort: str | None, max_output: int, thinking: dict[str, Any] | None) -> None:
    body = build_body(_request(GOLDEN_URL, effort=effort, max_output=max_output))
    assert body.get("thinking") == thinking
    assert "output_config" not in body


@pytest.mark.parametrize(
    ("effort", "level"),
    [
        ("minimal", "low"),
        ("low", "low"),
        ("medium", "medium"),
        ("high", "high"),
        ("xhigh", "max"),
        ("max", "max"),
    ],
)
def test_adaptive_thinking_from_4_6(effort: str, level: str) -> None:
    body = build_body(_request(GOLDEN_URL, model="claude-opus-4-6", effort=effort))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": level}


def test_no_thinking_for_off_or_models_that_cannot() -> None:
    for model, effort in [
        ("claude-opus-4-6", "off"),
        ("claude-3-5-haiku-latest", "high"),
        ("claude-x", "bogus"),
    ]:
        body = build_body(_request(GOLDEN_URL, model=model, effort=effort))
        assert "thinking" not in body and "output_config" not in body, model


def test_max_tokens_floor() -> None:
    assert build_body(_request(GOLDEN_URL, max_output=10))["max_tokens"] == 1024


@pytest.mark.parametrize(
    ("model", "model_cache", "cache", "control"),
    [
        (BUDGET_MODEL, True, "short", {"type": "ephemeral"}),
        (BUDGET_MODEL, True, "long", {"type": "ephemeral", "ttl": "1h"}),
        (BUDGET_MODEL, True, "off", None),
        (BUDGET_MODEL, False, "short", None),  # the model says `cache = false`
        ("claude-new-thing", None, "short", {"type": "ephemeral"}),  # unlisted Claude: yes
        ("proxy-model", None, "short", {"type": "ephemeral"}),  # any model of the wire: yes
    ],
)
def test_cache_breakpoints(
    model: str, model_cache: bool | None, cache: str, control: dict[str, Any] | None
) -> None:
    body = build_body(_request(GOLDEN_URL, model=model, model_cache=model_cache, cache=cache))
    assert body["system"][-1].get("cache_control") == control
    assert body["tools"][-1].get("cache_control") == control
    assert body["messages"][-1]["content"][-1].get("cache_control") == control


def test_cache_breakpoint_goes_on_the_last_user_message() -> None:
    messages = [{"type": "user", "text": "a"}, {"type": "assistant", "text": "b"}]
    body = build_body(_request(GOLDEN_URL, messages=messages, cache="short", system="", tools=[]))
    assert "system" not in body and "tools" not in body
    assert body["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in body["messages"][1]["content"][-1]


def test_replay_only_to_the_model_that_signed_it() -> None:
    messages = golden.conversations(BUDGET_MODEL)["reasoning_replay"]
    out = build_messages(messages, BUDGET_MODEL)
    other, own = out[1], out[3]
    assert other["content"] == [{"type": "text", "text": "An answer from another model."}]
    assert [b["type"] for b in own["content"]] == ["thinking", "redacted_thinking", "tool_use"]
    assert own["content"][0] == {"type": "thinking", "thinking": "I should read it.", "signature": "sig-own"}
    # Sent to another model, the same history carries no thinking at all.
    assert [b["type"] for b in build_messages(messages, "claude-opus-4-6")[3]["content"]] == ["tool_use"]


def test_tool_results_and_context_share_one_user_message() -> None:
    out = build_messages(golden.conversations(BUDGET_MODEL)["tool_calls"], BUDGET_MODEL)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert [b["type"] for b in out[2]["content"]] == ["tool_result", "tool_result", "text"]
    # Unparsable arguments go as an empty object; the tool result already said why.
    assert out[1]["content"][2]["input"] == {}


def test_text_only_model_gets_the_note_instead_of_images() -> None:
    messages = golden.conversations(BUDGET_MODEL)["tool_images"]
    body = build_body(_request(GOLDEN_URL, messages=messages, images=False))
    user, _, result = body["messages"]
    assert user["content"] == [
        {
            "type": "text",
            "text": "What is on screen? Compare with this.\n\n"
            "[1 image(s) left out: this model does not take images]",
        }
    ]
    assert result["content"][0]["content"] == (
        "1 screenshot\n\n[1 image(s) left out: this model does not take images]"
    )


def test_empty_user_text_is_never_an_empty_block() -> None:
    out = build_messages([{"type": "user", "text": ""}, {"type": "assistant", "text": "  "}], BUDGET_MODEL)
    assert out == [{"role": "user", "content": [{"type": "text", "text": "(empty message)"}]}]


# --------------------------------------------------------------------------- streams: success


async def test_text_with_thinking_and_usage(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    usage = make_usage(input=40, output=9, cache_read=1000, cache_write=200)
    reply = await run(wire, fake, text("hello world", thinking="let me think", redacted="UkVE", usage=usage))
    answer = reply.answer()
    assert reply.texts == ["hell", "o wo", "rld"]
    assert "".join(reply.thoughts) == "let me think" == answer.reasoning
    assert answer.text == "hello world"
    assert answer.usage.as_dict() == {"input": 40, "output": 9, "cache_read": 1000, "cache_write": 200}
    assert answer.replay == {
        "wire": "anthropic",
        "model": BUDGET_MODEL,
        "blocks": [
            {"type": "thinking", "thinking": "let me think", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "UkVE"},
        ],
    }


async def test_unsigned_thinking_is_not_kept_for_replay(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    answer = (await run(wire, fake, text("ok", thinking="hmm", signature=None))).answer()
    assert answer.reasoning == "hmm" and answer.replay is None


RECORDED = [
    # A stream as the API sends it, with the junk a proxy may add between events.
    ": keep-alive",
    "",
    event(
        {"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 7, "output_tokens": 1}}}
    ),
    "",
    "event: ping",
    'data: {"type": "ping"}',
    "",
    "data: {not json",
    "",
    "garbage without a colon",
    "",
    "data: 42",
    "",
    event({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    "",
    event({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
    "",
    event({"type": "content_block_delta", "index": 0, "delta": {"type": "something_new", "x": 1}}),
    "",
    event({"type": "content_block_stop", "index": 0}),
    "",
    event(
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "screenshot", "input": {"full": True}},
        }
    ),
    "",
    event({"type": "content_block_stop", "index": 1}),
    "",
    event({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
    "",
    event({"type": "message_stop"}),
    "",
]


async def test_recorded_stream_with_garbage_and_keepalives(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    answer = (await run(wire, fake, raw_lines(RECORDED))).answer()
    assert answer.text == "ok"
    # A call whose whole input came in its start block, with no deltas.
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("t1", "screenshot", '{"full": true}')
    ]
    assert answer.usage.as_dict() == {"input": 7, "output": 5, "cache_read": 0, "cache_write": 0}


async def test_a_server_holding_the_stream_open_after_message_stop(
    wire: AnthropicWire, fake: FakeAnthropic
) -> None:
    # message_stop, then pings for 3 s more: the answer is ready after a short drain, and
    # the wire leaves the stream while the server is still sending (how long the drain
    # takes is measured in bench/wires.py).
    step = text("late")
    held = replace(step, events=[*step.events, *[b'event: ping\ndata: {"type":"ping"}\n\n'] * 60], gap=0.05)
    answer = (await run(wire, fake, held)).answer()
    assert answer.text == "late"
    assert fake.wait_for_drops(1)


# --------------------------------------------------------------------------- streams: failures


async def test_refusal(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    failure = (await run(wire, fake, text("", stop="refusal"))).failure()
    assert failure.kind == "provider" and "refused" in failure.message


@pytest.mark.parametrize(
    ("kind", "status", "retryable"),
    [
        ("overloaded_error", 529, True),
        ("api_error", 500, True),
        ("rate_limit_error", 429, True),
        ("invalid_request_error", None, False),
    ],
)
async def test_in_stream_errors(
    wire: AnthropicWire, fake: FakeAnthropic, kind: str, status: int | None, retryable: bool
) -> None:
    reply = await run(wire, fake, error_after(kind, "it broke", text="par"))
    failure = reply.failure()
    assert reply.texts == ["par"]
    assert (failure.status, failure.retryable) == (status, retryable)
    if status is None:
        assert (failure.kind, failure.message) == ("provider", f"stream error: {kind}: it broke")
    else:
        assert (failure.kind, failure.message) == ("http", f"http: {status}: {kind}: it broke")
