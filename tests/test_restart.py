"""uji.os.restart{args, roots, carry}, uji.os.carry, uji.os.exit and the override packs
(docs.md §1 files: overrides.json; §2 uji.pack: the one-time restart; "Runtime": OS), all
through `uji run` with a real config: what the next start sees, what the model received,
what lands in overrides.json, the exit status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text

pytestmark = pytest.mark.timeout(120)

# A runtime module that replaces uji.regex: its matcher accepts "pack:<pattern>" only.
REGEX_MODULE = "return function(p) return { test = function(_, s) return s == 'pack:' .. p end } end\n"


def user_texts(home: Home) -> list[str]:
    """The last user message of each turn request the model received."""
    assert home.fake is not None
    out = []
    for request in home.fake.turn_requests:
        content = [m for m in request.body["messages"] if m["role"] == "user"][-1]["content"]
        out.append(content if isinstance(content, str) else "".join(p.get("text", "") for p in content))
    return out


def override_pack(root: Path) -> Path:
    (root / "lua" / "uji" / "sys").mkdir(parents=True)
    (root / "lua" / "uji" / "sys" / "regex.lua").write_text(REGEX_MODULE)
    return root


def test_a_restart_in_process_hands_over_carry_and_roots_and_the_prompt_runs_once(
    home: Home, tmp_path: Path
) -> None:
    roots = override_pack(tmp_path / "extra")
    home.init(
        f"""
        uji.notify("carry: " .. uji.json.encode(uji.os.carry == nil and uji.json.null or uji.os.carry))
        uji.notify("regex replaced: " .. tostring(uji.regex("^x$"):test("pack:^x$")))
        uji.notify("roots: " .. table.concat(uji.os.roots, " "))
        if uji.os.carry == nil then
          uji.os.restart({{ carry = {{ n = 1, draft = "half a thought" }}, roots = {{ "{roots}" }} }})
        end
        """
    )
    home.fake.script(text("done"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    first, replaced_before, roots_before, carried, replaced_after, roots_after = run.notices[:6]
    assert (first, replaced_before) == ("carry: null", "regex replaced: false")
    assert json.loads(carried.removeprefix("carry: ")) == {"n": 1, "draft": "half a thought"}
    assert replaced_after == "regex replaced: true"  # the roots' lua/ comes before uji's own Lua
    assert roots_before == f"roots: {home.config}"
    assert roots_after == f"roots: {home.config} {roots}"
    assert user_texts(home) == ["hi"]  # the prompt ran once, in the new start


def test_a_restart_with_args_replaces_the_process_with_that_command_line(home: Home) -> None:
    home.init(
        """
        uji.notify("carried: " .. tostring(uji.os.carry))
        if uji.os.carry == nil then
          uji.os.restart({ args = { "run", "--json", "the second prompt" }, carry = "from the first" })
        end
        """
    )
    home.fake.script(text("done"))
    run = home.run("the first prompt")
    assert run.rc == 0, run.stderr
    assert "carried: nil" in run.notices and "carried: from the first" in run.notices
    assert user_texts(home) == ["the second prompt"]
    assert len(run.of("done")) == 1


def test_exit_ends_uji_with_its_status_before_the_prompt(home: Home) -> None:
    home.init('uji.os.exit(3)\nuji.notify("the rest of the file runs")\n')
    run = home.run("hi")
    assert run.rc == 3
    assert "the rest of the file runs" in run.notices
    assert user_texts(home) == []


def test_bad_restart_and_exit_arguments_are_errors_at_their_line(home: Home) -> None:
    home.init(
        """
        local function err(f) local ok, e = pcall(f) return e end
        uji.notify(err(function() uji.os.restart({ bogus = 1 }) end))
        uji.notify(err(function() uji.os.restart({ carry = function() end }) end))
        uji.notify(err(function() uji.os.restart({ args = { 1, {} } }) end))
        uji.notify(err(function() uji.os.exit(300) end))
        """
    )
    home.fake.script(text("done"))
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    init = home.config / "init.lua"
    bogus, carry, args, status = run.notices[:4]
    assert (
        bogus
        == f"{init}:{home.line_of('bogus')}: uji.os.restart: unknown option bogus (known: args, roots, carry)"
    )
    assert carry.startswith(
        f"{init}:{home.line_of('carry =')}: uji.os.restart: carry must be what uji.json.encode"
    )
    assert args.startswith(f"{init}:{home.line_of('args =')}: uji.os.restart: args")
    assert (
        status
        == f"{init}:{home.line_of('300')}: uji.os.exit: the status must be a whole number from 0 to 255"
    )
    assert user_texts(home) == ["hi"]  # no restart happened


def test_a_pack_that_replaces_uji_modules_restarts_once_and_is_remembered(home: Home, tmp_path: Path) -> None:
    pack = override_pack(tmp_path / "fastregex")
    adds = f'uji.pack.add({{ {{ dir = "{pack}" }} }})\n'
    probe = 'uji.notify("regex replaced: " .. tostring(uji.regex("^x$"):test("pack:^x$")))\n'
    home.init(probe + adds)
    overrides = home.data / "overrides.json"

    home.fake.script(text("one"))
    first = home.run("hi")
    assert first.rc == 0, first.stderr
    replaced = [n for n in first.notices if n.startswith("regex replaced")]
    assert replaced == ["regex replaced: false", "regex replaced: true"]  # the one restart
    assert any(f"{pack}: replaces uji's own modules" in n for n in first.notices)
    assert json.loads(overrides.read_text()) == [str(pack)]
    assert user_texts(home) == ["hi"]

    home.fake.script(text("two"))
    second = home.run("again")
    assert [n for n in second.notices if n.startswith("regex replaced")] == ["regex replaced: true"]
    assert not any("replaces uji's own modules" in n for n in second.notices)

    home.init(probe)  # the pack is gone from the config: forgotten for the next start
    home.fake.script(text("three"))
    third = home.run("once more")
    assert third.rc == 0, third.stderr
    assert json.loads(overrides.read_text()) == []
    home.fake.script(text("four"))
    fourth = home.run("last")
    assert [n for n in fourth.notices if n.startswith("regex replaced")] == ["regex replaced: false"]
