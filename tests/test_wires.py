"""What every wire shares: the name → factory table; the HTTP client, which is owned and
closed by whoever made it; and one suite of stream behaviour run over every HTTP wire."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import pytest

from tests import golden
from tests.fakes import anthropic_server, gemini_server, openai_server, responses_server
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import FakeServer, RecordingReply, Step, status, wire_request
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.openai_server import FakeOpenAI, text
from tests.fakes.responses_server import FakeResponses
from uji.app import App
from uji.paths import resolve
from uji.wires import anthropic, gemini, openai_chat, responses
from uji.wires.anthropic import AnthropicWire
from uji.wires.base import Answer, WireRequest
from uji.wires.common import SSEWire
from uji.wires.gemini import GeminiWire
from uji.wires.http import Http
from uji.wires.openai_chat import OpenAIChatWire
from uji.wires.registry import BUILTIN, Wires
from uji.wires.responses import ResponsesWire


def request(base_url: str) -> WireRequest:
    return WireRequest(
        model="m",
        system="s",
        messages=[{"type": "user", "text": "hi"}],
        tools=[{"name": "t", "description": "", "parameters": {"type": "object"}}],
        provider={"id": "test", "base_url": base_url},
        auth={"key": "sk-test"},
    )


async def ask(wire: object, base_url: str) -> Answer:
    reply = RecordingReply()
    await wire.stream(request(base_url), reply)  # type: ignore[attr-defined]
    return reply.answer()


# --------------------------------------------------------------------------- the table


def test_every_builtin_wire_is_made_by_its_factory_under_its_name() -> None:
    wires = Wires(Http())
    assert wires.names() == ["anthropic", "gemini", "openai-chat", "responses"] == sorted(BUILTIN)
    for name in BUILTIN:
        wire = wires.get(name)
        assert wire.name == name
        assert wires.get(name) is wire  # made once
        assert wire.http is wires.http  # type: ignore[attr-defined]


def test_an_added_wire_shadows_a_builtin_until_removed() -> None:
    wires = Wires(Http())

    class Mine:
        name = "mine"

        async def stream(self, request: WireRequest, reply: object) -> None: ...

    mine = Mine()
    wires.add("openai-chat", mine)
    wires.add("mine", mine)
    assert wires.get("openai-chat") is mine and "mine" in wires.names()
    assert wires.remove("openai-chat") and wires.remove("mine")
    assert not wires.remove("mine")
    assert isinstance(wires.get("openai-chat"), OpenAIChatWire)
    with pytest.raises(
        LookupError, match=r"no wire named 'mine' \(known: anthropic, gemini, openai-chat, responses\)"
    ):
        wires.get("mine")


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_wire_loads_only_its_own_module(name: str) -> None:
    code = (
        "import sys; from uji.wires.http import Http; from uji.wires.registry import Wires;"
        f"Wires(Http()).get({name!r});"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('uji.wires.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(out.stdout.split())
    wires = {"uji.wires.anthropic", "uji.wires.gemini", "uji.wires.openai_chat", "uji.wires.responses"}
    own = {"uji.wires." + name.replace("-", "_")}
    if name in ("responses", "gemini"):
        own.add("uji.wires.openai_chat")  # they share its headers and hosts, or its error reading
    assert loaded & wires == own


# --------------------------------------------------------------------------- the client's owner


@pytest.fixture
def fake(servers: dict[str, FakeServer]) -> FakeServer:
    """The suite's openai-chat server (below), reset."""
    fake = servers["openai-chat"]
    fake.reset()
    return fake


async def test_the_owner_makes_the_client_on_first_use_and_closes_it(fake: FakeServer) -> None:
    async with Http() as http:
        wire = OpenAIChatWire(http)
        fake.script(text("a"), text("b"))
        assert (await ask(wire, fake.base_url)).text == "a"
        assert (await ask(wire, fake.base_url)).text == "b"
        assert fake.connections == 1  # one pooled connection for both calls
        assert fake.open_connections == 1
    assert fake.wait_for_open_connections(0)  # closed with its owner


async def test_a_client_made_elsewhere_is_left_to_its_maker(fake: FakeServer) -> None:
    async with httpx2.AsyncClient() as client:
        http = Http(client)
        fake.script(text("a"))
        assert (await ask(OpenAIChatWire(http), fake.base_url)).text == "a"
        await http.aclose()
        assert not client.is_closed
        assert fake.open_connections == 1
    assert client.is_closed


