"""The anthropic wire: golden requests, the pure builders, and recorded streams over real
loopback HTTP against the fake Messages API."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import httpx2
import pytest

from tests import golden
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    call,
    drip,
    drop_after,
    error_after,
    event,
    make_usage,
    raw_lines,
    status,
    text,
    text_deltas,
    tool_call,
    tool_calls,
)
from tests.fakes.base import RecordingReply
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


@pytest.fixture(scope="module")
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeAnthropic) -> FakeAnthropic:
    server.reset()
    return server


@pytest.fixture
async def wire() -> AsyncIterator[AnthropicWire]:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=5.0)) as client:
        yield AnthropicWire(client, idle=5.0)


def _request(base_url: str, **kw: Any) -> WireRequest:
    fields: dict[str, Any] = {
        "model": BUDGET_MODEL,
        "system": "You are a test.",
        "messages": [{"type": "user", "text": "hi"}],
        "tools": golden.TOOLS[:1],
        "provider": {"id": "test", "base_url": base_url},
        "auth": {"key": "sk-ant-test-1234"},
        "session": "sess-1",
        "effort": None,
        "cache": "off",
    }
    return WireRequest(**(fields | kw))


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


async def test_what_goes_over_the_wire_is_the_golden_request(
    wire: AnthropicWire, fake: FakeAnthropic
) -> None:
    messages = golden.conversations(BUDGET_MODEL)["tool_images"]
    request = golden.request(BUDGET_MODEL, fake.base_url, messages, "high", "long")
    fake.script(text("ok"))
    reply = RecordingReply()
    await wire.stream(request, reply)
    assert reply.answer.text == "ok"
    [sent] = fake.requests
    assert (sent.method, sent.path) == ("POST", "/v1/messages")
    assert sent.body == build_body(request)
    expected = {k.lower(): v for k, v in build_headers(request).items()}
    assert {k: sent.headers[k] for k in expected} == expected
    assert sent.headers["x-api-key"] == golden.KEY
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers


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
        (BUDGET_MODEL, False, "short", None),  # the catalog says the model does not cache
        ("claude-new-thing", None, "short", {"type": "ephemeral"}),  # unlisted Claude: yes
        ("proxy-model", None, "short", None),  # unlisted and not a Claude: no
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
    answer = reply.answer
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
    answer = (await run(wire, fake, text("ok", thinking="hmm", signature=None))).answer
    assert answer.reasoning == "hmm" and answer.replay is None


async def test_tool_calls_in_order(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    step = tool_calls(
        call("read_file", {"path": "a.txt"}, id="toolu_a"),
        call("read_file", '{"path": "b.txt"}', id=None),  # a missing id: the loop makes one
        text="Reading.",
        thinking="two files",
    )
    reply = await run(wire, fake, step)
    answer = reply.answer
    assert answer.text == "Reading."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("toolu_a", "read_file", {"path": "a.txt"}),
        ("", "read_file", {"path": "b.txt"}),
    ]
    assert reply.touches >= 4


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
    answer = (await run(wire, fake, raw_lines(RECORDED))).answer
    assert answer.text == "ok"
    # A call whose whole input came in its start block, with no deltas.
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("t1", "screenshot", '{"full": true}')
    ]
    assert answer.usage.as_dict() == {"input": 7, "output": 5, "cache_read": 0, "cache_write": 0}


async def test_a_server_holding_the_stream_open_after_message_stop(
    wire: AnthropicWire, fake: FakeAnthropic
) -> None:
    # message_stop, then pings for 3 s more: the answer is ready after a short drain.
    step = text("late")
    held = replace(step, events=[*step.events, *[b'event: ping\ndata: {"type":"ping"}\n\n'] * 60], gap=0.05)
    started = time.monotonic()
    answer = (await run(wire, fake, held)).answer
    assert answer.text == "late"
    assert time.monotonic() - started < 2.0


async def test_a_drop_after_the_stop_reason_keeps_the_answer(
    wire: AnthropicWire, fake: FakeAnthropic
) -> None:
    step = text("hi")  # start, ping, block start, delta, block stop, message_delta, message_stop
    answer = (await run(wire, fake, drop_after(6, step))).answer
    assert answer.text == "hi"


async def test_connections_are_reused(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    fake.script(text("a"), tool_call("read_file", {"path": "a"}), text("c"))
    for _ in range(3):
        reply = RecordingReply()
        await wire.stream(_request(fake.base_url), reply)
        reply.answer  # noqa: B018 - asserts it succeeded
    assert fake.connections == 1


# --------------------------------------------------------------------------- streams: failures


async def test_cut_off_tool_json(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    failure = (await run(wire, fake, tool_call("read_file", '{"path": "a', stop="max_tokens"))).failure
    assert failure.kind == "provider" and not failure.retryable
    assert "tool call arguments were cut off; raise the model's max output" in failure.message


async def test_max_tokens_without_calls(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    answer = (await run(wire, fake, text("partial", stop="max_tokens"))).answer
    assert (answer.text, answer.limited, answer.usage.output) == ("partial", True, 3)


async def test_complete_calls_at_max_tokens_are_an_answer(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    answer = (await run(wire, fake, tool_call("read_file", {"path": "a"}, stop="max_tokens"))).answer
    assert json.loads(answer.tool_calls[0].arguments) == {"path": "a"}


async def test_stream_that_ends_without_a_stop(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    failure = (await run(wire, fake, text("half", stop=None, stopped=False))).failure
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream ended before the model finished",
    )
    assert failure.retryable


async def test_empty_reply(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    failure = (await run(wire, fake, text("", thinking="only thoughts"))).failure
    assert (failure.kind, failure.message) == ("provider", "empty reply")


async def test_refusal(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    failure = (await run(wire, fake, text("", stop="refusal"))).failure
    assert failure.kind == "provider" and "refused" in failure.message


@pytest.mark.parametrize("kind", ["ping", "comment"])
async def test_idle_stream_stalls(wire: AnthropicWire, fake: FakeAnthropic, kind: Any) -> None:
    wire.idle = 0.5
    started = time.monotonic()
    failure = (await run(wire, fake, drip(0.05, event=kind))).failure
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream stalled: no data for 0.5s",
    )
    assert 0.5 <= time.monotonic() - started < 1.5
    assert fake.wait_for_drops(1)


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
    failure = reply.failure
    assert reply.texts == ["par"]
    assert (failure.status, failure.retryable) == (status, retryable)
    if status is None:
        assert (failure.kind, failure.message) == ("provider", f"stream error: {kind}: it broke")
    else:
        assert (failure.kind, failure.message) == ("http", f"http: {status}: {kind}: it broke")


async def test_http_statuses(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failure = (await run(wire, fake, status(529, overloaded))).failure
    assert (failure.kind, failure.status, failure.retryable) == ("http", 529, True)
    failure = (await run(wire, fake, status(429, "slow down", {"retry-after": "3"}))).failure
    assert (failure.status, failure.retry_after, failure.retryable) == (429, 3.0, True)
    for code in (401, 403):
        failure = (await run(wire, fake, status(code, "bad key"))).failure
        assert (failure.kind, failure.status) == ("auth", code)
        assert failure.message == f"authentication rejected ({code}) - check the api key for this provider"


async def test_an_echoed_key_is_scrubbed(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    body = {"error": {"message": "bad request", "echo": {"x-api-key": "sk-ant-test-1234"}}}
    failure = (await run(wire, fake, status(500, body))).failure
    assert "sk-ant-test-1234" not in failure.message
    assert "[redacted]" in failure.message


async def test_dropped_connection(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    reply = await run(wire, fake, drop_after(7))
    failure = reply.failure
    assert (failure.kind, failure.status, failure.retryable) == ("http", None, True)
    assert failure.message.startswith("connection dropped mid-stream")
    assert "".join(reply.texts) == "xxxx"  # message_start, ping, block start, then four deltas


async def test_cancel_drops_the_connection(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    fake.script(drip(0.05))
    reply = RecordingReply()
    task = asyncio.create_task(wire.stream(_request(fake.base_url), reply))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert fake.wait_for_drops(1, timeout=1.0)
    assert reply.ends == []


async def test_fake_answers_side_calls(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    fake.script(text("turn"))
    side = RecordingReply()
    await wire.stream(_request(fake.base_url, tools=[], system="Write a title"), side)
    summary = RecordingReply()
    await wire.stream(_request(fake.base_url, tools=[], system="Summarize the work"), summary)
    turn = RecordingReply()
    await wire.stream(_request(fake.base_url), turn)
    assert (side.answer.text, summary.answer.text, turn.answer.text) == (
        "Title",
        "SUMMARY OF EARLIER WORK",
        "turn",
    )


async def test_fifty_thousand_deltas(wire: AnthropicWire, fake: FakeAnthropic) -> None:
    fake.script(text_deltas(50_000))
    reply = RecordingReply()
    started = time.perf_counter()
    await wire.stream(_request(fake.base_url), reply)
    assert len(reply.answer.text) == 50_000 and len(reply.texts) == 50_000
    assert time.perf_counter() - started < 5.0  # a sanity bound; the figure is in bench/wires.py
