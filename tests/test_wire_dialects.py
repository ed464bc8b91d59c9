"""What the real providers need that the fakes never asked for (issue 14, "What was found"):
DeepSeek's reasoning round trip, Mistral's body without `stream_options` and its list
content, Gemini's function responses in a user turn, the `compat` options from Lua, an
answer cut off at the output limit kept with its usage, a refusal's usage, and `xhigh`."""

from __future__ import annotations

from typing import Any

import pytest

from tests import golden
from tests.conftest import Home
from tests.fakes import anthropic_server, openai_server
from tests.fakes.base import raw_lines
from tests.fakes.openai_server import FakeOpenAI, chunk, event
from tests.test_wires_e2e import APIS, KEY, Api, configure
from uji.wires.anthropic import build_body as anthropic_body
from uji.wires.base import WireRequest
from uji.wires.gemini import build_contents
from uji.wires.openai_chat import COMPAT_OPTIONS, Dialect, build_body, check_compat, dialect_for, stream_error

DEEPSEEK = "https://api.deepseek.com/v1"
MISTRAL = "https://api.mistral.ai/v1"


def chat_request(base_url: str, messages: list[dict[str, Any]], **kw: Any) -> WireRequest:
    return golden.request(kw.pop("model", "m"), base_url, messages, kw.pop("effort", "high"), "short")


# --------------------------------------------------------------------------- DeepSeek


def test_deepseek_sends_every_assistant_message_its_reasoning() -> None:
    """Thinking mode with tools: each assistant message carries `reasoning_content`, the
    stored reasoning or "" (DeepSeek answers 400 "Missing reasoning_content" otherwise)."""
    messages = golden.conversations("deepseek-reasoner")["reasoning_replay"]
    body = build_body(chat_request(DEEPSEEK, messages))
    assistants = [m for m in body["messages"] if m["role"] == "assistant"]
    assert [m["reasoning_content"] for m in assistants] == ["other thoughts", "I should read it."]
    plain = [{"type": "user", "text": "q"}, {"type": "assistant", "text": "a"}, {"type": "user", "text": "r"}]
    assert build_body(chat_request(DEEPSEEK, plain))["messages"][2]["reasoning_content"] == ""


def test_other_dialects_send_no_reasoning_back() -> None:
    messages = golden.conversations("m")["reasoning_replay"]
    for url in (
        "https://api.openai.com/v1",
        MISTRAL,
        "https://openrouter.ai/api/v1",
        "http://localhost:11434/v1",
    ):
        sent = build_body(chat_request(url, messages))["messages"]
        assert [k for m in sent for k in m if "reason" in k] == [], url


def test_reasoning_round_trips_in_a_tool_loop_set_from_lua(home: Home, fake: FakeOpenAI) -> None:
    """`compat = { reasoning_field = ... }` from init.lua: the streamed reasoning is saved on
    the assistant message and sent back with it on the next request of the tool loop."""
    (home.work / "a.txt").write_text("alpha\n")
    fake.script(
        openai_server.tool_call("read_file", {"path": "a.txt"}, reasoning="I need a.txt first."),
        openai_server.text("It says alpha."),
    )
    home.init(
        f"""
        uji.provider.add({{ id = "ds", name = "DS", api = "openai-chat", base_url = "{fake.base_url}",
          models = {{ {{ id = "deepseek-reasoner", reasoning = true, efforts = {{ "high" }} }} }},
          compat = {{ reasoning_field = "reasoning_content", effort = "thinking" }} }})
        uji.model.use({{ provider = "ds", model = "deepseek-reasoner" }})
        """,
        provider=False,
    )
    run = home.run("read a.txt", "--effort", "high", check=True)
    assert run.done["text"] == "It says alpha."
    saved = [m for m in home.db_messages(run.session_id) if m["type"] == "assistant"]
    assert saved[0]["reasoning"] == "I need a.txt first."
    first, second = (r.body for r in fake.turn_requests)
    assert first["thinking"] == {"type": "enabled"} and first["reasoning_effort"] == "high"
    [assistant] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert assistant["reasoning_content"] == "I need a.txt first."
    assert assistant["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path":"a.txt"}'}


def test_an_answer_that_only_thought_is_not_sent_back() -> None:
    """Cut off at the limit while thinking: kept in the session, but Chat Completions
    refuses an assistant message with neither content nor calls."""
    messages = [
        {"type": "user", "text": "q"},
        {"type": "assistant", "text": "", "reasoning": "thinking until the limit"},
        {"type": "user", "text": "go on"},
    ]
    for url in (DEEPSEEK, "https://api.openai.com/v1"):
        sent = build_body(chat_request(url, messages))["messages"]
        assert [m["role"] for m in sent] == ["system", "user", "user"], url