async def test_app_close_closes_the_wires_client(fake: FakeServer, tmp_path: Path) -> None:
    app = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path))
    fake.script(text("a"))
    assert (await ask(app.wires.get("openai-chat"), fake.base_url)).text == "a"
    assert fake.open_connections == 1
    await app.close()
    assert fake.wait_for_open_connections(0)


# --------------------------------------------------------------------------- one suite, every wire
#
# What every HTTP wire must do alike, run against each wire's fake server over real
# loopback HTTP. What only one wire does (its request format, thinking and replay, its
# own in-stream errors) stays in tests/test_<wire>_wire.py.

KEY = "sk-suite-key-0451"


@dataclass(frozen=True)
class Case:
    name: str
    wire: type[SSEWire]
    fake: type[FakeServer]
    steps: ModuleType  # the fake's step builders: text, tool_calls, call, drip, drop_after, ...
    model: str
    path: str  # where a request goes, under the fake's host
    headers: Callable[[str], dict[str, str]]  # the headers that carry a key
    build_body: Callable[[WireRequest], dict[str, Any]]
    limited: Callable[[str], Step]  # a text the output limit cut off
    limited_call: Callable[[Any], Step] | None  # a call at the output limit
    unfinished: Callable[[str], Step]  # a text whose stream ends before its finish
    empty: Step  # a reply with nothing in it
    usage: tuple[dict[str, Any], dict[str, int]]  # the fake's usage, and ours
    drips: tuple[dict[str, Any], ...]  # drip() arguments that are no progress
    text_events: int  # events of drop_after()'s default step before its fourth "x"
    finished_events: int | None  # events of text("hi") up to its finish
    touches: int  # at least this many touch() for the two calls of the tool call case
    request: dict[str, Any] = field(default_factory=dict)  # the wire's own request fields

    def __str__(self) -> str:
        return self.name


def _responses_unfinished(text: str) -> Step:
    step = responses_server.text(text)
    return replace(step, events=step.events[:-1])  # no response.completed


CASES = [
    Case(
        "openai-chat",
        OpenAIChatWire,
        FakeOpenAI,
        openai_server,
        "m",
        "/v1/chat/completions",
        lambda key: {"authorization": f"Bearer {key}"},
        openai_chat.build_body,
        lambda text: openai_server.text(text, finish="length"),
        lambda args: openai_server.tool_call("read_file", args, finish="length"),
        lambda text: openai_server.text(text, finish=None),
        openai_server.text("", reasoning="only thoughts"),
        (openai_server.make_usage(50, 9), {"input": 50, "output": 9, "cache_read": 0, "cache_write": 0}),
        ({"event": "comment"}, {"event": "empty"}),
        5,  # the role chunk, then four deltas
        3,  # role chunk, "hi", finish — cut before usage and [DONE]
        4,
    ),
    Case(
        "anthropic",
        AnthropicWire,
        FakeAnthropic,
        anthropic_server,
        "claude-sonnet-4-5",
        "/v1/messages",
        lambda key: {"x-api-key": key, "anthropic-version": "2023-06-01"},
        anthropic.build_body,
        lambda text: anthropic_server.text(text, stop="max_tokens"),
        lambda args: anthropic_server.tool_call("read_file", args, stop="max_tokens"),
        lambda text: anthropic_server.text(text, stop=None, stopped=False),
        anthropic_server.text("", thinking="only thoughts"),
        (
            anthropic_server.make_usage(input=40, output=9, cache_read=1000, cache_write=200),
            {"input": 40, "output": 9, "cache_read": 1000, "cache_write": 200},
        ),
        ({"event": "ping"}, {"event": "comment"}),
        7,  # message_start, ping, block start, then four deltas
        6,  # start, ping, block start, delta, block stop, message_delta — cut before message_stop
        4,
        {"cache": "off"},
    ),
    Case(
        "gemini",
        GeminiWire,
        FakeGemini,
        gemini_server,
        "gemini-2.5-flash",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        lambda key: {"x-goog-api-key": key},
        gemini.build_body,
        lambda text: gemini_server.text(text, finish="MAX_TOKENS"),
        # Gemini sends calls whole, so they cannot be cut off: a call at the limit is usable.
        lambda args: gemini_server.tool_call("read_file", args, finish="MAX_TOKENS"),
        lambda text: gemini_server.text(text, finish=None),
        gemini_server.text("", finish="STOP"),
        (
            gemini_server.make_usage(prompt=1000, candidates=9, cached=800, thoughts=20),
            {"input": 200, "output": 29, "cache_read": 800, "cache_write": 0},
        ),
        ({"event": "comment"}, {"event": "empty"}),
        4,
        1,
        2,
        {"reasoning": True},
    ),
    Case(
        "responses",
        ResponsesWire,
        FakeResponses,
        responses_server,
        "gpt-5",
        "/v1/responses",
        lambda key: {"authorization": f"Bearer {key}"},
        responses.build_body,
        lambda text: responses_server.incomplete(text),
        None,  # the API says nothing of a call the limit cut (the loop reports bad arguments)
        _responses_unfinished,
        responses_server.text(""),
        (
            responses_server.make_usage(input=1200, output=80, cached=1000, reasoning=50),
            {"input": 200, "output": 80, "cache_read": 1000, "cache_write": 0},
        ),
        ({},),  # comments: the API sends no keep-alive events of its own
        8,
        None,
        1,
        {"reasoning": True},
    ),
]


