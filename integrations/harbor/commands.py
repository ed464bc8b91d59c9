"""What the Harbor adapter (uji_agent.py) runs, kept free of Harbor's imports so that
uji's own tests (Python 3.11; Harbor needs 3.12+) run these very commands."""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]  # the uji checkout this file is in
REMOTE_SRC = "/installed-agent/uji-src"
UJI = "$HOME/.local/bin/uji"
LOGS = "/logs/agent"
CONFIG_DIR = "/installed-agent/uji-config"
# The keys uji's providers read, passed on from Harbor's environment when set.
KEY_VARIABLES = (
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "XAI_API_KEY",
)


def init_lua(model_name: str | None, base_url: str | None = None) -> str:
    """The init.lua of a job: its model chosen (with base_url, as an OpenAI-compatible
    provider of that name). Calls that would ask are allowed: `uji run` has nobody to
    ask, and the container is the sandbox."""
    lines = ["-- written by integrations/harbor/uji_agent.py for one Harbor job"]
    if model_name:
        provider, _, model = model_name.partition("/")
        if not model:
            raise ValueError(f"model name must be PROVIDER/MODEL, got {model_name!r}")
        if base_url:
            lines.append(
                f'uji.provider.add({{ id = {json.dumps(provider)}, name = {json.dumps(provider)}, wire = "openai-chat", '
                f"base_url = {json.dumps(base_url)}, models = {{ {{ id = {json.dumps(model)} }} }} }})"
            )
        lines.append(f"uji.model.use({{ provider = {json.dumps(provider)}, model = {json.dumps(model)} }})")
    return "\n".join(lines) + "\n"


def run_script(instruction: str, uji: str = UJI, config_dir: str = CONFIG_DIR, logs: str = LOGS) -> str:
    """The shell line that runs one task: the instruction goes through stdin (base64, so
    no quoting can break it); the JSON events, uji's stderr and the ATIF trajectory land
    in `logs`."""
    encoded = base64.b64encode(instruction.encode()).decode()
    uji = f"{uji} --config-dir {shlex.quote(config_dir)}"
    return (
        f"mkdir -p {logs}; "
        f"printf %s {shlex.quote(encoded)} | base64 -d "
        f"| {uji} run --json --trust-project --title harbor - "
        f"> {logs}/uji.jsonl 2> {logs}/uji.stderr; code=$?; "
        f"{uji} export --format atif -o {logs}/trajectory.json 2>> {logs}/uji.stderr; "
        "exit $code"
    )


def read_usage(events_path: Path) -> dict[str, Any] | None:
    """The `done` line of `uji run --json` (its usage and cost), if the run got there."""
    if not events_path.exists():
        return None
    done = None
    for line in events_path.read_text().splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(event, dict) and event.get("type") == "done":
            done = event
    return done
