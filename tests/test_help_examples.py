"""Every `uji run` example that `uji --help` and `uji run --help` print, and every `uji`
command in the README's shell blocks, runs as written against the fake server (the
providers they name point at it) and gets its answer."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import text
from tests.test_images import png

# The providers the examples name, pointed at the fake.
PROVIDERS = """
uji.provider.add({{ id = "openai", name = "OpenAI", wire = "openai-chat", base_url = "{url}",
  models = {{ {{ id = "gpt-5-mini", reasoning = true, wire = "openai-chat" }} }} }})
uji.provider.add({{ id = "ollama", name = "Ollama", wire = "openai-chat", base_url = "{url}",
  models = {{ "qwen3" }} }})
"""


def examples(home: Home, *command: str) -> list[str]:
    shown = home.uji(*command, "--help")
    assert shown.rc == 0, shown.stderr
    block = shown.stdout.split("examples:", 1)[1].split("\n\n", 1)[0]
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
    return [line for line in lines if "uji run" in line]


README = Path(__file__).resolve().parent.parent / "README.md"


def readme_examples() -> list[str]:
    """The `uji` commands of the README's ```sh blocks, continued lines joined, comments
    cut; `./uji` (the checkout's script) is the installed `uji`."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip().replace("./uji ", "uji ")
            if re.search(r"(^|\| *)uji ", line):
                lines.append(line)
    return lines


def shell(home: Home) -> dict[str, str]:
    """The work directory with the files the examples name, and an environment whose
    PATH has `uji` and a stand-in `jq`."""
    home.init(PROVIDERS.format(url=home.fake.base_url))
    (home.work / "README.md").write_text("# a project\n")
    (home.work / "task.md").write_text("say hello\n")
    user = {"type": "user", "message": {"role": "user", "content": "say hello"}}
    (home.work / "messages.jsonl").write_text(json.dumps(user) + "\n")
    (home.work / "shot.png").write_bytes(png(4, 4))
    subprocess.run(["git", "init", "-q"], cwd=home.work, check=True)
    bin_dir = home.root / "bin"
    bin_dir.mkdir()
    (bin_dir / "uji").write_text(f'#!/bin/sh\nexec {sys.executable} -m uji "$@"\n')
    (bin_dir / "uji").chmod(0o755)
    (bin_dir / "jq").write_text("#!/bin/sh\nexec cat\n")  # the examples' jq: not what is tested
    (bin_dir / "jq").chmod(0o755)
    return home.env(OPENAI_API_KEY="test-key", PATH=f"{bin_dir}:{home.env()['PATH']}")


@pytest.mark.parametrize("command", [(), ("run",)])
def test_every_uji_run_example_in_the_help_runs(home: Home, command: tuple[str, ...]) -> None:
    env = shell(home)
    lines = examples(home, *command)
    assert lines
    for line in lines:
        home.fake.script(text("the answer"))
        done = subprocess.run(
            ["sh", "-c", line], cwd=home.work, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{line}\n{done.stderr}"
        assert "the answer" in done.stdout, f"{line}\n{done.stdout}\n{done.stderr}"


def test_every_uji_command_in_the_readme_runs(home: Home) -> None:
    env = shell(home)
    lines = readme_examples()
    assert len(lines) >= 12, lines
    assert home.fake is not None
    for line in lines:
        home.fake.script(text("the answer"))
        if " ID " in line:  # a session id, as `uji list` prints them
            listed = subprocess.run(
                ["uji", "list", "--runs", "--json"], cwd=home.work, env=env, capture_output=True, text=True
            )
            line = line.replace(" ID ", f" {json.loads(listed.stdout.splitlines()[0])['id']} ")
        done = subprocess.run(
            ["sh", "-c", line], cwd=home.work, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{line}\n{done.stderr}"
        if "uji run" in line:
            assert "the answer" in done.stdout, f"{line}\n{done.stdout}\n{done.stderr}"
        elif "-o " not in line:
            assert done.stdout.strip(), f"{line}\n{done.stderr}"
    assert (home.work / "s.html").read_text().startswith("<!")
