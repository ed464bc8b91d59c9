"""Instruction files (AGENTS.md, CLAUDE.md, the user's own) in the system prompt, through
`uji run` and the agent loop; uji.context.configure{instructions} and uji.context.list."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from tests.conftest import Home, tool_schemas
from tests.fakes.openai_server import FakeOpenAI, text
from tests.test_agent_inprocess import make_agent
from uji.agent.instructions import HEADER


def system_of(fake: FakeOpenAI, n: int = 0) -> str:
    content = fake.turn_requests[n].body["messages"][0]
    assert content["role"] == "system"
    return str(content["content"])


def blocks(system: str) -> list[tuple[str, str]]:
    """(file label, text) of each instruction block, in prompt order."""
    return re.findall(r'<instructions file="([^"]*)">\n(.*?)\n</instructions>', system, re.S)


def repo(home: Home) -> Path:
    (home.work / ".git").mkdir()
    return home.work


def test_files_from_the_root_down_to_the_working_directory_in_order(home: Home) -> None:
    root = repo(home)
    deeper = root / "sub" / "deeper"
    deeper.mkdir(parents=True)
    (root / "sibling").mkdir()
    (home.root / "AGENTS.md").write_text("ABOVE THE REPOSITORY")  # above the root: not read
    (home.config / "AGENTS.md").write_text("Personal: answer in English.")
    (root / "AGENTS.md").write_text("Root: run pytest before you finish.\n")
    (root / "CLAUDE.md").write_text("ROOT CLAUDE: not read, AGENTS.md is there")
    (root / "sub" / "AGENTS.md").mkdir()  # a directory of that name is no instruction file
    (root / "sub" / "CLAUDE.md").write_text("Sub: the CLAUDE.md fallback.")
    (deeper / "AGENTS.md").write_text("Deeper: closest to the work.")
    (deeper / "CLAUDE.md").write_text("DEEPER CLAUDE: not read")
    (root / "sibling" / "AGENTS.md").write_text("SIBLING: not on the way")
    home.init("")
    home.work = deeper
    home.fake.script(text("ok"))
    run = home.run("hi", check=True)
    system = system_of(home.fake)
    assert blocks(system) == [
        ("~/.config/uji/AGENTS.md", "Personal: answer in English."),
        ("AGENTS.md", "Root: run pytest before you finish."),
        ("sub/CLAUDE.md", "Sub: the CLAUDE.md fallback."),
        ("sub/deeper/AGENTS.md", "Deeper: closest to the work."),
    ]
    for absent in ("ABOVE", "ROOT CLAUDE", "DEEPER CLAUDE", "SIBLING"):
        assert absent not in system
    # The section comes after the base prompt and says once what the files are.
    base, _, rest = system.partition("\n\n" + HEADER)
    assert base.startswith("You are uji") and str(deeper) in base
    assert rest and system.count(HEADER) == 1
    assert not [n for n in run.notices if "instructions" in n]


def test_without_a_repository_only_the_working_directory_counts(home: Home) -> None:
    (home.root / "AGENTS.md").write_text("PARENT: no repository, not read")
    (home.work / "CLAUDE.md").write_text("Here: the working directory's CLAUDE.md.")
    home.init("")
    home.fake.script(text("ok"))
    home.run("hi", check=True)
    assert blocks(system_of(home.fake)) == [("CLAUDE.md", "Here: the working directory's CLAUDE.md.")]


def test_no_files_no_section(home: Home) -> None:
    home.init("")
    home.fake.script(text("ok"))
    home.run("hi", check=True)
    assert HEADER not in system_of(home.fake) and "<instructions" not in system_of(home.fake)


def test_an_instruction_file_is_text_and_never_run(home: Home) -> None:
    root = repo(home)
    marker = home.root / "marker"
    evil = (
        f'os.execute("touch {marker}-lua")\n'
        f"require('os').execute('touch {marker}-require')\n"
        f"$(touch {marker}-subshell) `touch {marker}-backtick`\n"
        f"```sh\ntouch {marker}-fence\n```\n"
    )
    (root / "AGENTS.md").write_text(evil)
    (root / "CLAUDE.md").write_text(f'os.execute("touch {marker}-claude")')
    home.init("")
    home.fake.script(text("ok"))
    home.run("hi", check=True)
    assert blocks(system_of(home.fake)) == [("AGENTS.md", evil.strip("\n"))]
    assert sorted(p.name for p in home.root.iterdir() if p.name.startswith("marker")) == []


def test_a_big_file_is_cut_and_bad_files_are_left_out_with_a_notice(home: Home) -> None:
    root = repo(home)
    for d in ("bad", "bad/link", "bad/link/dangling"):
        (root / d).mkdir()
    line = "Prefer small functions. " * 3 + "é\n"  # a two-byte character: the cut may split one
    big = line * (70 * 1024 // len(line.encode()) + 1)
    assert len(big.encode()) > 70 * 1024
    (root / "AGENTS.md").write_text(big)
    (root / "bad" / "AGENTS.md").write_bytes(b"caf\xe9 latin-1, not UTF-8")
    secret = home.root / "secret.txt"
    secret.write_text("TOP SECRET")
    os.symlink(secret, root / "bad" / "link" / "AGENTS.md")  # a cloned repo's link out of it
    os.symlink(root / "missing.md", root / "bad" / "link" / "dangling" / "AGENTS.md")
    (root / "bad" / "link" / "dangling" / "CLAUDE.md").write_text("NOT A FALLBACK for a broken AGENTS.md")
    home.init("")
    home.work = root / "bad" / "link" / "dangling"
    home.fake.script(text("ok"))
    run = home.run("hi", check=True)
    system = system_of(home.fake)
    [(label, shown)] = blocks(system)
    assert label == "AGENTS.md"
    kept, _, cut_line = shown.rpartition("\n")
    assert cut_line == "[cut: AGENTS.md is 71 KB; only its first 64 KB are shown]"
    assert big.startswith(kept) and 64 * 1024 - 4 < len(kept.encode()) <= 64 * 1024
    assert "TOP SECRET" not in system and "NOT A FALLBACK" not in system and "latin-1" not in system
    notices = [n for n in run.notices if n.startswith("instructions:")]
    assert notices[0] == "instructions: AGENTS.md is 71 KB; only its first 64 KB go to the model"
    assert notices[1] == "instructions: bad/AGENTS.md is not UTF-8 text: left out"
    assert notices[2].startswith("instructions: bad/link/AGENTS.md points outside the project")
    assert notices[3].startswith("instructions: cannot read bad/link/dangling/AGENTS.md")
    assert len(notices) == 4


def test_configure_turns_them_off_or_changes_the_names(home: Home) -> None:
    root = repo(home)
    (root / "sub").mkdir()
    (root / "AGENTS.md").write_text("root agents")
    (root / "RULES.md").write_text("root rules")
    (root / "sub" / "AGENTS.md").write_text("sub agents")
    (root / "sub" / "CLAUDE.md").write_text("sub claude")
    (home.config / "RULES.md").write_text("my rules")
    home.work = root / "sub"
    home.init('uji.context.configure({ instructions = { "RULES.md", "AGENTS.md" } })')
    home.fake.script(text("ok"), text("ok"), text("ok"))
    home.run("hi", check=True)
    assert blocks(system_of(home.fake)) == [
        ("~/.config/uji/RULES.md", "my rules"),
        ("RULES.md", "root rules"),
        ("sub/AGENTS.md", "sub agents"),
    ]
    home.init("uji.context.configure({ instructions = false, cache = 'long' })")
    home.run("hi", check=True)
    assert HEADER not in system_of(home.fake, 1) and "agents" not in system_of(home.fake, 1)
    home.init(
        "uji.context.configure({ instructions = false }); uji.context.configure({ instructions = true })"
    )
    home.run("hi", check=True)
    assert blocks(system_of(home.fake, 2)) == [("AGENTS.md", "root agents"), ("sub/AGENTS.md", "sub agents")]


def test_configure_names_the_bad_key(home: Home) -> None:
    home.init(
        """
        for _, bad in ipairs({ "AGENTS.md", { "docs/AGENTS.md" }, { 1 }, { "" }, { instructions = "x" } }) do
          local ok, err = pcall(uji.context.configure, { instructions = bad })
          uji.notify(tostring(ok) .. " " .. err)
        end
        """
    )
    home.fake.script(text("ok"))
    run = home.run("hi", check=True)
    errors = [n for n in run.notices if "uji.context.configure" in n]
    assert len(errors) == 5 and all(e.startswith("false ") for e in errors)
    assert "instructions must be a list of file names, or false, got str" in errors[0]
    assert "instructions must be plain file names such as AGENTS.md, got 'docs/AGENTS.md'" in errors[1]
    assert "got 1" in errors[2] and "got ''" in errors[3]
    assert "instructions must be a list of file names, or false, got dict" in errors[4]


def test_list_gives_every_part_of_the_prompt_with_its_size(home: Home) -> None:
    root = repo(home)
    (root / "sub").mkdir()
    (root / "AGENTS.md").write_text("Root rules. " * 10)
    (root / "sub" / "CLAUDE.md").write_text("Sub rules.")
    home.work = root / "sub"
    home.init(
        """
        uji.context.add("style", function() return string.rep("x", 40) end)
        uji.context.add("once", function() return { text = "The build is red.", at = "turn" } end, { priority = 1 })
        local function show(when)
          for _, p in ipairs(uji.context.parts()) do
            uji.notify(when .. " " .. uji.json.encode(p))
          end
        end
        show("config")
        uji.on("turn_finished", function() show("after") end)
        """
    )
    home.fake.script(text("ok", usage=None))  # no usage reported: the sizes stay characters / 4
    run = home.run("hi", check=True)
    rows: dict[str, list[dict[str, object]]] = {"config": [], "after": []}
    for n in run.notices:
        when, _, row = n.partition(" ")
        if when in rows:
            rows[when].append(json.loads(row))
    system = system_of(home.fake)
    base, _, _ = system.partition("\n\n" + HEADER)
    section = system[len(base) + 2 : system.index("\n\nxxxx")]
    tools = list(tool_schemas(home.fake.turn_requests[0].body).values())
    after = rows["after"]
    assert [(r["name"], r["kind"]) for r in after] == [
        ("base prompt", "base"),
        ("tools", "tools"),
        ("AGENTS.md", "instructions"),
        ("sub/CLAUDE.md", "instructions"),
        ("style", "context"),
        ("once", "context"),
        ("conversation", "conversation"),  # with the session open: "hi", the turn context, "ok"
    ]
    assert after[6] == {"name": "conversation", "kind": "conversation", "tokens": 1 + 5 + 1, "count": 3}
    assert after[0]["tokens"] == math.ceil(len(base) / 4)
    assert after[1]["count"] == len(tools) == 4
    assert after[1]["tokens"] == math.ceil(len(json.dumps(tools)) / 4)
    header, root_block, sub_block = section.split("\n\n")
    assert header == HEADER
    assert after[2]["tokens"] == math.ceil(len(f"{HEADER}\n\n{root_block}") / 4)
    assert after[2]["path"] == str(root / "AGENTS.md")
    assert after[3]["tokens"] == math.ceil(len(sub_block) / 4)
    assert after[4] == {"name": "style", "kind": "context", "tokens": 10, "at": "system"}
    assert after[5] == {"name": "once", "kind": "context", "tokens": math.ceil(17 / 4), "at": "turn"}
    # Before any turn: the files as they read now, the providers not run yet.
    assert rows["config"][:4] == after[:4]
    assert rows["config"][4:] == [
        {"name": "style", "kind": "context", "tokens": 0},
        {"name": "once", "kind": "context", "tokens": 0},
    ]


async def test_a_cut_is_told_once_per_change_of_the_file(tmp_path: Path, fake: FakeOpenAI) -> None:
    big = tmp_path / "AGENTS.md"
    big.write_text("y" * 100_000)
    app, agent, _ = await make_agent(tmp_path, fake)
    notices: list[str] = []
    app.set_notice_sink(notices.append)
    try:
        fake.script(text("1"), text("2"), text("3"))
        await agent.turn("one")
        await agent.turn("two")
        told = [n for n in notices if n.startswith("instructions:")]
        assert told == ["instructions: AGENTS.md is 98 KB; only its first 64 KB go to the model"]
        big.write_text("z" * 80_000)
        await agent.turn("three")
        told = [n for n in notices if n.startswith("instructions:")]
        assert told[1:] == ["instructions: AGENTS.md is 79 KB; only its first 64 KB go to the model"]
        assert "z" * 1000 in system_of(fake, 2) and "y" * 1000 not in system_of(fake, 2)
    finally:
        await app.close()


async def test_an_edit_counts_at_the_next_turn_and_context_shows_the_sizes(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    from tests.test_tui_support import SIZE, idle, make_app, ready, send, shows

    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").mkdir()
    agents = work / "AGENTS.md"
    agents.write_text("Indent with tabs.")
    fake.script(text("one", usage=None), text("two", usage=None))  # no usage: sizes stay characters / 4
    app = make_app(tmp_path, fake, 'uji.context.add("style", function() return string.rep("s", 400) end)')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "first")
        await idle(pilot)
        assert blocks(system_of(fake)) == [("AGENTS.md", "Indent with tabs.")]
        agents.write_text("Indent with four spaces, never tabs.")
        await send(pilot, "second")
        await idle(pilot)
        assert blocks(system_of(fake, 1)) == [("AGENTS.md", "Indent with four spaces, never tabs.")]
        await send(pilot, "/context")
        screen = await shows(pilot, "Context (tokens, estimated as characters / 4;")
        rows = {
            m.group(1): int(m.group(2).replace(",", ""))
            for m in re.finditer(
                r"^\W*(base prompt|tools \(4\)|AGENTS\.md|style|conversation|total)\s+([\d,]+)", screen, re.M
            )
        }
        assert set(rows) == {"base prompt", "tools (4)", "AGENTS.md", "style", "conversation", "total"}, (
            screen
        )
        assert rows["style"] == 100
        assert rows["conversation"] == 2 + 1 + 2 + 1  # "first", "one", "second", "two": characters / 4 each
        assert rows["total"] == sum(v for k, v in rows.items() if k != "total")
        assert re.search(r"AGENTS\.md\s+[\d,]+\s+instructions", screen)
