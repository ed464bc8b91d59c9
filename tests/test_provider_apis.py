"""uji.api classes as a provider's `api` (reference docs §2 "Provider APIs"): options,
overridden methods, an api object of one's own, checked through `uji run` against the
fake servers (what the model receives is what they recorded)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text

THINKER = """
uji.provider.add({ id = "test", models = { { id = "m", context = 100000, reasoning = true } } })
"""


@pytest.mark.timeout(60)
def test_an_object_with_options_only_sets_the_wires_options(home: Home) -> None:
    home.init(
        """
        uji.provider.add({ id = "test", api = uji.api.openai({ max_tokens_field = "max_completion_tokens" }) })
        """
    )
    assert home.fake is not None
    home.fake.script(text("ok"))
    run = home.run("hi", check=True)
    body = home.fake.turn_requests[0].body
    assert "max_completion_tokens" in body and "max_tokens" not in body
    assert run.done["text"] == "ok"


@pytest.mark.timeout(60)
def test_overridden_methods_shape_what_the_model_receives(home: Home) -> None:
    home.init(
        THINKER
        + """
        local OpenAI = uji.api.openai
        local Mine = uji.class(OpenAI)
        function Mine:headers(request)
          local h = OpenAI.headers(self, request)
          h["X-Team"] = self.team
          return h
        end
        function Mine:body(request)
          local body = OpenAI.body(self, request)
          body.metadata = { via = "lua", model = request.model }
          return body
        end
        function Mine:user(item, request)
          local message = OpenAI.user(self, item, request)
          message.content = "[u] " .. message.content
          return message
        end
        function Mine:thinking(body, request)
          body.reasoning = { effort = request.effort }
        end
        function Mine:reasoning(delta) return delta.thought end
        uji.provider.add({ id = "test", api = Mine({ team = "blue", max_tokens_field = false }) })
        """
    )
    assert home.fake is not None
    home.fake.script(text("fine", reasoning="pondering", reasoning_field="thought"))
    run = home.run("hello", "--effort", "high", check=True)
    sent = home.fake.turn_requests[0]
    assert sent.headers["x-team"] == "blue"
    body = sent.body
    assert body["metadata"] == {"via": "lua", "model": "m"}
    assert body["messages"][-1] == {"role": "user", "content": "[u] hello"}
    assert body["reasoning"] == {"effort": "high"} and "reasoning_effort" not in body
    assert "max_tokens" not in body  # the option, beside the overrides
    answer = [m for m in run.messages if m["type"] == "assistant"][-1]
    assert answer["text"] == "fine" and answer["reasoning"] == "pondering"


@pytest.mark.timeout(60)
def test_an_api_object_of_its_own_streams_the_answer(home: Home) -> None:
    """A class of one's own with a `stream(request, reply)` method is the wire; it may
    call a built-in object's stream (here, to the same fake server) inside it."""
    home.init(
        """
        local Relay = uji.class()
        function Relay:init(inner) self.inner = inner end
        function Relay:stream(request, reply)
          local seen = {}
          local answer = self.inner:stream(request, { text = function(d) seen[#seen + 1] = d end })
          reply.text("relayed: ")
          reply.done({ text = "relayed: " .. answer.text .. " (" .. #seen .. " pieces)" })
        end
        uji.provider.add({ id = "test", api = Relay(uji.api.openai()) })
        """
    )
    assert home.fake is not None
    home.fake.script(text("abcdefgh"))
    run = home.run("hi", check=True)
    assert run.done["text"] == "relayed: abcdefgh (2 pieces)"
    assert home.fake.turn_requests[0].body["messages"][-1]["content"] == "hi"


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("api", "error"),
    [
        ("uji.api.openai", "`api` is a class; call it to make the object (uji.api.openai())"),
        ("{ }", "the api needs a stream method"),
        ('uji.api.openai({ finish_reason = "yes" })', "option finish_reason must be a boolean"),
    ],
)
def test_a_bad_api_is_an_error_at_its_line(home: Home, api: str, error: str) -> None:
    home.init(f'uji.provider.add({{ id = "test", api = {api} }})\n')
    run = home.run("hi")
    line = home.line_of("api = ")
    assert f"init.lua:{line}: " in run.stderr + run.stdout and error in run.stderr + run.stdout


@pytest.mark.timeout(60)
def test_uji_api_loads_a_class_from_the_configs_lua_folder(home: Home) -> None:
    folder = home.config / "lua" / "uji" / "builtin" / "apis"
    folder.mkdir(parents=True)
    (folder / "shouty.lua").write_text(
        """
local Shouty = uji.class(uji.api.openai)
function Shouty:user(item, request)
  return { role = "user", content = string.upper(item.text) }
end
return Shouty
"""
    )
    home.init('uji.provider.add({ id = "test", api = uji.api.shouty() })\n')
    assert home.fake is not None
    home.fake.script(text("ok"))
    home.run("quiet please", check=True)
    assert home.fake.turn_requests[0].body["messages"][-1] == {"role": "user", "content": "QUIET PLEASE"}
    assert json.dumps(home.fake.turn_requests[0].body).count("QUIET PLEASE") == 1


@pytest.mark.timeout(60)
def test_efforts_and_ready_methods(home: Home) -> None:
    """`efforts(model)` gives the levels of a model without its own list (medium → high:
    a tie goes up); `ready(model)` is waited for before the request."""
    home.init(
        THINKER
        + """
        local Picky = uji.class(uji.api.openai)
        function Picky:efforts(model) return { "low", "high" } end
        function Picky:ready(model)
          uji.sleep(0.01)
          self.meta = "loaded " .. model
        end
        function Picky:headers(request)
          local h = uji.api.openai.headers(self, request)
          h["X-Meta"] = self.meta or "not yet"
          return h
        end
        uji.provider.add({ id = "test", api = Picky() })
        """
    )
    assert home.fake is not None
    home.fake.script(text("ok"))
    home.run("hi", "--effort", "medium", check=True)
    sent = home.fake.turn_requests[0]
    assert sent.body["reasoning_effort"] == "high"
    assert sent.headers["x-meta"] == "loaded m"
