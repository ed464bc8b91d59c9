"""openai-chat over real loopback HTTP against the fake server, plus the pure builders."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.base import RecordingReply, wire_request
from tests.fakes.openai_server import (
    FakeOpenAI,
    chunk,
    event,
    make_usage,
    raw_lines,
    text,
)
from tests.wire_fixtures import wire_fixtures
from uji.wires.base import WireRequest
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


server, fake, wire = wire_fixtures(FakeOpenAI, OpenAIChatWire)


def make_request(base_url: str = "http://127.0.0.1:1/v1", **kw: Any) -> WireRequest:
    return wire_request(base_url, **({"tools": TOOLS} | kw))


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
        "tool_choice": "auto",  # llama.cpp's servers leave the tools out without it
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
    answer = (await run(wire, fake, raw_lines(lines))).answer()
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
    assert reply.answer().text == "ok"


@pytest.mark.parametrize("field_name", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_reasoning_deltas(wire: OpenAIChatWire, fake: FakeOpenAI, field_name: str) -> None:
    reply = await run(wire, fake, text("answer", reasoning="let me think", reasoning_field=field_name))
    assert "".join(reply.thoughts) == "let me think"
    assert reply.answer().reasoning == "let me think"
    assert reply.answer().text == "answer"


async def test_usage_through_the_wire(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    usage = make_usage(1000, 20, prompt_tokens_details={"cached_tokens": 800})
    answer = (await run(wire, fake, text("hi", usage=usage))).answer()
    assert answer.usage.as_dict() == {"input": 200, "output": 20, "cache_read": 800, "cache_write": 0}
    answer = (await run(wire, fake, text("hi", usage=None))).answer()
    assert answer.usage.as_dict() == {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}


# --------------------------------------------------------------------------- streaming: failures


async def test_finish_not_required_by_compat(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    provider = {"id": "x", "base_url": fake.base_url, "compat": {"finish_reason": False}}
    reply = await run(wire, fake, text("half", finish=None), provider=provider)
    assert reply.answer().text == "half"


async def test_error_object_inside_the_stream(wire: OpenAIChatWire, fake: FakeOpenAI) -> None:
    lines = [event(chunk({"content": "a"})), "", event({"error": {"code": 502, "message": "upstream"}}), ""]
    failure = (await run(wire, fake, raw_lines(lines))).failure()
    assert (failure.kind, failure.status, failure.message) == ("http", 502, "http: 502: upstream")
    lines = [event({"error": {"message": "content policy"}}), ""]
    failure = (await run(wire, fake, raw_lines(lines))).failure()
    assert (failure.kind, failure.message) == ("provider", "stream error: content policy")


# --------------------------------------------------------------------------- the fake itself


# --------------------------------------------------------------------------- throughput
