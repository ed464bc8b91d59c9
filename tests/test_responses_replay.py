"""Recorded Responses API streams, fed byte for byte both to uji's `responses` wire and to
the openai SDK's own stream accumulator (`AsyncOpenAI().responses.stream`, pointed at the
same loopback server), and what each keeps compared: text, reasoning summary, encrypted
reasoning items, function calls and usage; for failures, the error message.

The recordings are in tests/recordings/responses/: `live_*` were recorded from the real
API (by vercel/ai's authors; the openai SDK ships no recorded Responses stream), the
others are hand-made in the documented event format. See the README there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx2
import pytest

from tests import sdks
from tests.fakes.base import RecordingReply, Step
from tests.fakes.responses_server import FakeResponses
from uji.wires.base import Answer, Failure, WireRequest
from uji.wires.responses import ResponsesWire

if TYPE_CHECKING:
    import openai

pytestmark = sdks.ON_ONE_WORKER

RECORDINGS = Path(__file__).parent / "recordings" / "responses"
MODEL = "gpt-5"


@pytest.fixture(scope="module")
def server() -> Iterator[FakeResponses]:
    with FakeResponses(side_calls=False) as fake:  # the SDK's request carries no tools
        yield fake


@pytest.fixture
def fake(server: FakeResponses) -> FakeResponses:
    server.reset()
    return server


@pytest.fixture
async def sdk(server: FakeResponses) -> AsyncIterator[openai.AsyncOpenAI]:
    import openai  # when a test uses it: see tests/sdks.py

    async with httpx2.AsyncClient(trust_env=False) as http:
        yield openai.AsyncOpenAI(
            base_url=server.base_url, api_key="sk-replay", max_retries=0, http_client=http
        )


def recording(name: str) -> Step:
    """The file's bytes as one SSE body, exactly as recorded."""
    return Step(kind="sse", events=[(RECORDINGS / name).read_bytes()], done=False, label=name)


async def uji_reads(fake: FakeResponses, name: str) -> RecordingReply:
    fake.script(recording(name))
    request = WireRequest(
        model=MODEL,
        system="You are uji.",
        messages=[{"type": "user", "text": "hi"}],
        tools=[],
        provider={"id": "openai", "base_url": fake.base_url},
        auth={"key": "sk-replay"},
        reasoning=True,
    )
    reply = RecordingReply()
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(None, connect=5.0)) as client:
        await ResponsesWire(client, idle=10.0).stream(request, reply)
    return reply


class SdkView:
    """What the SDK made of a stream: its accumulated snapshots while streaming, and the
    final response (from `response.completed`, or `response.incomplete`)."""

    def __init__(self) -> None:
        self.text_snapshots: dict[tuple[int, int], str] = {}
        self.argument_snapshots: dict[int, str] = {}
        self.final: Any = None
        self.error: openai.APIError | None = None

    @property
    def text(self) -> str:
        return "".join(t for _, t in sorted(self.text_snapshots.items()))

    def items(self, kind: str) -> list[Any]:
        return [item for item in self.final.output if item.type == kind]

    def reasoning(self) -> str:
        return "\n\n".join(s.text for item in self.items("reasoning") for s in item.summary)

    def calls(self) -> list[tuple[str, str, str]]:
        return [(c.call_id, c.name, c.arguments) for c in self.items("function_call")]

    def refusal(self) -> str:
        return "".join(
            part.refusal for m in self.items("message") for part in m.content if part.type == "refusal"
        )

    def usage(self) -> dict[str, int]:
        """The SDK's usage in uji's shape (input = what was not read from the cache)."""
        u = self.final.usage
        cached = u.input_tokens_details.cached_tokens
        return {
            "input": u.input_tokens - cached,
            "output": u.output_tokens,
            "cache_read": cached,
            "cache_write": 0,
        }


async def sdk_reads(sdk: openai.AsyncOpenAI, fake: FakeResponses, name: str) -> SdkView:
    import openai

    fake.script(recording(name))
    view = SdkView()
    try:
        async with sdk.responses.stream(model=MODEL, input="hi") as stream:
            async for event in stream:
                if event.type == "response.output_text.delta":
                    view.text_snapshots[(event.output_index, event.content_index)] = event.snapshot
                elif event.type == "response.function_call_arguments.delta":
                    view.argument_snapshots[event.output_index] = event.snapshot
                elif event.type in ("response.incomplete", "response.failed"):
                    view.final = event.response
            if view.final is None:
                view.final = await stream.get_final_response()
    except openai.APIError as e:
        view.error = e
    return view


