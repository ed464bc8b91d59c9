"""The responses wire: golden requests, every body checked against the openai SDK's own
request type, and streams over real loopback HTTP against the fake Responses API."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import golden, sdks
from tests.conftest import Home
from tests.fakes.base import RecordingReply, wire_request
from tests.fakes.responses_server import (
    FakeResponses,
    call,
    event,
    failed,
    incomplete,
    make_usage,
    raw_lines,
    refusal,
    status,
    text,
    tool_call,
    tool_calls,
)
from tests.sdk_check import check_typed
from tests.wire_fixtures import wire_fixtures
from uji.providers.catalog import Catalog, CatalogError
from uji.record import replace
from uji.wires.base import Failure, WireRequest
from uji.wires.responses import ResponsesWire, build_body, build_headers, build_input, responses_url

MODEL = "gpt-5"
GOLDEN_URL = "https://api.openai.com/v1"
XAI_URL = "https://api.x.ai/v1"
KEY = "sk-resp-test-7731"


# --------------------------------------------------------------------------- fixtures


server, fake, wire = wire_fixtures(FakeResponses, ResponsesWire)


def _request(base_url: str, **kw: Any) -> WireRequest:
    provider = {"id": "openai", "base_url": base_url}
    return wire_request(
        base_url, **({"model": MODEL, "auth": {"key": KEY}, "provider": provider, "reasoning": True} | kw)
    )


async def run(wire: ResponsesWire, fake: FakeResponses, *steps: Any, **kw: Any) -> RecordingReply:
    fake.script(*steps)
    reply = RecordingReply()
    await wire.stream(_request(fake.base_url, **kw), reply)
    return reply


def render(request: WireRequest) -> dict[str, Any]:
    return {
        "url": responses_url(request.provider["base_url"]),
        "headers": build_headers(request),
        "body": build_body(request),
    }


def sdk_check(body: dict[str, Any]) -> None:
    errors = check_typed(body, sdks.ResponseCreateParamsStreaming)
    assert not errors, "\n".join(errors)


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize("conversation", list(golden.conversations(MODEL)))
def test_golden_requests(conversation: str) -> None:
    messages = golden.conversations(MODEL)[conversation]
    golden.check(f"responses/{conversation}", golden.render_all(MODEL, GOLDEN_URL, messages, render))


# --------------------------------------------------------------------------- the SDK's request type


def _variants() -> Iterator[tuple[str, WireRequest]]:
    """Every golden request, and the shapes the golden grid does not reach."""
    for name, messages in golden.conversations(MODEL).items():
        for effort in (*golden.EFFORTS, None, "minimal", "medium", "xhigh", "max"):
            for cache in golden.CACHES:
                request = golden.request(MODEL, GOLDEN_URL, messages, effort or "high", cache)
                yield f"{name}/{effort}/{cache}", replace(request, effort=effort)
    images = golden.conversations(MODEL)["tool_images"]
    base = golden.request(MODEL, GOLDEN_URL, images, "high", "short")
    yield "xai tool images", golden.request(MODEL, XAI_URL, images, "high", "short")
    yield "text-only model", replace(base, images=False)
    yield "not a reasoning model", replace(base, reasoning=False, effort=None)
    yield "no system, no tools", replace(base, system="", tools=[])
    yield "empty history", replace(base, messages=[])


@pytest.mark.parametrize(
    ("name", "request_"), list(_variants()), ids=lambda v: v if isinstance(v, str) else ""
)
@sdks.ON_ONE_WORKER
def test_every_body_is_a_valid_sdk_request(name: str, request_: WireRequest) -> None:
    sdk_check(build_body(request_))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("reasoning", {"effort": "high", "summary": "auto", "budget": 3}),  # a nested unknown key
        ("include", ["reasoning.encrypted"]),
        ("tools", [{"type": "function", "name": "x", "parameters": {}, "strict": False, "input_schema": {}}]),
        ("input", [{"type": "function_call_output", "call_id": "c", "output": "x", "tool_name": "t"}]),
        ("stream_options", {"include_usage": True}),  # a Chat Completions field
    ],
)
@sdks.ON_ONE_WORKER
def test_the_sdk_check_rejects_what_the_api_would(field: str, value: Any) -> None:
    """The check is strict where it matters: the bodies above pass because they fit."""
    body = build_body(_request(GOLDEN_URL, effort="high"))
    sdk_check(body)
    assert check_typed({**body, field: value}, sdks.ResponseCreateParamsStreaming)


# --------------------------------------------------------------------------- request shape


def test_the_request_body() -> None:
    body = build_body(_request(GOLDEN_URL, effort="off", max_output=64, cache="long"))
    assert body["stream"] is True and body["store"] is False
    assert body["instructions"] == "You are a test."
    assert body["reasoning"] == {"effort": "none", "summary": "auto"}  # uji's off is the API's none
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["max_output_tokens"] == 1024  # room to reason before a 64-token title
    assert build_body(_request(GOLDEN_URL, reasoning=False, max_output=4))["max_output_tokens"] == 16
    assert body["prompt_cache_key"] == "sess-1"
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file.",
            "parameters": golden.TOOLS[0]["parameters"],
            "strict": False,
        }
    ]
    assert "prompt_cache_key" not in build_body(_request(GOLDEN_URL, cache="off"))


@pytest.mark.parametrize(
    ("effort", "reasoning", "expected"),
    [
        (None, True, {"summary": "auto"}),  # the model's default level, with its summary
        ("max", True, {"effort": "max", "summary": "auto"}),
        ("minimal", True, {"effort": "minimal", "summary": "auto"}),
        ("off", False, None),  # a model of unknown kind: off asks for nothing
        (None, False, None),
        ("high", False, {"effort": "high", "summary": "auto"}),  # an unlisted model, a real level
    ],
)
def test_effort(effort: str | None, reasoning: bool, expected: dict[str, str] | None) -> None:
    body = build_body(_request(GOLDEN_URL, effort=effort, reasoning=reasoning))
    assert body.get("reasoning") == expected
    assert ("include" in body) == (expected is not None)


def test_reasoning_items_go_back_only_to_the_model_that_wrote_them() -> None:
    replay: dict[str, Any] = {
        "wire": "responses",
        "model": MODEL,
        "items": [
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "s"}],
                "encrypted_content": "e1",
            },
            {"type": "reasoning", "id": "rs_2", "summary": []},  # no encrypted content: useless
        ],
    }
    messages: list[dict[str, Any]] = [
        {"type": "user", "text": "q"},
        {
            "type": "assistant",
            "text": "a",
            "replay": replay,
            "tool_calls": [{"id": "c1", "name": "f", "arguments": "{}"}],
        },
        {"type": "tool", "tool_call_id": "c1", "name": "f", "content": "r"},
    ]
    items = build_input(messages, MODEL)
    assert items[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "s"}],
        "encrypted_content": "e1",
    }
    assert [i["type"] for i in items] == [
        "message",
        "reasoning",
        "message",
        "function_call",
        "function_call_output",
    ]
    assert [i["type"] for i in build_input(messages, "gpt-5.1")] == [
        "message",
        "message",
        "function_call",
        "function_call_output",
    ]
    anthropic = dict(replay, wire="anthropic")
    assert "reasoning" not in [i["type"] for i in build_input([{**messages[1], "replay": anthropic}], MODEL)]


def test_reasoning_alone_is_not_sent_back() -> None:
    """An answer the output limit cut off inside its reasoning is saved with the
    reasoning only; the API refuses a reasoning item with nothing after it."""
    replay = {
        "wire": "responses",
        "model": MODEL,
        "items": [{"type": "reasoning", "id": "rs_1", "encrypted_content": "e"}],
    }
    messages = [
        {"type": "user", "text": "q"},
        {"type": "assistant", "text": "", "reasoning": "thinking…", "replay": replay},
        {"type": "user", "text": "go on"},
    ]
    assert [i.get("role") for i in build_input(messages, MODEL)] == ["user", "user"]


def test_a_message_phase_goes_back_with_it() -> None:
    replay = {"wire": "responses", "model": MODEL, "items": [], "phase": "final_answer"}
    message = {"type": "assistant", "text": "done", "replay": replay}
    assert build_input([message], MODEL) == [
        {"type": "message", "role": "assistant", "content": "done", "phase": "final_answer"}
    ]
    assert "phase" not in build_input([message], "gpt-5.2")[0]
    assert "phase" not in build_input([{**message, "replay": {**replay, "phase": "bogus"}}], MODEL)[0]


def test_tool_images_go_inside_the_output_except_on_xai() -> None:
    messages = golden.conversations(MODEL)["tool_images"]
    [output] = [i for i in build_input(messages, MODEL) if i["type"] == "function_call_output"]
    assert output["output"] == [
        {"type": "input_text", "text": "1 screenshot"},
        {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQSkZJRg==", "detail": "auto"},
    ]
    xai = build_input(messages, MODEL, images_in_outputs=False)
    assert xai[-2] == {"type": "function_call_output", "call_id": "call_s", "output": "1 screenshot"}
    assert xai[-1]["role"] == "user"
    assert xai[-1]["content"][1]["image_url"].startswith("data:image/jpeg;base64,")
    assert build_body(golden.request(MODEL, XAI_URL, messages, "high", "short"))["input"] == xai


def test_a_text_only_model_gets_notes_instead_of_images() -> None:
    messages = golden.conversations(MODEL)["tool_images"]
    items = build_input(messages, MODEL, images=False)
    assert "input_image" not in json.dumps(items)
    assert items[0]["content"][0]["text"].endswith("[1 image(s) left out: this model does not take images]")


def test_catalog_routes_openai_reasoning_models_to_responses() -> None:
    catalog = Catalog()
    openai = catalog.get("openai")
    assert openai is not None
    wires = {m: openai.wire_for(m) for m in ("gpt-5", "gpt-5.2", "gpt-5.1-codex", "o3", "o4-mini", "gpt-4.1")}
    assert wires == {
        "gpt-5": "responses",
        "gpt-5.2": "responses",
        "gpt-5.1-codex": "responses",  # not listed: the id says it
        "o3": "responses",
        "o4-mini": "responses",
        "gpt-4.1": "openai-chat",
    }
    # A provider whose wire the user changed keeps it; a model can name its own.
    catalog.add({"id": "openai", "wire": "my-wire"})
    assert openai.wire_for("gpt-5") == "my-wire"
    catalog.add({"id": "xai", "models": [{"id": "grok-4", "wire": "responses"}, "grok-3"]})
    xai = catalog.get("xai")
    assert xai is not None
    assert (xai.wire_for("grok-4"), xai.wire_for("grok-3")) == ("responses", "openai-chat")
    with pytest.raises(CatalogError, match="model wire must be a wire name"):
        catalog.add({"id": "xai", "models": [{"id": "grok-4", "wire": 3}]})


# --------------------------------------------------------------------------- streams


async def test_text_reasoning_and_usage(wire: ResponsesWire, fake: FakeResponses) -> None:
    usage = make_usage(input=1200, output=80, cached=1000, reasoning=50)
    reply = await run(
        wire, fake, text("Hello there.", summary=["First.", "Second."], encrypted="enc-9", usage=usage)
    )
    answer = reply.answer()
    assert answer.text == "Hello there." == "".join(reply.texts)
    assert answer.reasoning == "First.\n\nSecond." == "".join(reply.thoughts)
    assert answer.usage.as_dict() == {"input": 200, "output": 80, "cache_read": 1000, "cache_write": 0}
    assert answer.replay == {
        "wire": "responses",
        "model": MODEL,
        "items": [
            {
                "type": "reasoning",
                "id": "rs_fake_0",
                "summary": [
                    {"type": "summary_text", "text": "First."},
                    {"type": "summary_text", "text": "Second."},
                ],
                "encrypted_content": "enc-9",  # the finished item's, not the draft `added` showed
            }
        ],
    }


async def test_the_phase_of_the_message_is_kept(wire: ResponsesWire, fake: FakeResponses) -> None:
    reply = await run(wire, fake, text("Done.", phase="final_answer"))
    assert reply.answer().replay == {
        "wire": "responses",
        "model": MODEL,
        "items": [],
        "phase": "final_answer",
    }
    sdk_check(
        {
            **build_body(_request(GOLDEN_URL)),
            "input": build_input(
                [{"type": "assistant", "text": "Done.", "replay": reply.answer().replay}], MODEL
            ),
        }
    )


SUMMARY_REFUSED = {
    "error": {
        "message": "Your organization must be verified to generate reasoning summaries. Please go to: "
        "https://platform.openai.com/settings/organization/general and click on Verify Organization.",
        "type": "invalid_request_error",
        "param": "reasoning.summary",
        "code": "unsupported_value",
    }
}


async def test_an_organisation_refused_summaries_is_asked_again_without(
    wire: ResponsesWire, fake: FakeResponses
) -> None:
    reply = await run(wire, fake, status(400, SUMMARY_REFUSED), text("ok", encrypted="enc-1"), effort="high")
    assert reply.answer().text == "ok"
    assert reply.answer().replay is not None  # the reasoning still carries across the loop
    later = await run(wire, fake, text("again"), effort="high")
    assert later.answer().text == "again"
    sent = [r.body["reasoning"] for r in fake.requests]
    assert sent == [{"effort": "high", "summary": "auto"}, {"effort": "high"}, {"effort": "high"}]
    assert all(r.body["include"] == ["reasoning.encrypted_content"] for r in fake.requests)
    # No effort and no summary: no `reasoning` at all, the encrypted content still asked for.
    await run(wire, fake, text("plain"))
    assert "reasoning" not in fake.requests[-1].body and fake.requests[-1].body["include"]
    # Another model still asks; a different 400 is a plain failure, asked once.
    other = await run(wire, fake, status(400, {"error": {"message": "bad tool schema"}}), model="gpt-5.2")
    assert other.failure().status == 400
    assert fake.requests[-1].body["reasoning"] == {"summary": "auto"}
    assert len(fake.requests) == 5


async def test_tool_calls_split_across_deltas(wire: ResponsesWire, fake: FakeResponses) -> None:
    step = tool_calls(
        call("read_file", {"path": "a.txt"}, id="call_a"),
        call("read_file", '{"path": "b.txt"}', id="call_b"),
        text="Reading both.",
        piece=3,
    )
    reply = await run(wire, fake, step)
    answer = reply.answer()
    assert answer.text == "Reading both."
    assert [c.as_dict() for c in answer.tool_calls] == [
        {"id": "call_a", "name": "read_file", "arguments": '{"path": "a.txt"}'},
        {"id": "call_b", "name": "read_file", "arguments": '{"path": "b.txt"}'},
    ]
    assert reply.touches > 0
    assert answer.replay is None


async def test_cut_off_arguments_fail_when_the_limit_cut_them(
    wire: ResponsesWire, fake: FakeResponses
) -> None:
    reply = await run(wire, fake, tool_call("read_file", '{"path": "a.t'))
    assert reply.answer().tool_calls[0].arguments == '{"path": "a.t'  # as sent: the loop reports it


async def test_a_refusal_is_the_answer(wire: ResponsesWire, fake: FakeResponses) -> None:
    reply = await run(wire, fake, refusal("I can't help with that."))
    assert reply.answer().text == "I can't help with that." == "".join(reply.texts)
    assert reply.answer().usage.input == 12


async def test_a_message_without_deltas_still_counts(wire: ResponsesWire, fake: FakeResponses) -> None:
    done = {"id": "m1", "type": "message", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "whole", "annotations": []}]}  # fmt: skip
    lines = [
        event({"type": "response.output_item.done", "output_index": 0, "item": done}),
        "",
        event({"type": "response.completed", "response": {"status": "completed", "usage": None}}),
        "",
    ]
    reply = await run(wire, fake, raw_lines(lines))
    assert reply.answer().text == "whole"


async def test_the_output_limit(wire: ResponsesWire, fake: FakeResponses) -> None:
    reply = await run(wire, fake, incomplete("Half an ans", usage=make_usage(30, 16)))
    answer = reply.answer()  # kept, with its usage; the loop adds the notice
    assert (answer.text, answer.limited, answer.usage.output) == ("Half an ans", True, 16)
    filtered = await run(wire, fake, incomplete("Bad", reason="content_filter"))
    assert filtered.failure().message == "the response was stopped by the content filter"
    assert filtered.failure().usage is not None and filtered.failure().usage.input == 12


@pytest.mark.parametrize(
    ("code", "kind", "status_", "message"),
    [
        ("rate_limit_exceeded", "http", 429, "http: 429: rate_limit_exceeded: Slow down"),
        ("server_error", "http", 500, "http: 500: server_error: Slow down"),
        ("insufficient_quota", "provider", None, "stream error: insufficient_quota: Slow down"),
    ],
)
async def test_errors_in_the_stream(
    wire: ResponsesWire, fake: FakeResponses, code: str, kind: str, status_: int | None, message: str
) -> None:
    reply = await run(wire, fake, failed(code, "Slow down", text="partial"))
    failure = reply.failure()
    assert (failure.kind, failure.status, failure.message) == (kind, status_, message)
    assert failure.retryable == (kind == "http")


async def test_a_failed_response_without_an_error_event(wire: ResponsesWire, fake: FakeResponses) -> None:
    response = {"status": "failed", "error": {"code": "server_error", "message": "boom"}}
    lines = [event({"type": "response.failed", "response": response}), ""]
    reply = await run(wire, fake, raw_lines(lines))
    assert reply.failure().message == "http: 500: server_error: boom"
    nested = [
        event({"type": "error", "error": {"type": "invalid_request_error", "message": "bad input"}}),
        "",
    ]
    reply = await run(wire, fake, raw_lines(nested))
    assert reply.failure().message == "stream error: invalid_request_error: bad input"


async def test_keys_are_scrubbed_from_errors(wire: ResponsesWire, fake: FakeResponses) -> None:
    reply = await run(wire, fake, failed("invalid_api_key", f"Incorrect API key provided: {KEY}"))
    assert KEY not in reply.failure().message
    assert "[redacted]" in reply.failure().message
    reply = await run(wire, fake, status(400, {"error": {"message": f"key {KEY} is bad"}}))
    assert (reply.failure().status, KEY in reply.failure().message) == (400, False)


async def test_garbage_and_unknown_events_are_skipped(wire: ResponsesWire, fake: FakeResponses) -> None:
    step = text("fine")
    lines = ["data: {not json", "", event({"type": "response.future_thing", "x": 1}), "", 'data: ["a"]', ""]
    lines += [e.decode() for e in step.events]
    reply = await run(wire, fake, raw_lines(lines))
    assert reply.answer().text == "fine"


def test_stream_errors_never_crash() -> None:
    from uji.wires.responses import stream_error

    assert stream_error("plain").message == "stream error: plain"
    assert stream_error({}).kind == "provider"
    assert isinstance(stream_error({"code": 5, "message": None}), Failure)


# --------------------------------------------------------------------------- end to end


def test_uji_run_with_an_openai_reasoning_model(tmp_path: Path) -> None:
    """`uji run --json --model openai/gpt-5` on the built-in provider (its base_url moved
    to the fake): a tool loop whose encrypted reasoning goes back on every later request
    of the turn and of the next turn, an image from a tool inside its output, the effort,
    and the session as the cache key. Every body it sent fits the SDK's request type."""
    from tests.test_builtin_tools import png

    with FakeResponses() as fake:
        home = Home(tmp_path, None)
        home.init(f'uji.provider.add({{ id = "openai", base_url = "{fake.base_url}" }})', provider=False)
        (home.work / "a.txt").write_text("alpha\n")
        (home.work / "pic.png").write_bytes(png(3, 2))
        fake.script(
            tool_calls(
                call("read_file", {"path": "a.txt"}, id="call_a"),
                call("read_file", {"path": "pic.png"}, id="call_p"),
                summary="I'll read both.",
                encrypted="enc-step-1",
            ),
            text("It says alpha; the picture is red.", summary="Both read.", encrypted="enc-step-2"),
            text("Still alpha.", encrypted="enc-step-3"),
        )
        env = {"OPENAI_API_KEY": KEY}
        first = home.run("read a.txt and pic.png", "--model", "openai/gpt-5", "--effort", "max", env=env)
        assert first.rc == 0, first.stderr
        assert first.done["text"] == "It says alpha; the picture is red."
        session = first.session_id
        second = home.run("again?", "--model", "openai/gpt-5", "--session", session, env=env)
        assert second.rc == 0, second.stderr
        assert second.done["text"] == "Still alpha."
        turns = fake.turn_requests
        assert not fake.exhausted and len(turns) == 3

    assert {(r.method, r.path) for r in turns} == {("POST", "/v1/responses")}
    assert {r.headers["authorization"] for r in turns} == {f"Bearer {KEY}"}
    bodies = [r.body for r in turns]
    for body in [*bodies, *(r.body for r in fake.side_requests)]:
        sdk_check(body)
        assert body["store"] is False and body["model"] == "gpt-5"
        assert body["prompt_cache_key"] == session  # the session id, on every request
    # --effort max, mapped to the most gpt-5 accepts.
    assert [b["reasoning"] for b in bodies[:2]] == [{"effort": "high", "summary": "auto"}] * 2
    assert all(b["include"] == ["reasoning.encrypted_content"] for b in bodies)

    def reasoning_ids(body: dict[str, Any]) -> list[str]:
        return [i["encrypted_content"] for i in body["input"] if i["type"] == "reasoning"]

    assert [reasoning_ids(b) for b in bodies] == [[], ["enc-step-1"], ["enc-step-1", "enc-step-2"]]
    step2 = bodies[1]["input"]
    assert [i["type"] for i in step2] == [
        "message",
        "reasoning",
        "function_call",
        "function_call",
        "function_call_output",
        "function_call_output",
    ]
    assert step2[1] == {
        "type": "reasoning",
        "id": "rs_fake_0",
        "summary": [{"type": "summary_text", "text": "I'll read both."}],
        "encrypted_content": "enc-step-1",
    }
    outputs = {i["call_id"]: i["output"] for i in step2 if i["type"] == "function_call_output"}
    assert "alpha" in outputs["call_a"]
    text_part, image_part = outputs["call_p"]
    assert text_part == {"type": "input_text", "text": "pic.png is a 3x2 image/png image, attached here."}
    assert image_part["type"] == "input_image" and image_part["detail"] == "auto"
    assert image_part["image_url"] == "data:image/png;base64," + base64.b64encode(png(3, 2)).decode()
    # The second turn's request holds the whole first turn, reasoning and all, then the new prompt.
    assert bodies[2]["input"][: len(step2)] == step2
    assert bodies[2]["input"][-1] == {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "again?"}],
    }
    saved = [m for m in home.db_messages(session) if m["type"] == "assistant"]
    assert [m["replay"]["items"][0]["encrypted_content"] for m in saved] == [
        "enc-step-1",
        "enc-step-2",
        "enc-step-3",
    ]
    assert saved[0]["reasoning"] == "I'll read both."
    assert KEY not in json.dumps(home.db_messages(session))
    usage = second.done.get("usage") or {}
    assert usage.get("input") == 12 and usage.get("output") == 3


def test_uji_run_with_xai_on_the_responses_wire(tmp_path: Path) -> None:
    """xAI switched to the Responses API from init.lua: its models go through it, a model
    that does not reason gets no `reasoning` and no encrypted reasoning asked for."""
    with FakeResponses() as fake:
        home = Home(tmp_path, None)
        home.init(
            f'uji.provider.add({{ id = "xai", wire = "responses", base_url = "{fake.base_url}" }})',
            provider=False,
        )
        (home.work / "a.txt").write_text("alpha\n")
        fake.script(tool_call("read_file", {"path": "a.txt"}), text("It says alpha."))
        run = home.run("what is in a.txt?", "--model", "xai/grok-4", env={"XAI_API_KEY": KEY})
        assert run.rc == 0, run.stderr
        assert run.done["text"] == "It says alpha."
        turns = fake.turn_requests
    assert [r.path for r in turns] == ["/v1/responses", "/v1/responses"]
    for r in turns:
        sdk_check(r.body)
        assert r.body["model"] == "grok-4"
        assert "reasoning" not in r.body and "include" not in r.body
        assert r.body["max_output_tokens"] >= 16
    last = turns[1].body["input"][-1]
    assert last["type"] == "function_call_output" and "alpha" in last["output"]
