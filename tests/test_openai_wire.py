"""openai-chat over real loopback HTTP against the fake server, plus the pure builders."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from tests.fakes.base import RecordingReply
from tests.fakes.openai_server import (
    FakeOpenAI,
    call,
    chunk,
    drip,
    drop_after,
    event,
    make_usage,
    raw_lines,
    status,
    text,
    text_deltas,
    tool_call,
    tool_calls,
)
from uji.wires.base import WireRequest
from uji.wires.http import Http
from uji.wires.openai_chat import (
    TOOL_IMAGES_TEXT,
    OpenAIChatWire,
    build_body,
    build_headers,
    build_messages,
    chat_url,
    dialect_for,
    left_out_note,
    reencode_arguments,
    usage_from,
)
from uji.wires.sse import retry_after

TOOLS = [{"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}}]


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server


@pytest.fixture
async def wire() -> AsyncIterator[OpenAIChatWire]:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=5.0)) as client:
        yield OpenAIChatWire(client, idle=5.0)


def make_request(base_url: str = "http://127.0.0.1:1/v1", **kw: Any) -> WireRequest:
    fields: dict[str, Any] = {
        "model": "m",
        "system": "You are a test.",
        "messages": [{"type": "user", "text": "hi"}],
        "tools": TOOLS,
        "provider": {"id": "test", "base_url": base_url},
        "auth": {"key": "sk-test"},
        "session": "sess-1",
    }
    return WireRequest(**(fields | kw))


async def run(wire: OpenAIChatWire, fake: FakeOpenAI, *steps: Any, **kw: Any) -> RecordingReply:
    fake.script(*steps)
    reply = RecordingReply()
    await wire.stream(make_request(fake.base_url, **kw), reply)
    return reply


# --------------------------------------------------------------------------- request building


def test_golden_text_body_and_url() -> None:
    body = build_body(make_request("http://localhost:11434/v1/", max_output=100))
    assert body == {
        "model": "m",
        "messages": [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "read_file",
                    "description": "Read a file",
                    "parameters": {"type": "object"},
                },
            }
        ],
        "max_tokens": 1024,
    }
    assert chat_url("http://localhost:11434/v1/") == "http://localhost:11434/v1/chat/completions"


def test_no_tools_no_system() -> None:
    body = build_body(make_request(system="", tools=[], max_output=20000))
    assert "tools" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["max_tokens"] == 20000


def test_headers_with_and_without_key() -> None:
    assert build_headers(make_request()) == {
        "Content-Type": "application/json",
        "Authorization": "Bearer sk-test",
    }
    assert build_headers(make_request(auth={"key": None})) == {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("base_url", "field", "cache_key"),
    [
        ("https://api.openai.com/v1", "max_completion_tokens", True),
        ("https://eu.api.openai.com/v1", "max_completion_tokens", True),
        ("https://openrouter.ai/api/v1", "max_tokens", False),
        ("https://api.groq.com/openai/v1", "max_tokens", False),
    ],
)
def test_host_dialects(base_url: str, field: str, cache_key: bool) -> None:
    body = build_body(make_request(base_url))
    assert body[field] == 8192
    assert ("prompt_cache_key" in body) is cache_key
    if cache_key:
        assert body["prompt_cache_key"] == "sess-1"


def test_cache_key_off_or_without_session() -> None:
    assert "prompt_cache_key" not in build_body(make_request("https://api.openai.com/v1", cache="off"))
    assert "prompt_cache_key" not in build_body(make_request("https://api.openai.com/v1", session=""))
    assert build_body(make_request("https://api.openai.com/v1", cache="long"))["prompt_cache_key"] == "sess-1"


@pytest.mark.parametrize(
    ("base_url", "effort", "expected"),
    [
        ("https://api.openai.com/v1", "high", {"reasoning_effort": "high"}),
        ("https://api.deepseek.com", "low", {"reasoning_effort": "low"}),
        ("https://openrouter.ai/api/v1", "high", {"reasoning": {"effort": "high"}}),
        ("https://api.openai.com/v1", "off", {}),
        ("https://openrouter.ai/api/v1", "off", {}),
        ("https://api.openai.com/v1", None, {}),
    ],
)
def test_effort_knobs(base_url: str, effort: str | None, expected: dict[str, Any]) -> None:
    body = build_body(make_request(base_url, effort=effort))
    got = {k: body[k] for k in ("reasoning_effort", "reasoning") if k in body}
    assert got == expected


def test_compat_overrides_the_host_table() -> None:
    compat = {"max_tokens_field": False, "effort": "reasoning", "cache_key": True, "unknown": 1}
    body = build_body(
        make_request(provider={"id": "x", "base_url": "http://h/v1", "compat": compat}, effort="low")
    )
    assert "max_tokens" not in body and "max_completion_tokens" not in body
    assert body["reasoning"] == {"effort": "low"}
    assert body["prompt_cache_key"] == "sess-1"
    assert dialect_for("http://h/v1", "not a table") == dialect_for("http://h/v1")


def test_golden_tool_calls_and_results() -> None:
    messages = [
        {"type": "user", "text": "read a and b"},
        {
            "type": "assistant",
            "text": "",
            "tool_calls": [
                {"id": "c1", "name": "read_file", "arguments": '{ "path" : "a" }'},
                {"id": "c2", "name": "read_file", "arguments": "{not json"},
            ],
        },
        {"type": "tool", "tool_call_id": "c1", "name": "read_file", "content": "A"},
        {"type": "tool", "tool_call_id": "c2", "name": "read_file", "content": "error: bad"},
        {"type": "assistant", "text": "done", "reasoning": "thought"},
    ]
    assert build_messages("S", messages) == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "read a and b"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"a"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "A"},
        {"role": "tool", "tool_call_id": "c2", "content": "error: bad"},
        {"role": "assistant", "content": "done"},
    ]
    named = build_messages("", messages[2:3], tool_result_name=True)
    assert named == [{"role": "tool", "tool_call_id": "c1", "content": "A", "name": "read_file"}]


@pytest.mark.parametrize(
    ("raw", "sent"),
    [
        ("", "{}"),
        ("[1]", "{}"),
        ("null", "{}"),
        ('{"a":"é"}', '{"a":"é"}'),
        ({"a": 1}, '{"a":1}'),
        (None, "{}"),
    ],
)
def test_reencode_arguments(raw: Any, sent: str) -> None:
    assert reencode_arguments(raw) == sent


def image(tag: str, size: int = 8) -> dict[str, Any]:
    return {"media_type": "image/png", "data": tag * size, "name": f"{tag}.png", "width": 1, "height": 1}


def url(img: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{img['data']}"}}


def test_user_images_become_parts() -> None:
    a = image("a")
    assert build_messages("", [{"type": "user", "text": "look", "images": [a]}]) == [
        {"role": "user", "content": [{"type": "text", "text": "look"}, url(a)]}
    ]
    assert build_messages("", [{"type": "user", "text": "", "images": [a]}]) == [
        {"role": "user", "content": [url(a)]}
    ]


def test_tool_images_follow_the_run_of_results() -> None:
    a, b = image("a"), image("b")
    messages = [
        {"type": "assistant", "text": "", "tool_calls": [{"id": "1", "name": "s", "arguments": "{}"}] * 2},
        {"type": "tool", "tool_call_id": "1", "name": "s", "content": "one", "images": [a]},
        {"type": "tool", "tool_call_id": "2", "name": "s", "content": "two", "images": [b]},
        {"type": "user", "text": "next"},
    ]
    out = build_messages("", messages)
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "user", "user"]
    assert out[1]["content"] == "one" and out[2]["content"] == "two"
    assert out[3] == {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_TEXT}, url(a), url(b)]}
    assert out[4] == {"role": "user", "content": "next"}
    # At the end of the history too.
    assert build_messages("", messages[:2])[-1]["content"][0]["text"] == TOOL_IMAGES_TEXT


def test_image_count_budget_keeps_the_newest_twenty() -> None:
    old = [image(f"{i:02d}") for i in range(5)]
    new = [image(f"n{i:02d}") for i in range(18)]
    messages = [
        {"type": "user", "text": "old", "images": old},
        {"type": "tool", "tool_call_id": "t", "name": "s", "content": "shot", "images": new},
    ]
    out = build_messages("", messages)
    user, tool, extra = out
    # 18 newest from the tool, then the 2 newest of the user's 5.
    assert user["content"] == [
        {"type": "text", "text": f"old\n\n{left_out_note(3)}"},
        url(old[3]),
        url(old[4]),
    ]
    assert tool["content"] == "shot"
    assert len(extra["content"]) == 19
    assert left_out_note(3) == "[3 image(s) left out: only the newest images fit in a request]"


def test_image_size_budget_counts_from_the_end() -> None:
    mb = 1024 * 1024
    big_old = image("o", 10 * mb)
    big_new = image("n", 10 * mb)
    messages = [
        {"type": "tool", "tool_call_id": "t1", "name": "s", "content": "first", "images": [big_old]},
        {"type": "tool", "tool_call_id": "t2", "name": "s", "content": "", "images": [big_new]},
    ]
    out = build_messages("", messages)
    assert out[0]["content"] == f"first\n\n{left_out_note(1)}"
    assert out[1]["content"] == ""
    assert out[2]["content"][1] == url(big_new)
    # When every image of a user message is left out, the content stays a string.
    user_only = build_messages("", [{"type": "user", "text": "", "images": [big_old]}, *messages[1:]])
    assert user_only[0] == {"role": "user", "content": left_out_note(1)}


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (make_usage(100, 7), (100, 7, 0, 0)),
        (make_usage(100, 7, prompt_tokens_details={"cached_tokens": 60}), (40, 7, 60, 0)),
        (make_usage(100, 7, prompt_cache_hit_tokens=30, prompt_cache_miss_tokens=70), (70, 7, 30, 0)),
        (make_usage(100, 7, cached_tokens=20, prompt_tokens_details={"cached_tokens": 10}), (80, 7, 20, 0)),
        (
            make_usage(100, 7, cache_write_tokens=25, prompt_tokens_details={"cached_tokens": 50}),
            (25, 7, 50, 25),
        ),
        (make_usage(100, 7, prompt_tokens_details={"cached_tokens": None}), (100, 7, 0, 0)),
        ({}, (0, 0, 0, 0)),
    ],
)
def test_usage_variants(usage: dict[str, Any], expected: tuple[int, int, int, int]) -> None:
    u = usage_from(usage)
    assert (u.input, u.output, u.cache_read, u.cache_write) == expected


def test_retry_after_parsing() -> None:
    assert retry_after("3") == 3.0
    assert retry_after(" 10 ") == 10.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") is None
    assert retry_after("1.5") is None
    assert retry_after(None) is None


# --------------------------------------------------------------------------- streaming: success


async def test_text_stream_sends_the_golden_request(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    reply = await run(wire, fake, text("hello world", usage=make_usage(50, 9)))
    assert reply.texts == ["hell", "o wo", "rld"]
    answer = reply.answer
    assert (answer.text, answer.tool_calls, answer.reasoning) == ("hello world", [], "")
    assert answer.usage.as_dict() == {"input": 50, "output": 9, "cache_read": 0, "cache_write": 0}
    [req] = fake.requests
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.headers["content-type"] == "application/json"
    assert req.headers["accept"] == "text/event-stream"
    assert req.body == build_body(make_request(fake.base_url))


async def test_tool_calls_sorted_by_index_with_missing_ids(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    step = tool_calls(
        call("read_file", {"path": "a.txt"}, id="call_a"),
        call("read_file", '{"path": "b.txt"}', id=None),
        text="Reading.",
    )
    reply = await run(wire, fake, step)
    answer = reply.answer
    assert answer.text == "Reading."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("", "read_file", {"path": "b.txt"}),
    ]
    assert reply.touches >= 4


async def test_tool_call_chunks_out_of_order(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    def tc(index: int, **fn: Any) -> dict[str, Any]:
        return chunk({"tool_calls": [{"index": index, "id": f"id{index}", "function": fn}]})

    lines = [
        event(tc(1, name="second", arguments='{"n":')),
        "",
        event(tc(0, name="first", arguments="{}")),
        "",
        event(tc(1, arguments="2}")),
        "",
        event(chunk({}, "tool_calls")),
        "",
        "data: [DONE]",
        "",
    ]
    answer = (await run(wire, fake, raw_lines(lines))).answer
    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [
        ("id0", "first", "{}"),
        ("id1", "second", '{"n":2}'),
    ]


async def test_garbage_and_keepalives_are_skipped(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    lines = [
        ": keep-alive",
        "",
        "event: ping",
        "",
        "data: {not json",
        "",
        "garbage without a colon",
        "",
        "data: 42",
        "",
        'data: {"choices": "nonsense"}',
        "",
        "data: \x00\x01\x02",
        "",
        event(chunk({"content": "ok"})),
        "",
        "retry: 100",
        "",
        event(chunk({}, "stop")),
        "",
        "data: [DONE]",
        "",
        event(chunk({"content": " after done"})),
        "",
    ]
    reply = await run(wire, fake, raw_lines(lines))
    assert reply.answer.text == "ok"


@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_reasoning_deltas(wire: OpenAIChatWire, fake: FakeOpenAI, field_name: str) -> None:
    reply = await run(wire, fake, text("answer", reasoning="let me think", reasoning_field=field_name))
    assert "".join(reply.thoughts) == "let me think"
    assert reply.answer.reasoning == "let me think"
    assert reply.answer.text == "answer"


async def test_usage_through_the_wire(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    usage = make_usage(1000, 20, prompt_tokens_details={"cached_tokens": 800})
    answer = (await run(wire, fake, text("hi", usage=usage))).answer
    assert answer.usage.as_dict() == {"input": 200, "output": 20, "cache_read": 800, "cache_write": 0}
    answer = (await run(wire, fake, text("hi", usage=None))).answer
    assert answer.usage.as_dict() == {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}


async def test_length_with_complete_calls_is_an_answer(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    answer = (await run(wire, fake, tool_call("read_file", {"path": "a"}, finish="length"))).answer
    assert answer.tool_calls[0].arguments == '{"path": "a"}'


async def test_a_drop_after_the_finish_keeps_the_answer(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    # role chunk, "hi", finish — then the socket closes before usage and [DONE].
    answer = (await run(wire, fake, drop_after(3, text("hi")))).answer
    assert answer.text == "hi"


async def test_a_slow_stream_that_keeps_progressing(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    wire.idle = 0.5
    reply = await run(wire, fake, text("abcdefghij", piece=1, gap=0.08))
    assert reply.answer.text == "abcdefghij"  # ~1 s in total, never 0.5 s without a delta


# --------------------------------------------------------------------------- streaming: failures


async def test_cut_off_tool_json(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, tool_call("read_file", '{"path": "a', finish="length"))).failure
    assert failure.kind == "provider" and not failure.retryable
    assert "tool call arguments were cut off; raise the model's max output" in failure.message


async def test_length_without_calls(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    answer = (await run(wire, fake, text("partial", finish="length"))).answer
    assert (answer.text, answer.limited, answer.usage.output) == ("partial", True, 3)


async def test_stream_without_finish_is_retryable(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, text("half", finish=None))).failure
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream ended before the model finished",
    )
    assert failure.retryable


async def test_finish_not_required_by_compat(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    provider = {"id": "x", "base_url": fake.base_url, "compat": {"finish_reason": False}}
    reply = await run(wire, fake, text("half", finish=None), provider=provider)
    assert reply.answer.text == "half"


async def test_empty_reply(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, text("", reasoning="only thoughts"))).failure
    assert (failure.kind, failure.message) == ("provider", "empty reply")


@pytest.mark.parametrize("kind", ["comment", "empty"])
async def test_idle_stream_stalls(wire: OpenAIChatWire, fake: FakeOpenAI, kind: Any) -> None:
    wire.idle = 0.5
    started = time.monotonic()
    failure = (await run(wire, fake, drip(0.05, event=kind))).failure
    elapsed = time.monotonic() - started
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream stalled: no data for 0.5s",
    )
    assert failure.retryable
    assert 0.5 <= elapsed < 1.5
    assert fake.wait_for_drops(1)


async def test_server_that_never_answers_stalls(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    wire.idle = 0.3
    failure = (await run(wire, fake, text("late", delay=2.0))).failure
    assert failure.message == "stream stalled: no data for 0.3s"
    assert fake.wait_for_drops(1)


async def test_connections_are_reused_across_calls(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    fake.script(text("a"), tool_call("read_file", {"path": "a"}), text("c"))
    for _ in range(3):
        reply = RecordingReply()
        await wire.stream(make_request(fake.base_url), reply)
        reply.answer  # noqa: B018 - asserts it succeeded
    assert fake.connections == 1


async def test_500_and_429_with_retry_after(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, status(500, {"error": {"message": "boom"}}))).failure
    assert (failure.kind, failure.status, failure.retry_after) == ("http", 500, None)
    assert failure.message == 'http: 500: {"error": {"message": "boom"}}'
    assert failure.retryable
    failure = (await run(wire, fake, status(429, "slow down", {"retry-after": "1"}))).failure
    assert (failure.kind, failure.status, failure.retry_after, failure.message) == (
        "http",
        429,
        1.0,
        "http: 429: slow down",
    )
    assert failure.retryable


async def test_400_is_final_and_clipped(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, status(400, "x" * 10_000))).failure
    assert failure.status == 400 and not failure.retryable
    assert failure.message == "http: 400: " + "x" * 2000


@pytest.mark.parametrize("code", [401, 403])
async def test_auth_failures(wire: OpenAIChatWire, fake: FakeOpenAI, code: int) -> None:
    failure = (await run(wire, fake, status(code, "bad key"))).failure
    assert (failure.kind, failure.status) == ("auth", code)
    assert failure.message == f"authentication rejected ({code}) - check the api key for this provider"
    assert not failure.retryable


async def test_a_2xx_that_is_not_an_event_stream(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    failure = (await run(wire, fake, status(200, {"error": "nope"}))).failure
    assert failure.kind == "provider"
    assert failure.message == 'expected an event stream, got application/json: {"error": "nope"}'


async def test_dropped_connection(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    reply = await run(wire, fake, drop_after(5))
    failure = reply.failure
    assert (failure.kind, failure.status) == ("http", None)
    assert failure.message.startswith("connection dropped mid-stream")
    assert failure.retryable
    assert "".join(reply.texts) == "xxxx"  # role chunk + four deltas arrived first


async def test_connection_refused(wire: OpenAIChatWire) -> None:
    reply = RecordingReply()
    await wire.stream(make_request("http://127.0.0.1:1/v1"), reply)
    assert (reply.failure.kind, reply.failure.status) == ("http", None)
    assert reply.failure.message.startswith("could not connect")


async def test_error_object_inside_the_stream(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    lines = [event(chunk({"content": "a"})), "", event({"error": {"code": 502, "message": "upstream"}}), ""]
    failure = (await run(wire, fake, raw_lines(lines))).failure
    assert (failure.kind, failure.status, failure.message) == ("http", 502, "http: 502: upstream")
    lines = [event({"error": {"message": "content policy"}}), ""]
    failure = (await run(wire, fake, raw_lines(lines))).failure
    assert (failure.kind, failure.message) == ("provider", "stream error: content policy")


async def test_missing_base_url(wire: OpenAIChatWire) -> None:
    reply = RecordingReply()
    await wire.stream(make_request(provider={"id": "x"}), reply)
    assert reply.failure.kind == "provider"


async def test_cancel_drops_the_connection_at_once(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    fake.script(drip(0.05))
    reply = RecordingReply()
    task = asyncio.create_task(wire.stream(make_request(fake.base_url), reply))
    await asyncio.sleep(0.3)
    started = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - started < 0.5
    assert fake.wait_for_drops(1, timeout=1.0)
    assert fake.drops == 1
    assert reply.ends == []


async def test_the_owned_client_is_created_lazily(fake: FakeOpenAI) -> None:
    async with Http() as http:
        wire = OpenAIChatWire(http)
        reply = await run(wire, fake, text("a"), text("b"))
        assert reply.answer.text == "a"
        reply = RecordingReply()
        await wire.stream(make_request(fake.base_url), reply)
        assert reply.answer.text == "b"


# --------------------------------------------------------------------------- the fake itself


async def test_fake_answers_side_calls_without_a_step(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    fake.script(text("turn answer"))
    side = RecordingReply()
    await wire.stream(make_request(fake.base_url, tools=[], system="Write a title"), side)
    summary = RecordingReply()
    await wire.stream(make_request(fake.base_url, tools=[], system="Summarize the conversation"), summary)
    turn = RecordingReply()
    await wire.stream(make_request(fake.base_url), turn)
    after = RecordingReply()
    await wire.stream(make_request(fake.base_url), after)
    assert side.answer.text == "Title"
    assert summary.answer.text == "SUMMARY OF EARLIER WORK"
    assert turn.answer.text == "turn answer"
    assert after.answer.text == "done" and fake.exhausted
    assert [r.side for r in fake.requests] == [True, True, False, False]
    assert [r.step for r in fake.turn_requests] == [0, None]


# --------------------------------------------------------------------------- throughput


async def test_fifty_thousand_deltas(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    fake.script(text_deltas(50_000))
    reply = RecordingReply()
    started = time.perf_counter()
    await wire.stream(make_request(fake.base_url), reply)
    elapsed = time.perf_counter() - started
    assert len(reply.answer.text) == 50_000 and len(reply.texts) == 50_000
    assert elapsed < 5.0, elapsed  # a sanity bound only; the figure belongs in bench