def _answer(reply: RecordingReply) -> Answer:
    answer = reply.answer()
    assert isinstance(answer, Answer)
    return answer


# {recording: (has reasoning, number of calls)}; live_* were recorded from the real API.
COMPLETED = {
    "reasoning_tool_calls.sse": (True, 2),
    "reasoning_text.sse": (True, 0),
    "live_reasoning_call.sse": (True, 1),
    "live_text.sse": (False, 0),
}


@pytest.mark.parametrize("name", list(COMPLETED))
async def test_completed_streams_read_the_same(
    sdk: openai.AsyncOpenAI, fake: FakeResponses, name: str
) -> None:
    theirs = await sdk_reads(sdk, fake, name)
    assert theirs.error is None and theirs.final.status == "completed"
    reply = await uji_reads(fake, name)
    ours = _answer(reply)
    assert ours.text == theirs.text == theirs.final.output_text == "".join(reply.texts)
    assert ours.reasoning == theirs.reasoning() == "".join(reply.thoughts)
    reasons, calls = COMPLETED[name]
    assert (bool(ours.reasoning), len(ours.tool_calls)) == (reasons, calls)  # not vacuous
    assert [(c.id, c.name, c.arguments) for c in ours.tool_calls] == theirs.calls()
    assert [c.arguments for c in ours.tool_calls] == [
        theirs.argument_snapshots[i] for i in sorted(theirs.argument_snapshots)
    ]
    assert ours.usage.as_dict() == theirs.usage()
    # The encrypted reasoning kept for the next request is the finished item's, as the SDK has it.
    kept = ours.replay["items"] if ours.replay else []
    assert (len(kept) > 0) == reasons
    assert [(i["id"], i["encrypted_content"], i["summary"]) for i in kept] == [
        (r.id, r.encrypted_content, [s.model_dump() for s in r.summary]) for r in theirs.items("reasoning")
    ]


async def test_tool_calls_recording_has_what_it_should(sdk: openai.AsyncOpenAI, fake: FakeResponses) -> None:
    """The comparison above is not vacuous: the calls, split mid-token, are there."""
    ours = _answer(await uji_reads(fake, "reasoning_tool_calls.sse"))
    assert [(c.name, c.arguments) for c in ours.tool_calls] == [
        ("read_file", '{"path":"a.txt"}'),
        ("read_file", '{"path":"b.txt","limit":200}'),
    ]
    assert ours.usage.as_dict() == {"input": 233, "output": 402, "cache_read": 3584, "cache_write": 0}
    assert ours.reasoning.count("\n\n**Planning**") == 1  # two summary parts, one blank line apart


async def test_a_refusal_reads_the_same(sdk: openai.AsyncOpenAI, fake: FakeResponses) -> None:
    theirs = await sdk_reads(sdk, fake, "refusal.sse")
    ours = _answer(await uji_reads(fake, "refusal.sse"))
    assert ours.text == theirs.refusal() == "I'm sorry, but I can't help with that."
    assert theirs.final.output_text == ""  # the SDK keeps a refusal apart; uji shows it as the answer
    assert ours.usage.as_dict() == theirs.usage()


async def test_a_cut_off_stream(sdk: openai.AsyncOpenAI, fake: FakeResponses) -> None:
    theirs = await sdk_reads(sdk, fake, "incomplete.sse")
    assert theirs.final.incomplete_details.reason == "max_output_tokens"
    reply = await uji_reads(fake, "incomplete.sse")
    assert (
        "".join(reply.texts)
        == theirs.text
        == theirs.final.output_text
        == "Here is the first part of the summ"
    )
    assert "".join(reply.thoughts) == theirs.reasoning()
    ours = _answer(reply)  # kept, marked as cut off
    assert ours.limited and ours.text == theirs.text
    assert ours.reasoning == theirs.reasoning()
    assert ours.usage.as_dict() == theirs.usage()


@pytest.mark.parametrize(
    ("name", "kind", "status"),
    [
        ("error.sse", "provider", None),
        ("failed.sse", "http", 429),
        ("live_error_quota.sse", "provider", None),
    ],
)
async def test_failed_streams(
    sdk: openai.AsyncOpenAI, fake: FakeResponses, name: str, kind: str, status: int | None
) -> None:
    reply = await uji_reads(fake, name)
    failure = reply.failure()
    assert isinstance(failure, Failure)
    assert (failure.kind, failure.status) == (kind, status)
    theirs = await sdk_reads(sdk, fake, name)
    message = theirs.error.message if theirs.error is not None else theirs.final.error.message
    assert message in failure.message