# --------------------------------------------------------------------------- Mistral


def test_mistral_body_has_no_stream_options_and_takes_an_effort() -> None:
    body = build_body(chat_request(MISTRAL, golden.conversations("m")["text"], effort="high"))
    assert "stream_options" not in body
    assert body["reasoning_effort"] == "high" and body["stream"] is True


async def test_list_content_is_read_as_text_and_reasoning(fake: FakeOpenAI) -> None:
    """Magistral streams `delta.content` as typed parts: thinking (text nested in
    `thinking`) and text. Both shapes are read, in one stream."""
    from tests.fakes.base import RecordingReply
    from uji.wires.http import Http
    from uji.wires.openai_chat import OpenAIChatWire

    thinking = [
        {
            "type": "thinking",
            "thinking": [{"type": "text", "text": "Let me "}, {"type": "text", "text": "see."}],
        }
    ]
    lines = [
        event(chunk({"role": "assistant", "content": ""})),
        "",
        event(chunk({"content": thinking})),
        "",
        event(chunk({"content": [{"type": "text", "text": "Hel"}]})),
        "",
        event(chunk({"content": "lo"})),
        "",
        event(
            {**chunk({}, "stop"), "usage": {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}}
        ),
        "",
        "data: [DONE]",
        "",
    ]
    fake.script(raw_lines(lines))
    reply = RecordingReply()
    provider = {"id": "mistral", "base_url": fake.base_url, "compat": {"stream_options": False}}
    request = golden.request(
        "magistral-medium-latest", fake.base_url, [{"type": "user", "text": "hi"}], "high", "off"
    )
    request.provider = provider
    async with Http() as http:
        await OpenAIChatWire(http).stream(request, reply)
    answer = reply.answer()
    assert (answer.text, answer.reasoning) == ("Hello", "Let me see.")
    assert reply.texts == ["Hel", "lo"] and reply.thoughts == ["Let me ", "see."]
    assert answer.usage.as_dict() == {"input": 9, "output": 4, "cache_read": 0, "cache_write": 0}
    assert "stream_options" not in fake.turn_requests[0].body


# --------------------------------------------------------------------------- Gemini


def test_gemini_function_responses_go_in_a_user_turn() -> None:
    contents = build_contents(golden.conversations("gemini-2.5-flash")["tool_calls"], "gemini-2.5-flash")
    roles = [c["role"] for c in contents]
    assert "function" not in roles and set(roles) == {"user", "model"}
    responses = [c for c in contents if any("functionResponse" in p for p in c["parts"])]
    assert len(responses) == 1 and responses[0]["role"] == "user"
    assert all("functionResponse" in p for p in responses[0]["parts"])  # the context line is its own turn


# --------------------------------------------------------------------------- compat


def test_check_compat_takes_each_documented_option() -> None:
    given = {
        "max_tokens_field": False,
        "finish_reason": False,
        "cache_key": True,
        "tool_result_name": True,
        "bridge_tool_images": True,
        "stream_options": False,
        "tool_choice": False,
        "reasoning_field": "reasoning",
        "effort": "reasoning",
        "content_null": False,
    }
    assert set(given) == set(COMPAT_OPTIONS)
    assert check_compat(given) == given
    d = dialect_for("http://h/v1", given)
    assert d == Dialect(
        max_tokens_field=None,
        cache_key=True,
        effort="reasoning",
        finish_reason=False,
        tool_result_name=True,
        bridge_tool_images=True,
        stream_options=False,
        tool_choice=False,
        reasoning_field="reasoning",
        content_null=False,
    )


@pytest.mark.parametrize(
    ("compat", "message"),
    [
        ("yes", "`compat` must be a table of openai-chat options"),
        (
            {"bogus": True},
            "unknown compat option 'bogus' (known: bridge_tool_images, cache_key, content_null, effort,",
        ),
        ({"cache_key": "yes"}, "compat option 'cache_key' must be true or false, got 'yes'"),
        ({"max_tokens_field": True}, "compat option 'max_tokens_field' must be a field name, or false"),
        ({"reasoning_field": 1}, "compat option 'reasoning_field' must be a field name"),
    ],
)
def test_check_compat_refuses_bad_options(compat: Any, message: str) -> None:
    with pytest.raises(ValueError) as e:
        check_compat(compat)
    assert str(e.value).startswith(message)


