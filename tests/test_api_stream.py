"""uji.api.stream.run, the shared SSE helper of a provider API written in Lua (reference
docs §2 "Shared SSE helper"): a turn through `uji run` against the fake OpenAI server
with an api class of one's own built on it, and each documented failure, told to the
reply as the reference says."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.base import raw_lines, status
from tests.fakes.openai_server import text, tool_call
from tests.test_lua_runtime_helpers import run_config

# An api of one's own for the Chat Completions format, on uji.api.stream (its read()
# is the example at the top of the helper's file).
CHAT_API = """
local Chat = uji.class()
function Chat:stream(request, reply)
  local messages = { { role = "system", content = request.system } }
  for _, m in ipairs(request.messages) do
    if m.type == "user" then
      messages[#messages + 1] = { role = "user", content = m.text }
    elseif m.type == "assistant" then
      local calls = {}
      for _, c in ipairs(m.tool_calls or {}) do
        calls[#calls + 1] = { id = c.id, type = "function", ["function"] = { name = c.name, arguments = c.arguments } }
      end
      messages[#messages + 1] = { role = "assistant", content = m.text,
        tool_calls = #calls > 0 and calls or nil }
    else
      messages[#messages + 1] = { role = "tool", tool_call_id = m.tool_call_id, content = m.content }
    end
  end
  local tools = {}
  for _, t in ipairs(request.tools) do
    tools[#tools + 1] = { type = "function", ["function"] = t }
  end
  return uji.api.stream.run({
    url = request.provider.base_url .. "/chat/completions",
    headers = { Authorization = request.auth.key and ("Bearer " .. request.auth.key) or nil },
    body = { model = request.model, stream = true, stream_options = { include_usage = true },
      messages = messages, tools = #tools > 0 and tools or nil },
    reply = reply,
    read = function(event, parts)
      if event.usage then
        parts.usage = { input = event.usage.prompt_tokens, output = event.usage.completion_tokens }
      end
      local choice = event.choices and event.choices[1]
      if not choice then return end
      local delta = choice.delta or {}
      if delta.content then parts:push_text(delta.content) end
      for _, d in ipairs(delta.tool_calls or {}) do
        local call = parts:call(d.index + 1)
        call.id = d.id or call.id
        call.name = d["function"].name or call.name
        call.arguments = call.arguments .. (d["function"].arguments or "")
      end
      if choice.finish_reason then
        parts.hit_limit = choice.finish_reason == "length"
        parts:finish()
      end
    end,
  })
end
"""


@pytest.mark.timeout(60)
def test_a_turn_with_a_tool_call_through_an_api_built_on_the_helper(home: Home) -> None:
    (home.work / "notes.txt").write_text("the notes say hello\n")
    home.init(CHAT_API + 'uji.provider.add({ id = "test", api = Chat() })\n')
    assert home.fake is not None
    home.fake.script(tool_call("read_file", {"path": "notes.txt"}), text("They say hello."))
    run = home.run("what do the notes say?", check=True)
    assert run.done["text"] == "They say hello."
    first, second = home.fake.turn_requests[:2]
    assert first.headers["content-type"] == "application/json"
    assert first.body["messages"][-1] == {"role": "user", "content": "what do the notes say?"}
    # The call's result went back to the model: read_file ran on the file.
    result = second.body["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_1"
    assert "the notes say hello" in result["content"]
    calls = [m for m in run.messages if m["type"] == "assistant" and m.get("tool_calls")]
    assert calls[0]["tool_calls"][0]["name"] == "read_file"
    assert run.done["usage"]["input"] > 0  # parts.usage reached the answer


# Each case: the fake's answer, and what the reply was told.
FAILURES: list[tuple[str, Any, dict[str, Any]]] = [
    ("unauthorised", status(401, {"error": "bad key"}), {"kind": "auth", "status": 401}),
    (
        "a 400 with retry-after",
        status(400, {"error": "no such model"}, {"Retry-After": "7"}),
        {"kind": "http", "status": 400, "retry_after": 7, "has": "no such model"},
    ),
    (
        "ended without finishing",
        raw_lines(['data: {"choices":[{"index":0,"delta":{"content":"par"}}]}', ""]),
        {"kind": "http", "has": "ended before the answer finished"},
    ),
    (
        "incomplete arguments",
        raw_lines(
            [
                'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1",'
                '"function":{"name":"read_file","arguments":"{\\"pa"}}]}}]}',
                "",
                'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
                "",
                "data: [DONE]",
                "",
            ]
        ),
        {"kind": "provider", "has": "not complete JSON"},
    ),
    (
        "the output limit with no calls",
        raw_lines(
            [
                'data: {"choices":[{"index":0,"delta":{"content":"long"}}]}',
                "",
                'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}',
                "",
            ]
        ),
        {"kind": "provider", "has": "output limit"},
    ),
    (
        "an event that is not JSON",
        raw_lines(["data: {not json", ""]),
        {"kind": "provider", "has": "not JSON"},
    ),
]


@pytest.mark.timeout(90)
def test_each_failure_is_told_to_the_reply_as_documented(home: Home) -> None:
    assert home.fake is not None
    home.fake.script(*(step for _, step, _ in FAILURES), raw_lines(["data: [DONE]", ""]))
    got = run_config(
        home,
        CHAT_API
        + f"""
        local api = Chat()
        local request = {{ model = "m", system = "s", messages = {{ {{ type = "user", text = "hi" }} }},
          tools = {{ {{ name = "read_file", description = "d", parameters = {{ type = "object" }} }} }},
          provider = {{ id = "test", base_url = {home.fake.base_url!r} }}, auth = {{ key = "k" }} }}
        out.failures = {{}}
        for i = 1, {len(FAILURES)} do
          local told, texts = nil, {{}}
          local reply = {{ text = function(d) texts[#texts + 1] = d end,
            done = function(a) told = {{ done = a }} end, fail = function(f) told = f end }}
          local answer, failure = api:stream(request, reply)
          told.returned_nil = answer == nil and failure ~= nil
          told.streamed = table.concat(texts)
          out.failures[i] = told
        end
        -- A mistake in the spec is an error at the caller's line.
        out.bad = select(2, pcall(function() uji.api.stream.run({{ url = "x", reply = {{}} }}) end))
        -- [DONE] before any finish: the stream ended without finishing.
        local r = {{}}
        uji.api.stream.run({{ url = request.provider.base_url .. "/chat/completions",
          body = '{{"model":"m","tools":[{{}}]}}', reply = {{ fail = function(f) r.failed = f end }},
          read = function() end, finished = function(parts) parts:finish() end }})
        out.finished_by_hook = r.failed == nil
        -- A request that cannot be sent is not retried (provider); a refused connection is (http).
        local unsent, refused = {{}}, {{}}
        uji.api.stream.run({{ url = request.provider.base_url, headers = {{ ["X-Bad"] = "v " }}, body = "{{}}",
          reply = {{ fail = function(f) unsent.failed = f end }}, read = function() end }})
        local s = assert(uji.net.listen(0))
        local port = s.port
        s:close()
        uji.api.stream.run({{ url = "http://127.0.0.1:" .. port .. "/x", body = "{{}}",
          reply = {{ fail = function(f) refused.failed = f end }}, read = function() end }})
        out.unsent, out.refused = unsent.failed, refused.failed
        """,
    )
    for (name, _, want), told in zip(FAILURES, got["failures"], strict=True):
        assert told["kind"] == want["kind"], (name, told)
        assert told["returned_nil"] is True, name
        for key in ("status", "retry_after"):
            if key in want:
                assert told.get(key) == want[key], (name, told)
        if "has" in want:
            assert want["has"] in told["message"], (name, told)
    assert got["failures"][2]["streamed"] == "par"  # text streamed as it came, then the failure
    assert "uji.api.stream.run: `read(event, parts)` is required" in got["bad"]
    assert "test.lua" in got["bad"] or "init.lua" in got["bad"]  # the caller's file and line
    assert got["finished_by_hook"] is True
    assert got["unsent"]["kind"] == "provider" and "header" in got["unsent"]["message"]
    assert got["refused"]["kind"] == "http" and got["refused"]["message"].startswith("could not connect")
