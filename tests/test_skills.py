"""The skills plugin (`require("uji.plugins.skills").setup{}`): each skill's name,
description and SKILL.md path in the system prompt the model receives, the body read
through a read_file call (the folders are read-only roots), project skills ignored until
approved for the project, and a malformed SKILL.md named in a notice and skipped."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from tests.conftest import Home, Run
from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import answerable, idle, make_app, ready, send, shows

SETUP = 'require("uji.plugins.skills").setup{}\n'


def skill(root: Path, folder: str, front: str, body: str = "") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(front).lstrip() + body)
    return path


def system(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] == "system")


def tool_contents(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


GREET = """
    ---
    name: greet
    description: "Greets people warmly: use when asked to say hello."
    license: MIT
    ---
    """


def test_a_skill_is_listed_in_the_prompt_and_its_body_read_with_read_file(home: Home) -> None:
    path = skill(home.config / "skills", "greet", GREET, "Always start with HELLO-THERE-42.\n")
    home.init(SETUP)
    home.fake.script(tool_call("read_file", {"path": str(path)}), text("hello"))
    run = home.run("say hello", check=True)
    prompt = system(home.fake.turn_requests[0].body)
    assert f"- greet: Greets people warmly: use when asked to say hello. ({path})" in prompt
    assert "HELLO-THERE-42" not in prompt  # the body costs tokens only when read
    [call] = run.calls
    assert (call["name"], call["decision"]) == ("read_file", "allow")
    assert "Always start with HELLO-THERE-42." in tool_contents(home.fake.turn_requests[1].body)[0]


def test_skill_folders_are_read_only_to_the_model(home: Home) -> None:
    path = skill(home.config / "skills", "greet", GREET, "body\n")
    home.init(SETUP)
    home.fake.script(tool_call("write_file", {"path": str(path), "content": "pwned"}), text("ok"))
    run = home.run("go", check=True)
    [call] = run.calls
    assert (call["decision"], call["by"]) == ("deny", "confine")
    assert path.read_text().endswith("body\n")


def test_a_malformed_skill_is_named_and_skipped(home: Home) -> None:
    skill(home.config / "skills", "greet", GREET)
    bad = skill(home.config / "skills", "bad", "no front matter here\n")
    nameless = skill(home.config / "skills", "nameless", "---\ndescription: x\n---\n")
    broken = skill(home.config / "skills", "broken", "---\nname: b\nthis is not a field\n---\n")
    home.init(SETUP)
    home.fake.script(text("ok"))
    run = home.run("go", check=True)
    notes = run.notices
    assert (
        f"skills: {bad}: it does not start with a `---` line (front matter with name and description); skipped"
        in notes
    )
    assert f"skills: {nameless}: the front matter has no `name`; skipped" in notes
    assert f"skills: {broken}: line 3 is not `key: value`; skipped" in notes
    prompt = system(home.fake.turn_requests[0].body)
    assert "- greet:" in prompt and "nameless" not in prompt and "- b:" not in prompt


def test_front_matter_forms_a_user_may_write(home: Home) -> None:
    skill(
        home.config / "skills",
        "folded",
        """
        ---
        # a comment
        name: 'folded'
        description: >
          Several lines
          joined into one.
        allowed-tools:
        - read_file
        metadata:
          version: 2
        ---
        """,
    )
    home.init(SETUP)
    home.fake.script(text("ok"))
    home.run("go", check=True)
    assert "- folded: Several lines joined into one. (" in system(home.fake.turn_requests[0].body)


def test_project_skills_are_ignored_until_approved(home: Home) -> None:
    (home.work / ".git").mkdir()
    project = skill(
        home.work / ".claude" / "skills",
        "proj",
        "---\nname: proj\ndescription: Project way.\n---\n",
        "PROJECT-BODY\n",
    )
    sub = home.work / "src"
    sub.mkdir()
    home.init(SETUP)

    def run_in_sub(*flags: str) -> Run:
        return home.uji("run", "--json", *flags, "go", cwd=sub)

    home.fake.script(tool_call("read_file", {"path": str(project)}), text("ok"))
    out = run_in_sub()
    assert "Use this project's skills?: not used, as it is not approved for this project" in out.stdout
    assert "- proj:" not in system(home.fake.turn_requests[0].body)
    # Not a read root either: the file is outside the working directory (src/).
    assert "outside the working directory" in tool_contents(home.fake.turn_requests[1].body)[0]

    home.fake.script(tool_call("read_file", {"path": str(project)}), text("ok"))
    out = run_in_sub("--trust-project")
    assert out.rc == 0, out.stderr
    assert f"- proj: Project way. ({project})" in system(home.fake.turn_requests[2].body)
    assert "PROJECT-BODY" in tool_contents(home.fake.turn_requests[3].body)[0]

    # Remembered; a changed skill asks again (so it is left out until then).
    home.fake.script(text("ok"))
    run_in_sub()
    assert "- proj:" in system(home.fake.turn_requests[4].body)
    project.write_text("---\nname: proj\ndescription: Now something else.\n---\n")
    home.fake.script(text("ok"))
    out = run_in_sub()
    assert "not approved for this project" in out.stdout
    assert "- proj:" not in system(home.fake.turn_requests[5].body)


def test_slash_skills_lists_them(home: Home) -> None:
    skill(home.config / "skills", "greet", GREET)
    home.init(SETUP)
    run = home.run("/skills", check=True)
    assert any(n.startswith("greet — Greets people warmly") for n in run.notices), run.notices


async def test_the_tui_asks_about_project_skills_and_uses_them_once_approved(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    work = tmp_path / "work"
    skill(work / ".agents" / "skills", "proj", "---\nname: proj\ndescription: Project way.\n---\n")
    app = make_app(tmp_path, fake, SETUP)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await answerable(pilot)
        screen = await shows(pilot, "Use this project's skills?")
        assert ".agents/skills/: proj" in screen
        await pilot.press("y")
        fake.script(text("ok"))
        await send(pilot, "hi")
        await idle(pilot)
    assert "- proj: Project way." in system(fake.turn_requests[-1].body)
    saved = json.loads((tmp_path / "data" / "trusted-projects.json").read_text())
    assert saved["projects"][str(work.resolve())]["skills"]["allowed"] is True