def test_bad_compat_fails_at_the_users_line(home: Home) -> None:
    home.init(
        """
        uji.provider.add({ id = "x", name = "X", api = "openai-chat", base_url = "http://127.0.0.1:9/v1",
          compat = { tool_result_name = "yes" } })
        """,
        provider=False,
    )
    run = home.run("hi")
    where = f"{home.config / 'init.lua'}:{home.line_of('uji.provider.add')}:"
    [notice] = [n for n in run.notices if n.startswith("config error:")]
    assert where in notice, notice
    assert "uji.provider.add x: compat option 'tool_result_name' must be true or false, got 'yes'" in notice


def test_compat_options_from_lua_shape_the_request(home: Home, fake: FakeOpenAI) -> None:
    (home.work / "a.txt").write_text("alpha\n")
    fake.script(openai_server.tool_call("read_file", {"path": "a.txt"}), openai_server.text("ok"))
    home.init(
        f"""
        uji.provider.add({{ id = "c", name = "C", api = "openai-chat", base_url = "{fake.base_url}",
          models = {{ {{ id = "m", output = 2000 }} }},
          compat = {{ max_tokens_field = "max_completion_tokens", cache_key = true, tool_result_name = true,
                      stream_options = false }} }})
        uji.model.use({{ provider = "c", model = "m" }})
        """,
        provider=False,
    )
    run = home.run("read a.txt", check=True)
    first, second = (r.body for r in fake.turn_requests)
    assert first["max_completion_tokens"] == 2000 and "max_tokens" not in first
    assert first["prompt_cache_key"] == run.session_id
    assert "stream_options" not in first
    [tool] = [m for m in second["messages"] if m["role"] == "tool"]
    assert tool["name"] == "read_file"


@pytest.mark.parametrize(("compat", "content"), [("", ""), ("compat = { content_null = true },", None)])
def test_a_tool_calls_only_message_goes_to_a_local_server_with_empty_content(
    home: Home, fake: FakeOpenAI, compat: str, content: str | None
) -> None:
    # llama-cpp-python's server answers 500 to `content: null` (seen against the real one,
    # tests/test_realserver.py): a server on a loopback or LAN address gets "".
    (home.work / "a.txt").write_text("alpha\n")
    fake.script(openai_server.tool_call("read_file", {"path": "a.txt"}), openai_server.text("ok"))
    home.init(
        f"""
        uji.provider.add({{ id = "c", name = "C", api = "openai-chat", base_url = "{fake.base_url}", {compat}
          models = {{ {{ id = "m" }} }} }})
        uji.model.use({{ provider = "c", model = "m" }})
        """,
        provider=False,
    )
    home.run("read a.txt", check=True)
    _, second = (r.body for r in fake.turn_requests)
    [assistant] = [m for m in second["messages"] if m["role"] == "assistant"]
    assert assistant["content"] == content and assistant["tool_calls"][0]["function"]["name"] == "read_file"


@pytest.mark.parametrize(
    ("base_url", "null"),
    [
        ("http://127.0.0.1:8080/v1", False),
        ("http://localhost:11434/v1", False),
        ("http://192.168.1.20:1234/v1", False),
        ("https://api.openai.com/v1", True),
        ("https://openrouter.ai/api/v1", True),
        ("https://llm.example.com/v1", True),
    ],
)
def test_hosted_servers_get_the_null_content_of_the_api_reference(base_url: str, null: bool) -> None:
    assert dialect_for(base_url).content_null is null


def test_merging_a_provider_keeps_compat_unless_given(home: Home, fake: FakeOpenAI) -> None:
    fake.script(openai_server.text("ok"))
    home.init(
        f"""
        uji.provider.add({{ id = "c", name = "C", api = "openai-chat", base_url = "{fake.base_url}",
          models = {{ "m" }}, compat = {{ max_tokens_field = false }} }})
        uji.provider.add({{ id = "c", name = "C again" }})
        uji.model.use({{ provider = "c", model = "m" }})
        """,
        provider=False,
    )
    home.run("hi", check=True)
    body = fake.turn_requests[0].body if fake.turn_requests else fake.requests[0].body
    assert "max_tokens" not in body and "max_completion_tokens" not in body


# --------------------------------------------------------------------------- the output limit


