"""Recorded provider streams (tests/recordings, README there says which are recorded from
the live services and which are written by hand) replayed twice from a loopback server:
once into uji's wire, once into the official SDK's own client and stream reader (openai's
`ChatCompletionStreamState`, anthropic's `MessageStream`, google-genai's streamed
responses, mistralai's stream events). Both must make the same of the same bytes: text,
reasoning, tool calls, usage and signatures; where the SDK raises, uji fails.

Usage in uji's terms from the SDKs' typed fields (reference internals §6): openai
input = prompt − cached; anthropic as it is; gemini input = prompt − cached and output =
candidates + thoughts.
"""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import sdks
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import FakeServer, RecordingReply, Step
from tests.fakes.gemini_server import FakeGemini
from tests.fakes.openai_server import FakeOpenAI
from uji.wires.anthropic import AnthropicWire
from uji.wires.base import Answer, Failure, WireRequest
from uji.wires.gemini import GeminiWire
from uji.wires.http import Http
from uji.wires.openai_chat import OpenAIChatWire

pytestmark = sdks.ON_ONE_WORKER

RECORDINGS = Path(__file__).parent / "recordings"
KEY = "sk-replay-key-0001"
LIMIT_STOPS = ("length", "max_tokens", "MAX_TOKENS")


@dataclass(frozen=True)
class Case:
    sdk: str  # openai | mistral | anthropic | gemini
    file: str
    model: str
    fails: bool = False  # uji ends the call with a Failure (the SDK raises or has nothing to show)

    @property
    def id(self) -> str:
        return self.file.removesuffix(".sse")


CASES = [
    Case("openai", "openai-chat/openai_text.sse", "gpt-4o"),
    Case("openai", "openai-chat/openai_tool_call.sse", "gpt-4o"),
    Case("openai", "openai-chat/openai_two_tool_calls.sse", "gpt-4o"),
    Case("openai", "openai-chat/openai_refusal.sse", "gpt-4o"),
    Case("openai", "openai-chat/openai_length.sse", "gpt-4o"),
    Case("openai", "openai-chat/deepseek_reasoning.sse", "deepseek-reasoner"),
    Case("openai", "openai-chat/deepseek_tool_call.sse", "deepseek-reasoner"),
    Case("openai", "openai-chat/openrouter_error_midstream.sse", "openai/gpt-5", fails=True),
    Case("mistral", "openai-chat/mistral_text.sse", "mistral-small-latest"),
    Case("mistral", "openai-chat/mistral_reasoning.sse", "magistral-medium-2507"),
    Case("mistral", "openai-chat/mistral_tool_call.sse", "mistral-small-latest"),
    Case("anthropic", "anthropic/basic_response.sse", "claude-3-opus-latest"),
    Case("anthropic", "anthropic/tool_use_response.sse", "claude-sonnet-4-20250514"),
    Case("anthropic", "anthropic/thinking_two_tool_uses.sse", "claude-sonnet-4-5"),
    Case("anthropic", "anthropic/thinking_then_refusal.sse", "claude-opus-4-7"),
    Case("anthropic", "anthropic/refusal_response.sse", "claude-opus-4-7", fails=True),
    Case(
        "anthropic",
        "anthropic/incomplete_partial_json_response.sse",
        "claude-3-7-sonnet-20250219",
        fails=True,
    ),
    Case("anthropic", "anthropic/overloaded_midstream.sse", "claude-sonnet-4-5", fails=True),
    Case("gemini", "gemini/google_text.sse", "gemini-3-pro-preview"),
    Case("gemini", "gemini/google_reasoning.sse", "gemini-3-pro-preview"),
    Case("gemini", "gemini/google_tool_call.sse", "gemini-3-pro-preview"),
    Case("gemini", "gemini/thoughts_and_calls.sse", "gemini-2.5-flash"),
    Case("gemini", "gemini/max_tokens.sse", "gemini-2.5-flash"),
    Case("gemini", "gemini/safety.sse", "gemini-2.5-flash", fails=True),
    Case("gemini", "gemini/error_midstream.sse", "gemini-2.5-flash", fails=True),
]
SERVERS: dict[str, type[FakeServer]] = {
    "openai": FakeOpenAI,
    "mistral": FakeOpenAI,
    "anthropic": FakeAnthropic,
    "gemini": FakeGemini,
}


