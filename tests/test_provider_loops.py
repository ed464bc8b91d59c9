"""A provider's own loop (`uji.provider.add{ loop = Class }`, reference docs §2 "Custom
loop") and `uji.tool.display`: the turn runs through the Lua class, through `uji run`;
what it reports is what the session, the JSON events and the gate show."""

from __future__ import annotations

import pytest

from tests.conftest import Home

FAKE = """
local Loop = uji.class()
function Loop:init(agent, turn)
  self.agent = agent
  self.turn = turn
end
function Loop:run()
{body}
end
uji.provider.add({{ id = "fake", name = "Fake", api = uji.api.openai(), loop = Loop, models = {{ "m" }} }})
uji.model.use({{ provider = "fake", model = "m" }})
"""

STEP = """
  local a = self.agent
  a:delta("text", "hel")
  local call = { id = "c1", name = "Bash", arguments = '{"command":"ls"}' }
  a:assistant_step({ type = "assistant", text = "step", tool_calls = { call } })
  local decision = a:approve("Bash", { command = "ls" })
  local content = "denied: " .. tostring(decision.deny)
  if decision.allow then
    a:tool_running(call)
    content = a:after_tool("Bash", "ran " .. decision.arguments.command)
  end
  a:tool_result(call, content)
  a:usage({ input = 5, output = 2 })
  a:done({ type = "assistant", text = "hello " .. self.turn.prompt.text .. " with " .. #self.turn.tools .. " tools" })
"""


def loop_config(body: str, extra: str = "") -> str:
    return FAKE.format(body=body) + extra


@pytest.mark.timeout(60)
def test_the_turn_runs_through_the_providers_loop(home: Home) -> None:
    home.init(
        loop_config(
            STEP,
            """
            uji.tool.display("Bash", { label = "Shell", subject = function(args) return args.command end })
            uji.on("after_tool", function(e) return e.content .. " (seen)" end)
            """,
        ),
        provider=False,
    )
    run = home.run("hi there", "--on-ask", "allow", check=True)
    assert run.done["text"] == "hello hi there with 4 tools"
    step = next(m for m in run.messages if m["type"] == "assistant" and m.get("tool_calls"))
    assert step["text"] == "step" and step["tool_calls"][0]["name"] == "Bash"
    assert [m["content"] for m in run.tool_results()] == ["ran ls (seen)"]
    (call,) = run.calls
    assert (call["name"], call["subject"], call["verb"], call["decision"]) == ("Bash", "ls", "Shell", "allow")
    assert call["id"] == "c1"
    assert run.done["usage"]["input"] == 5 and run.done["usage"]["output"] == 2
    saved = home.db_messages(run.session_id)
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "assistant"]


@pytest.mark.timeout(60)
def test_the_gate_judges_a_loops_call_by_its_displayed_subject(home: Home) -> None:
    home.init(
        loop_config(
            STEP,
            """
            uji.tool.display("Bash", { label = "Shell", subject = function(args) return args.command end })
            uji.tool.policy({ Bash = { deny = { { pattern = "ls", message = "no listing here" } } } })
            """,
        ),
        provider=False,
    )
    run = home.run("hi", check=True)
    (call,) = run.calls
    assert (call["decision"], call["by"], call["rule"]) == ("deny", "policy", "ls")
    assert [m["content"] for m in run.tool_results()] == ["denied: no listing here"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('  error("boom", 0)', "loop: boom"),
        ("  local x = 1", "loop: the turn ended without an answer"),
        ('  self.agent:failed("the backend said no")', "the backend said no"),
    ],
)
def test_a_loop_that_fails_ends_the_turn_with_an_error(home: Home, body: str, error: str) -> None:
    home.init(loop_config(body), provider=False)
    run = home.run("go")
    assert run.rc == 1
    saved = home.db_messages(run.session_id)
    assert saved[-1] == {"type": "error", "text": error}


@pytest.mark.timeout(60)
def test_a_loop_provider_keeps_its_own_context_and_shows_in_its_row(home: Home) -> None:
    home.init(
        loop_config(
            """
  local started, why = uji.session.compact()
  local row = uji.provider.get("fake")
  self.agent:done({ type = "assistant",
    text = tostring(started) .. " / " .. tostring(why) .. " / " .. tostring(row.loop) .. " / "
      .. tostring(uji.provider.get("openai").loop) .. " / [" .. row.base_url .. "]" })
"""
        ),
        provider=False,
    )
    run = home.run("go", check=True)
    assert run.done["text"] == "false / Fake keeps its own context / true / false / []"


@pytest.mark.timeout(60)
def test_a_loop_that_is_not_a_class_is_an_error_at_its_line(home: Home) -> None:
    home.init(
        'uji.provider.add({ id = "odd", name = "Odd", api = uji.api.openai(),\n'
        "  loop = { run = function() end }, models = { 'm' } })\n",
        provider=False,
    )
    run = home.run("go")
    assert "init.lua:1: the loop of provider odd must be a class with a run method" in run.stderr + run.stdout


@pytest.mark.timeout(60)
def test_steer_and_queued_reach_the_loop(home: Home) -> None:
    """Nothing is queued in a headless run: queued() is false and steer() gives nil."""
    home.init(
        loop_config(
            """
  local a = self.agent
  a:done({ type = "assistant", text = tostring(a:queued()) .. " " .. tostring(a:steer()) })
"""
        ),
        provider=False,
    )
    assert home.run("go", check=True).done["text"] == "false nil"


@pytest.mark.timeout(60)
def test_an_interrupt_cancels_the_loop_then_tells_it(home: Home) -> None:
    """The task is cancelled first, then `loop:interrupt()`; the call in flight is
    answered as for any turn."""
    marker = home.root / "interrupted"
    home.init(
        loop_config(
            """
  local call = { id = "c1", name = "Bash", arguments = "{}" }
  self.agent:assistant_step({ type = "assistant", text = "", tool_calls = { call } })
  self.agent:tool_running(call)
  uji.defer(0, function() uji.session.interrupt() end)
  uji.sleep(50)
  self.agent:done({ type = "assistant", text = "not reached" })
""",
            f"""
            function Loop:interrupt()
              local f = assert(io.open({str(marker)!r}, "w"))
              f:write("told")
              f:close()
            end
            """,
        ),
        provider=False,
    )
    run = home.run("go")
    assert marker.read_text() == "told"
    saved = home.db_messages(run.session_id)
    assert [m.get("content") for m in saved if m["type"] == "tool"] == [
        "error: interrupted by the user while this tool ran"
    ]
    assert saved[-1] == {"type": "error", "text": "interrupted"}


@pytest.mark.timeout(60)
def test_a_bad_display_is_an_error_at_its_line(home: Home) -> None:
    home.init('uji.tool.display("Bash", { lable = "Shell" })\n')
    run = home.run("go")
    line = home.line_of("lable")
    assert (
        f"init.lua:{line}: uji.tool.display: unknown field lable (known: label, subject, question, preview)"
        in (run.stderr + run.stdout)
    )