LIMITED = {
    "openai-chat": lambda f: f.text("partial ans", finish="length", usage=f.make_usage(12, 7)),
    "anthropic": lambda f: f.text("partial ans", stop="max_tokens", usage=f.make_usage(12, 7)),
    "gemini": lambda f: f.text("partial ans", finish="MAX_TOKENS", usage=f.make_usage(12, 7)),
    "responses": lambda f: f.incomplete("partial ans", usage=f.make_usage(12, 7)),
}


@pytest.mark.parametrize("api", list(APIS.values()), ids=list(APIS))
def test_an_answer_cut_off_at_the_limit_is_kept(home: Home, api: Api) -> None:
    with api.server() as server:
        server.script(LIMITED[api.wire](api.fakes))
        configure(home, api, server)
        run = home.run("write a lot", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "partial ans"
    assert run.done["usage"]["output"] == 7
    assert "the answer was cut off at the output limit (8192 tokens)" in run.notices
    saved = [m["text"] for m in home.db_messages(run.session_id) if m["type"] == "assistant"]
    assert saved == ["partial ans"]


WITHHELD = {
    "openai-chat": (
        lambda f: f.text("", finish="content_filter", usage=f.make_usage(12, 5)),
        "provider: the answer was stopped by the content filter",
    ),
    "anthropic": (
        lambda f: f.text("", stop="refusal", usage=f.make_usage(12, 5)),
        "provider: the model refused to answer (stop_reason: refusal)",
    ),
    "gemini": (
        lambda f: f.text("", finish="SAFETY", usage=f.make_usage(12, 5)),
        "provider: the model stopped without an answer (finishReason SAFETY)",
    ),
    "responses": (
        lambda f: f.incomplete("", reason="content_filter", usage=f.make_usage(12, 5)),
        "provider: the response was stopped by the content filter",
    ),
}


@pytest.mark.parametrize("api", list(APIS.values()), ids=list(APIS))
def test_a_refusal_keeps_its_usage(home: Home, api: Api) -> None:
    step, error = WITHHELD[api.wire]
    with api.server() as server:
        server.script(step(api.fakes))
        configure(home, api, server)
        run = home.run("hi", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 1
    assert run.done["error"] == error
    assert run.done["usage"]["output"] == 5 and run.done["usage"]["input"] == 12


# --------------------------------------------------------------------------- efforts


@pytest.mark.parametrize(
    ("model", "effort", "sent"),
    [
        ("claude-opus-4-7", "xhigh", "xhigh"),
        ("claude-opus-5", "xhigh", "xhigh"),
        ("claude-opus-4-6", "xhigh", "max"),  # 4.6 has no xhigh: the nearest above
        ("claude-opus-4-7", "max", "max"),
        ("claude-sonnet-4-6", "minimal", "low"),
    ],
)
def test_anthropic_adaptive_effort_levels(model: str, effort: str, sent: str) -> None:
    body = anthropic_body(golden.request(model, "https://api.anthropic.com/v1", [], effort, "off"))
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": sent}


def test_effort_xhigh_stays_xhigh_end_to_end(home: Home) -> None:
    api = APIS["anthropic"]
    with anthropic_server.FakeAnthropic() as server:
        server.script(anthropic_server.text("ok"))
        home.init(
            f"""
            uji.provider.add({{ id = "p", name = "P", api = "anthropic", base_url = "{server.base_url}",
              auth_env = {{ "UJI_E2E_KEY" }}, models = {{ {{ id = "claude-opus-4-7", reasoning = true,
              efforts = {{ "off", "low", "medium", "high", "xhigh", "max" }} }} }} }})
            uji.model.use({{ provider = "p", model = "claude-opus-4-7" }})
            """,
            provider=False,
        )
        run = home.run("hi", "--effort", "xhigh", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 0, run.stderr
    assert api.wire == "anthropic"
    assert server.turn_requests[0].body["output_config"] == {"effort": "xhigh"}


# --------------------------------------------------------------------------- in-stream errors


@pytest.mark.parametrize(
    ("code", "retried"),
    [
        ("server_error", True),
        ("model_overloaded", True),
        ("rate_limit_exceeded", True),
        ("invalid_prompt", False),
    ],
)
def test_a_textual_error_code_mid_stream_is_retried_when_transient(code: str, retried: bool) -> None:
    """OpenRouter reports an upstream that dropped mid-stream as `{"error": {"code":
    "server_error", ...}}` in a chunk (tests/recordings/openai-chat/openrouter_error_midstream.sse)."""
    failure = stream_error({"code": code, "message": "Provider disconnected unexpectedly"})
    assert failure.retryable is retried
    assert failure.message.endswith("Provider disconnected unexpectedly")
