"""A config written for the original uji loads as it is: its missing functions become
notices naming them and their line, and what the file sets after them takes effect."""

from __future__ import annotations

from tests.conftest import PROVIDER_LUA, Home
from tests.fakes.openai_server import call, text, tool_calls


def original_init(home: Home, middle: str) -> None:
    """`middle`, then (after it) a provider and a policy rule that deny `rm *`."""
    assert home.fake is not None
    provider = PROVIDER_LUA.format(base_url=home.fake.base_url)
    (home.config / "init.lua").write_text(
        f"{middle}\nuji.tool.policy({{ run_command = {{ deny = {{ 'touch *' }} }} }})\n{provider}"
    )


def test_a_missing_function_is_a_notice_naming_it_and_its_line_and_the_file_goes_on(home: Home) -> None:
    assert home.fake is not None
    original_init(
        home,
        "local r = uji.frobnicate.widget({ size = 3 })\nuji.ui.sparkle('x')\nlocal nested = uji.a.b.c()\n",
    )
    home.fake.script(tool_calls(call("run_command", {"command": "touch marker"})), text("ok"))
    run = home.run("go")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    assert f"{init}:1: uji.frobnicate.widget is not supported yet; the call did nothing" in run.notices
    assert f"{init}:2: uji.ui.sparkle is not supported yet; the call did nothing" in run.notices
    assert f"{init}:3: uji.a.b.c is not supported yet; the call did nothing" in run.notices
    # The policy after those lines holds, and the provider after it answered.
    assert [c["decision"] for c in run.calls] == ["deny"]
    assert not (home.work / "marker").exists()
    assert len(home.fake.requests) == 2  # the call, then its denial sent back
