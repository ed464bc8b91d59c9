"""Each wire through the real `uji run --json`, against a loopback fake of its API:
a tool-using turn, retries with their notice, a 401, a dropped connection, a missing key."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes import anthropic_server, gemini_server, openai_server, responses_server
from tests.fakes.base import FakeServer

KEY = "sk-e2e-key-42"


@dataclass
class Api:
    wire: str
    fakes: ModuleType
    server: type[FakeServer]
    model: str
    model_lua: str  # the model's table in uji.provider.add


APIS = {
    "openai-chat": Api(
        "openai-chat",
        openai_server,
        openai_server.FakeOpenAI,
        "gpt-5",
        '{ id = "gpt-5", output = 8192, reasoning = true, efforts = { "minimal", "low", "medium", "high" } }',
    ),
    "anthropic": Api(
        "anthropic",
        anthropic_server,
        anthropic_server.FakeAnthropic,
        "claude-sonnet-4-5",
        '{ id = "claude-sonnet-4-5", output = 8192, reasoning = true, cache = true, images = true }',
    ),
    "gemini": Api(
        "gemini",
        gemini_server,
        gemini_server.FakeGemini,
        "gemini-2.5-flash",
        '{ id = "gemini-2.5-flash", output = 8192, reasoning = true, efforts = { "off", "low", "high" } }',
    ),
    "responses": Api(
        "responses",
        responses_server,
        responses_server.FakeResponses,
        "gpt-5",
        '{ id = "gpt-5", output = 8192, reasoning = true, efforts = { "minimal", "low", "medium", "high" } }',
    ),
}


@pytest.fixture(params=list(APIS))
def api(request: pytest.FixtureRequest) -> Api:
    return APIS[request.param]


@pytest.fixture
def server(api: Api) -> Iterator[Any]:
    with api.server() as fake:
        yield fake


def configure(home: Home, api: Api, server: Any, auth_env: str = "UJI_E2E_KEY") -> None:
    home.init(
        f"""
        uji.provider.add({{ id = "p", name = "P", wire = "{api.wire}", base_url = "{server.base_url}",
          auth_env = {{ "{auth_env}" }}, models = {{ {api.model_lua} }} }})
        uji.model.use({{ provider = "p", model = "{api.model}" }})
        """,
        provider=False,
    )


def tool_result_sent(api: Api, body: dict[str, Any]) -> str:
    """The text of the tool result in a follow-up request, read in the API's own shape."""
    if api.wire == "openai-chat":
        return next(m["content"] for m in body["messages"] if m["role"] == "tool")
    if api.wire == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"] if b.get("type") == "tool_result"]
        return blocks[0]["content"]
    if api.wire == "responses":
        return next(i["output"] for i in body["input"] if i["type"] == "function_call_output")
    parts = [p for c in body["contents"] for p in c["parts"] if "functionResponse" in p]
    return parts[0]["functionResponse"]["response"]["result"]


def test_a_tool_turn_with_retries(home: Home, api: Api, server: Any) -> None:
    """One turn per wire: a 429 with retry-after, a tool call, a 5xx, then the answer."""
    f = api.fakes
    (home.work / "a.txt").write_text("alpha\n")
    steps = [
        f.status(429, "slow down", {"retry-after": "0"}),
        f.tool_call("read_file", {"path": "a.txt"}),
        f.status(503, "busy", {"retry-after": "0"}),
    ]
    expected = [
        "request failed (http: 429: slow down), retrying in 0s (1/5)",
        "request failed (http: 503: busy), retrying in 0s (1/5)",
    ]
    if api.wire == "anthropic":  # an overload inside a 200 stream is retried too (backoff ~2 s)
        steps.insert(0, f.error_after("overloaded_error", "Overloaded"))
        expected[0] = expected[0].replace("(1/5)", "(2/5)")
    server.script(*steps, f.text("It says alpha."))
    configure(home, api, server)
    run = home.run("read a.txt", "--effort", "max", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "It says alpha."
    assert "alpha" in run.tool_results()[0]["content"]
    notices = run.notices
    if api.wire == "anthropic":
        first = notices.pop(0)
        assert first.startswith("request failed (http: 529: overloaded_error: Overloaded), retrying in ")
        assert first.endswith("s (1/5)")
    assert notices == expected
    turns = server.turn_requests
    assert len(turns) == len(steps) + 1 and not server.exhausted
    assert "alpha" in tool_result_sent(api, turns[-1].body)
    assert turns[0].body == turns[1].body  # a retry sends the same request again
    # --effort max, mapped to the most the model accepts, in the API's own knob.
    body = turns[0].body
    if api.wire == "openai-chat":
        assert body["reasoning_effort"] == "high"
    elif api.wire == "responses":
        assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    elif api.wire == "anthropic":
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 7168}  # high, shrunk
        assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}  # cache "short"
    else:
        assert body["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 16384


@pytest.mark.parametrize("api", [APIS["gemini"]], ids=["gemini"])  # the mapping is shared
def test_401_fails_at_once(home: Home, server: Any, api: Api) -> None:
    server.script(api.fakes.status(401, {"error": {"message": "API key not valid"}}))
    configure(home, api, server)
    run = home.run("hi", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 1
    assert run.done["error"] == "authentication rejected (401) - check the api key for this provider"
    assert "uji: error: authentication rejected (401) - check the api key for this provider" in run.stderr
    assert len(server.turn_requests) == 1 and not run.notices


@pytest.mark.parametrize(
    "api", [APIS["anthropic"], APIS["gemini"], APIS["responses"]], ids=["anthropic", "gemini", "responses"]
)
def test_a_dropped_stream_is_retried_without_duplicate_text(home: Home, server: Any, api: Api) -> None:
    f = api.fakes
    whole = f.text("hello world", piece=1)
    server.script(f.drop_after(6, whole), f.text("hello world", piece=1))
    configure(home, api, server)
    run = home.run("hi", env={"UJI_E2E_KEY": KEY})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "hello world"
    assert run.notices[0].startswith("request failed (connection dropped mid-stream")
    saved = [m for m in home.db_messages(run.session_id) if m["type"] == "assistant"]
    assert [m["text"] for m in saved] == ["hello world"]


def test_a_missing_key_names_the_variable(home: Home) -> None:
    # The built-in provider; an empty variable counts as unset.
    home.init('uji.model.use({ provider = "anthropic", model = "claude-sonnet-4-5" })', provider=False)
    run = home.run("hi", env={"ANTHROPIC_API_KEY": ""})
    assert run.rc == 1
    line = "no API key for Anthropic: set ANTHROPIC_API_KEY, or save one with /login"
    assert run.done["error"] == line
    assert run.stderr.strip() == f"uji: error: {line}"