@dataclass
class Seen:
    """What one reader made of a stream."""

    text: str = ""
    reasoning: str = ""
    calls: list[tuple[str, str, Any]] = field(default_factory=list)  # id, name, arguments
    usage: dict[str, int] | None = None
    signatures: list[str] = field(default_factory=list)
    stop: str | None = None
    error: str | None = None  # the SDK raised
    limited: bool = False

    def compared(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("text", "reasoning", "calls", "usage", "signatures")}


def events_of(data: bytes) -> list[bytes]:
    """The recording as its SSE events (each with its blank line), sent one by one."""
    sep = b"\r\n\r\n" if b"\r\n\r\n" in data else b"\n\n"
    return [e + sep for e in data.split(sep) if e.strip()]


def step_of(case: Case) -> Step:
    return Step(kind="sse", events=events_of((RECORDINGS / case.file).read_bytes()), done=False, usage=None)


def test_every_recording_is_replayed() -> None:
    # responses/ belongs to the responses wire's own replay test.
    on_disk = {
        str(p.relative_to(RECORDINGS))
        for d in ("openai-chat", "anthropic", "gemini")
        for p in (RECORDINGS / d).glob("*.sse")
    }
    assert on_disk == {c.file for c in CASES}
    assert {c.sdk for c in CASES} == set(SERVERS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_uji_reads_a_recording_as_the_sdk_does(case: Case) -> None:
    with SERVERS[case.sdk](side_calls=False) as fake:
        fake.script(step_of(case), step_of(case))
        ours = await read_with_uji(case, fake)
        theirs = await asyncio.to_thread(READERS[case.sdk], case, fake)
        assert len(fake.requests) == 2  # both readers were served the recording
    if case.fails:
        assert ours.error is not None, f"uji kept an answer the SDK reads as {theirs}"
        if theirs.error is None:  # a stop with nothing to keep: its usage still counts
            assert ours.usage == theirs.usage
        return
    assert ours.error is None, ours.error
    assert theirs.error is None, theirs.error
    assert ours.compared() == theirs.compared()
    assert ours.limited == (theirs.stop in LIMIT_STOPS)
    assert ours.text or ours.calls  # a recording with something to compare


# --------------------------------------------------------------------------- uji


async def read_with_uji(case: Case, fake: Any) -> Seen:
    make = {"anthropic": AnthropicWire, "gemini": GeminiWire}.get(case.sdk, OpenAIChatWire)
    request = WireRequest(
        model=case.model,
        system="You are terse.",
        messages=[{"type": "user", "text": "hi"}],
        tools=[],
        provider={"id": "replay", "base_url": fake.base_url, "compat": {}},
        auth={"key": KEY, "oauth": None},
    )
    reply = RecordingReply()
    async with Http() as http:
        await make(http).stream(request, reply)
    [end] = reply.ends
    if isinstance(end, Failure):
        usage = end.usage.as_dict() if end.usage is not None else None
        return Seen(usage=usage, error=end.message)
    assert isinstance(end, Answer)
    assert "".join(reply.texts) == end.text and "".join(reply.thoughts) == end.reasoning  # streamed as kept
    signatures = [c.signature for c in end.tool_calls if c.signature]
    replay = end.replay if isinstance(end.replay, dict) else {}
    signatures += [b["signature"] for b in replay.get("blocks", []) if b.get("signature")]
    signatures += [replay["signature"]] if replay.get("signature") else []
    return Seen(
        text=end.text,
        reasoning=end.reasoning,
        calls=[(c.id, c.name, json.loads(c.arguments or "{}")) for c in end.tool_calls],
        usage=end.usage.as_dict(),
        signatures=sorted(signatures),
        limited=end.limited,
    )


# --------------------------------------------------------------------------- the SDKs


def _root(fake: Any) -> str:
    return f"http://127.0.0.1:{fake.port}"


def _usage(input: int, output: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, int]:
    return {"input": input, "output": output, "cache_read": cache_read, "cache_write": cache_write}


def read_with_openai(case: Case, fake: Any) -> Seen:
    import openai as openai_sdk  # each SDK when a test uses it: see tests/sdks.py
    from openai.lib.streaming.chat import ChatCompletionStreamState

    client = openai_sdk.OpenAI(base_url=fake.base_url, api_key=KEY, max_retries=0)
    state = ChatCompletionStreamState()
    try:
        stream = client.chat.completions.create(
            model=case.model,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            state.handle_chunk(chunk)
    except openai_sdk.APIError as e:
        return Seen(error=f"{type(e).__name__}: {e}")
    finally:
        client.close()
    snapshot = state.current_completion_snapshot
    choice = snapshot.choices[0]
    message = choice.message
    extra = message.model_extra or {}
    reasoning = extra.get("reasoning_content") or extra.get("reasoning") or ""
    u = snapshot.usage
    assert u is not None
    cached = (u.prompt_tokens_details.cached_tokens or 0) if u.prompt_tokens_details else 0
    return Seen(
        # A refusal is what the model said: uji shows it as the answer.
        text=(message.content or "") + (message.refusal or ""),
        reasoning=reasoning,
        calls=[(t.id, t.function.name, json.loads(t.function.arguments)) for t in message.tool_calls or []],
        usage=_usage(u.prompt_tokens - cached, u.completion_tokens, cached),
        stop=choice.finish_reason,
    )


def read_with_mistral(case: Case, fake: Any) -> Seen:
    from mistralai.client import Mistral
    from mistralai.client.models import TextChunk, ThinkChunk

    client = Mistral(api_key=KEY, server_url=_root(fake))
    seen = Seen()
    calls: dict[int, list[Any]] = {}
    for event in client.chat.stream(model=case.model, messages=[{"role": "user", "content": "hi"}]):
        chunk = event.data
        if chunk.usage is not None:
            seen.usage = _usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        for choice in chunk.choices:
            delta = choice.delta
            content = delta.content
            if isinstance(content, str):
                seen.text += content
            elif isinstance(content, list):
                for part in content:
                    if isinstance(part, TextChunk):
                        seen.text += part.text
                    elif isinstance(part, ThinkChunk):
                        seen.reasoning += "".join(t.text for t in part.thinking if isinstance(t, TextChunk))
            for pos, call in enumerate(delta.tool_calls or []):
                index = call.index if isinstance(call.index, int) else pos
                got = calls.setdefault(index, [call.id, call.function.name, ""])
                args = call.function.arguments
                got[2] += args if isinstance(args, str) else json.dumps(args)
            if isinstance(choice.finish_reason, str):
                seen.stop = choice.finish_reason
    seen.calls = [(i, n, json.loads(a or "{}")) for _, (i, n, a) in sorted(calls.items())]
    return seen


def read_with_anthropic(case: Case, fake: Any) -> Seen:
    import anthropic as anthropic_sdk

    client = anthropic_sdk.Anthropic(base_url=_root(fake), api_key=KEY, max_retries=0)
    try:
        with client.messages.stream(
            model=case.model, max_tokens=1024, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            message = stream.get_final_message()
    except anthropic_sdk.APIError as e:
        return Seen(error=f"{type(e).__name__}: {e}")
    finally:
        client.close()
    seen = Seen(stop=message.stop_reason)
    for block in message.content:
        if block.type == "text":
            seen.text += block.text
        elif block.type == "thinking":
            seen.reasoning += block.thinking
            if block.signature:
                seen.signatures.append(block.signature)
        elif block.type == "tool_use":
            seen.calls.append((block.id, block.name, block.input))
    u = message.usage
    seen.usage = _usage(
        u.input_tokens, u.output_tokens, u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0
    )
    seen.signatures.sort()
    return seen


def read_with_gemini(case: Case, fake: Any) -> Seen:
    from google import genai
    from google.genai import errors as genai_errors

    client = genai.Client(
        api_key=KEY, http_options=genai.types.HttpOptions(base_url=_root(fake), api_version="v1beta")
    )
    seen = Seen()
    meta = None
    try:
        for response in client.models.generate_content_stream(model=case.model, contents="hi"):
            meta = response.usage_metadata or meta
            for candidate in response.candidates or []:
                if candidate.finish_reason is not None:
                    seen.stop = candidate.finish_reason.value
                for part in (candidate.content.parts if candidate.content else None) or []:
                    if part.thought_signature:
                        seen.signatures.append(base64.b64encode(part.thought_signature).decode())
                    if part.function_call is not None:
                        call = part.function_call
                        seen.calls.append((call.id or "", call.name or "", call.args or {}))
                    elif part.text and part.thought:
                        seen.reasoning += part.text
                    elif part.text:
                        seen.text += part.text
    except genai_errors.APIError as e:
        return Seen(error=f"{type(e).__name__}: {e}")
    if meta is not None:
        cached = meta.cached_content_token_count or 0
        seen.usage = _usage(
            (meta.prompt_token_count or 0) - cached,
            (meta.candidates_token_count or 0) + (meta.thoughts_token_count or 0),
            cached,
        )
    seen.signatures.sort()
    return seen


READERS = {
    "openai": read_with_openai,
    "mistral": read_with_mistral,
    "anthropic": read_with_anthropic,
    "gemini": read_with_gemini,
}
