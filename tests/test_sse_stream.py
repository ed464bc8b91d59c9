"""The event-stream framing every HTTP wire reads through (`uji.wires.sse`): events cut
out of each network read whole, whatever the line endings and wherever a read ends,
and their JSON decoded; what the model said arrives whole and in order."""

from __future__ import annotations

import json

import pytest

from tests.fakes.base import RecordingReply, Step, wire_request
from tests.fakes.openai_server import FakeOpenAI, chunk
from uji.wires.http import Http
from uji.wires.openai_chat import OpenAIChatWire
from uji.wires.sse import EventSplitter, EventStreamError, objects


def data(content: str, finish: str | None = None) -> str:
    return json.dumps(chunk({"content": content} if content else {}, finish), ensure_ascii=False)


# Every way the WHATWG interpretation lets a server frame an event, in one body: a byte
# order mark, a comment, CRLF, CR alone, no space after the colon, `event`/`id`/`retry`
# fields, data over two lines (joined with LF), a blank line too many, garbage, [DONE].
BODY = (
    "\ufeff: a comment first\r\n"
    f"event: message\r\nid: 7\r\nretry: 100\r\ndata: {data('Hé')}\r\n\r\n"
    f"data:{data('llo ')}\r\r"
    'data: {"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,\n'
    'data: "model":"m","choices":[{"index":0,"delta":{"content":"wörld"},"finish_reason":null}]}\n\n'
    "data: not json\n\n"
    f"data: {data(' ✓')}\n\n\n"
    f"data: {data('', 'stop')}\n\n"
    "data: [DONE]\n\n"
).encode()
DATAS = [
    data("Hé"),
    data("llo "),
    '{"id":"chatcmpl-fake","object":"chat.completion.chunk","created":0,\n'
    '"model":"m","choices":[{"index":0,"delta":{"content":"wörld"},"finish_reason":null}]}',
    "not json",
    data(" ✓"),
    data("", "stop"),
    "[DONE]",
]


def split(body: bytes, cuts: list[int]) -> list[str]:
    splitter = EventSplitter()
    out: list[str] = []
    for start, end in zip([0, *cuts], [*cuts, len(body)], strict=True):
        out += splitter.feed(body[start:end])
    return out


def test_events_are_the_same_wherever_the_reads_end() -> None:
    assert split(BODY, []) == DATAS
    for cut in range(1, len(BODY)):  # inside a CRLF, a UTF-8 character, a blank line...
        assert split(BODY, [cut]) == DATAS, cut
    assert split(BODY, list(range(1, len(BODY)))) == DATAS  # one byte per read


def test_what_is_not_a_json_object_is_skipped() -> None:
    got = list(objects(['{"a": 1}', "not json", "", "[1, 2]", "7", ' {"b": 2} ', '{"c": 3} x', '{"d":']))
    assert got == [{"a": 1}, {"b": 2}]


def test_an_event_the_body_ends_inside_is_dropped() -> None:
    splitter = EventSplitter()
    assert splitter.feed(b'data: {"a": 1}\n\ndata: {"b"') == ['{"a": 1}']
    assert splitter.feed(b": 2}\n") == []  # a line, but no blank line after it


def test_a_last_cr_ends_the_last_event_when_the_body_ends() -> None:
    splitter = EventSplitter()
    assert splitter.feed(b'data: {"a": 1}\r\r\ndata: {"b": 2}\r\r') == ['{"a": 1}']
    assert splitter.feed(b"", final=True) == ['{"b": 2}']


def test_an_event_past_the_limit_fails_the_stream() -> None:
    splitter = EventSplitter(limit=100)
    assert splitter.feed(b"data: " + b"x" * 90) == []
    with pytest.raises(EventStreamError, match="100 character limit"):
        splitter.feed(b"x" * 20)


async def test_a_stream_split_at_odd_places_arrives_whole_and_in_order() -> None:
    pieces = [BODY[i : i + 5] for i in range(0, len(BODY), 5)]  # each its own HTTP chunk
    with FakeOpenAI() as fake:
        fake.script(Step(kind="sse", events=pieces, done=False, gap=0.001, label="split"))
        reply = RecordingReply()
        async with Http() as http:
            await OpenAIChatWire(http, idle=5.0).stream(wire_request(fake.base_url), reply)
    assert reply.answer().text == "Héllo wörld ✓"
    assert reply.texts == ["Hé", "llo ", "wörld", " ✓"]


async def test_many_deltas_in_one_read_arrive_whole_and_in_order() -> None:
    words = [f"{i} " for i in range(5000)]
    events = [f"data: {data(w)}\n\n".encode() for w in words]
    events += [f"data: {data('', 'stop')}\n\n".encode(), b"data: [DONE]\n\n"]
    with FakeOpenAI() as fake:
        fake.script(Step(kind="sse", events=events, done=False, label="5000 deltas"))
        reply = RecordingReply()
        async with Http() as http:
            await OpenAIChatWire(http, idle=5.0).stream(wire_request(fake.base_url), reply)
    assert reply.texts == words
    assert reply.answer().text == "".join(words)