@pytest.fixture(params=CASES, ids=str)
def case(request: pytest.FixtureRequest) -> Case:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, FakeServer]]:
    with contextlib.ExitStack() as stack:
        yield {c.name: stack.enter_context(c.fake()) for c in CASES}


@pytest.fixture
def served(case: Case, servers: dict[str, FakeServer]) -> FakeServer:
    fake = servers[case.name]
    fake.reset()
    return fake


@pytest.fixture
async def wire(case: Case) -> AsyncIterator[SSEWire]:
    async with Http() as http:
        yield case.wire(http, idle=5.0)


def suite_request(case: Case, base_url: str, **kw: Any) -> WireRequest:
    return wire_request(base_url, **({"model": case.model, "auth": {"key": KEY}} | case.request | kw))


async def run(case: Case, wire: SSEWire, fake: FakeServer, *steps: Step, **kw: Any) -> RecordingReply:
    fake.script(*steps)
    reply = RecordingReply()
    await wire.stream(suite_request(case, fake.base_url, **kw), reply)
    return reply


# -- what is sent


async def test_what_goes_over_the_wire_is_the_golden_request(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    messages = golden.conversations(case.model)["tool_images"]
    request = golden.request(case.model, served.base_url, messages, "high", "long")
    served.script(case.steps.text("ok"))
    reply = RecordingReply()
    await wire.stream(request, reply)
    assert reply.answer().text == "ok"
    [sent] = served.requests
    assert (sent.method, sent.path) == ("POST", case.path)
    assert sent.body == case.build_body(request)
    expected = {"content-type": "application/json", "accept": "text/event-stream", **case.headers(golden.KEY)}
    assert {k: sent.headers.get(k) for k in expected} == expected
    # The key goes in its own header only: never in the URL, never in another header.
    assert golden.KEY not in sent.path and "key=" not in sent.path
    assert [k for k, v in sent.headers.items() if golden.KEY in v] == list(case.headers(golden.KEY))[:1]
    if "authorization" not in expected:
        assert "authorization" not in sent.headers


async def test_without_a_key_no_key_header_is_sent(case: Case, wire: SSEWire, served: FakeServer) -> None:
    reply = await run(case, wire, served, case.steps.text("ok"), auth={"key": None})
    assert reply.answer().text == "ok"
    [sent] = served.requests
    key_header = next(iter(case.headers("k")))
    assert key_header not in sent.headers


# -- streams that succeed


async def test_text_streams_in_deltas_with_its_usage(case: Case, wire: SSEWire, served: FakeServer) -> None:
    usage, ours = case.usage
    reply = await run(case, wire, served, case.steps.text("hello world", usage=usage))
    assert reply.texts == ["hell", "o wo", "rld"]
    answer = reply.answer()
    assert (answer.text, answer.reasoning, answer.tool_calls, answer.limited) == (
        "hello world",
        "",
        [],
        False,
    )
    assert answer.usage.as_dict() == ours


async def test_tool_calls_in_order_with_a_missing_id(case: Case, wire: SSEWire, served: FakeServer) -> None:
    steps = case.steps
    step = steps.tool_calls(
        steps.call("read_file", {"path": "a.txt"}, id="call_a"),
        steps.call("read_file", {"path": "b.txt"}, id=None),  # no id: the loop makes one
        text="Reading.",
    )
    reply = await run(case, wire, served, step)
    answer = reply.answer()
    assert answer.text == "Reading."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("", "read_file", {"path": "b.txt"}),
    ]
    assert reply.touches >= case.touches  # argument chunks are progress the loop hears of


async def test_a_slow_stream_that_keeps_progressing(case: Case, served: FakeServer) -> None:
    async with Http() as http:
        wire = case.wire(http, idle=1.0)
        reply = await run(case, wire, served, case.steps.text("abcdefghij", piece=1, gap=0.08))
    assert reply.answer().text == "abcdefghij"  # ~1 s in all, never 1 s without a delta


async def test_fifty_thousand_deltas(case: Case, wire: SSEWire, served: FakeServer) -> None:
    reply = await run(case, wire, served, case.steps.text_deltas(50_000))
    assert len(reply.answer().text) == 50_000 and len(reply.texts) == 50_000  # timed in bench/wires.py


async def test_connections_are_reused_across_calls(case: Case, wire: SSEWire, served: FakeServer) -> None:
    steps = case.steps
    served.script(steps.text("a"), steps.tool_call("read_file", {"path": "a"}), steps.text("c"))
    answers = []
    for _ in range(3):
        reply = RecordingReply()
        await wire.stream(suite_request(case, served.base_url), reply)
        answers.append(reply.answer())
    assert [(a.text, [c.name for c in a.tool_calls]) for a in answers] == [
        ("a", []),
        ("", ["read_file"]),
        ("c", []),
    ]
    assert served.connections == 1


async def test_the_fake_answers_side_calls_without_a_step(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    served.script(case.steps.text("turn answer"))
    replies = []
    for kw in (
        {"tools": [], "system": "Write a title"},
        {"tools": [], "system": "Summarize the work"},
        {},
        {},
    ):
        reply = RecordingReply()
        await wire.stream(suite_request(case, served.base_url, **kw), reply)
        replies.append(reply.answer().text)
    assert replies == ["Title", "SUMMARY OF EARLIER WORK", "turn answer", "done"]
    assert served.exhausted
    assert [r.side for r in served.requests] == [True, True, False, False]
    assert [r.step for r in served.turn_requests] == [0, None]


# -- the output limit, and streams that end badly


async def test_a_text_cut_off_by_the_limit_is_kept(case: Case, wire: SSEWire, served: FakeServer) -> None:
    answer = (await run(case, wire, served, case.limited("partial"))).answer()
    assert (answer.text, answer.limited, answer.usage.output) == ("partial", True, 3)


@pytest.mark.parametrize("case", [c for c in CASES if c.limited_call is not None], ids=str)
async def test_whole_calls_at_the_limit_are_an_answer(case: Case, wire: SSEWire, served: FakeServer) -> None:
    assert case.limited_call is not None
    answer = (await run(case, wire, served, case.limited_call({"path": "a"}))).answer()
    assert answer.tool_calls[0].arguments == '{"path": "a"}'
    assert not answer.limited


@pytest.mark.parametrize("case", [c for c in CASES if c.name in ("openai-chat", "anthropic")], ids=str)
async def test_call_arguments_cut_off_by_the_limit_fail(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    assert case.limited_call is not None
    failure = (await run(case, wire, served, case.limited_call('{"path": "a'))).failure()
    assert failure.kind == "provider" and not failure.retryable
    assert "tool call arguments were cut off; raise the model's max output" in failure.message


async def test_a_stream_that_ends_before_its_finish_is_retryable(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    failure = (await run(case, wire, served, case.unfinished("half"))).failure()
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream ended before the model finished",
    )
    assert failure.retryable


async def test_an_empty_reply_fails(case: Case, wire: SSEWire, served: FakeServer) -> None:
    failure = (await run(case, wire, served, case.empty)).failure()
    assert (failure.kind, failure.message) == ("provider", "empty reply")
    assert not failure.retryable


@pytest.mark.parametrize("case", [c for c in CASES if c.finished_events is not None], ids=str)
async def test_a_drop_after_the_finish_keeps_the_answer(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    assert case.finished_events is not None
    reply = await run(case, wire, served, case.steps.drop_after(case.finished_events, case.steps.text("hi")))
    assert reply.answer().text == "hi"


async def test_a_dropped_connection_is_retryable(case: Case, wire: SSEWire, served: FakeServer) -> None:
    reply = await run(case, wire, served, case.steps.drop_after(case.text_events))
    failure = reply.failure()
    assert (failure.kind, failure.status, failure.retryable) == ("http", None, True)
    assert failure.message.startswith("connection dropped mid-stream")
    assert "".join(reply.texts) == "xxxx"  # what arrived before the drop was streamed


async def test_a_refused_connection_is_retryable(case: Case, wire: SSEWire) -> None:
    reply = RecordingReply()
    await wire.stream(suite_request(case, "http://127.0.0.1:1/v1"), reply)
    failure = reply.failure()
    assert (failure.kind, failure.status, failure.retryable) == ("http", None, True)
    assert failure.message.startswith("could not connect")


async def test_a_provider_without_base_url(case: Case, wire: SSEWire) -> None:
    reply = RecordingReply()
    await wire.stream(suite_request(case, "", provider={"id": "x"}), reply)
    failure = reply.failure()
    assert failure.kind == "provider" and failure.message == f"{case.name}: the provider has no base_url"


# -- stalls and cancels (their timing is measured in bench/wires.py)


@pytest.mark.parametrize(
    ("case", "drip"),
    [(c, d) for c in CASES for d in c.drips],
    ids=lambda v: str(v) if isinstance(v, Case) else v.get("event", "comment"),
)
async def test_a_stream_of_keep_alives_stalls(case: Case, served: FakeServer, drip: dict[str, Any]) -> None:
    async with Http() as http:
        wire = case.wire(http, idle=0.5)
        reply = await run(case, wire, served, case.steps.drip(0.05, **drip))
    failure = reply.failure()
    assert (failure.kind, failure.status, failure.message) == (
        "http",
        None,
        "stream stalled: no data for 0.5s",
    )
    assert failure.retryable
    assert served.wait_for_drops(1)  # the connection was given up


async def test_a_server_that_never_answers_stalls(case: Case, served: FakeServer) -> None:
    async with Http() as http:
        wire = case.wire(http, idle=0.3)
        reply = await run(case, wire, served, case.steps.text("late", delay=2.0))
    assert reply.failure().message == "stream stalled: no data for 0.3s"
    assert served.wait_for_drops(1)


async def test_a_cancel_drops_the_connection(case: Case, wire: SSEWire, served: FakeServer) -> None:
    served.script(case.steps.drip(0.05))
    reply = RecordingReply()
    task = asyncio.create_task(wire.stream(suite_request(case, served.base_url), reply))
    async with asyncio.timeout(5):
        while not served.requests:  # the request is in: the stream is open
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert served.wait_for_drops(1)
    assert served.drops == 1
    assert reply.ends == []  # neither done nor fail: the caller cancelled


# -- HTTP failures


async def test_server_errors_and_rate_limits_are_retryable(
    case: Case, wire: SSEWire, served: FakeServer
) -> None:
    failure = (await run(case, wire, served, status(500, {"error": {"message": "boom"}}))).failure()
    assert (failure.kind, failure.status, failure.retry_after) == ("http", 500, None)
    assert failure.message == 'http: 500: {"error": {"message": "boom"}}'
    assert failure.retryable
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    failure = (await run(case, wire, served, status(529, overloaded))).failure()
    assert (failure.kind, failure.status, failure.retryable) == ("http", 529, True)
    failure = (await run(case, wire, served, status(429, "slow down", {"retry-after": "3"}))).failure()
    assert (failure.kind, failure.status, failure.retry_after, failure.message) == (
        "http",
        429,
        3.0,
        "http: 429: slow down",
    )
    assert failure.retryable


async def test_a_400_is_final_and_clipped(case: Case, wire: SSEWire, served: FakeServer) -> None:
    failure = (await run(case, wire, served, status(400, "x" * 10_000))).failure()
    assert (failure.kind, failure.status, failure.retryable) == ("http", 400, False)
    assert failure.message == "http: 400: " + "x" * 2000


@pytest.mark.parametrize("code", [401, 403])
async def test_a_refused_key(case: Case, wire: SSEWire, served: FakeServer, code: int) -> None:
    failure = (await run(case, wire, served, status(code, "bad key"))).failure()
    assert (failure.kind, failure.status) == ("auth", code)
    assert failure.message == f"authentication rejected ({code}) - check the api key for this provider"
    assert not failure.retryable


async def test_a_2xx_that_is_not_an_event_stream(case: Case, wire: SSEWire, served: FakeServer) -> None:
    failure = (await run(case, wire, served, status(200, {"error": "nope"}))).failure()
    assert failure.kind == "provider" and not failure.retryable
    assert failure.message == 'expected an event stream, got application/json: {"error": "nope"}'


async def test_an_echoed_key_is_scrubbed(case: Case, wire: SSEWire, served: FakeServer) -> None:
    body = {"error": {"message": f"invalid key {KEY} for project", "echo": {"key": KEY}}}
    failure = (await run(case, wire, served, status(400, body))).failure()
    assert KEY not in failure.message
    assert failure.message.count("[redacted]") == 2
