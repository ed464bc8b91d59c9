"""The Harbor adapter (integrations/harbor): the very shell line it runs in a task's
container, run here with the real `uji` against the fake model, then what it leaves
(the JSON events, the ATIF trajectory) read back by the adapter's own class in Harbor's
Python 3.12 environment when there is one (tests/harbor_check.py). What cannot run
here: Harbor's containers (install() and a real Terminal-Bench job)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from integrations.harbor.commands import init_lua, read_usage, run_script

from tests.conftest import Home
from tests.fakes.openai_server import text, tool_call
from tests.harbor_check import ROOT, harbor_python, validate_trajectory

INSTRUCTION = "Fix the 'bug' in $HOME/app.py; don't `rm` anything.\nThen say done."

POPULATE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.models.agent.context import AgentContext
from integrations.harbor.uji_agent import Uji
agent = Uji(logs_dir=Path(sys.argv[2]), model_name="test/m")
assert isinstance(agent, BaseInstalledAgent)
context = AgentContext()
agent.populate_context_post_run(context)
trajectory = agent.convert_trajectory(Path(sys.argv[2]))
print(json.dumps({"name": agent.name(), "context": context.model_dump(mode="json"),
                  "steps": len(trajectory.steps)}))
"""


@pytest.mark.timeout(400)
def test_the_adapter_runs_uji_and_harbor_reads_back_its_usage_and_trajectory(home: Home) -> None:
    assert home.fake is not None
    home.fake.script(tool_call("read_file", {"path": "app.py"}, id="c1"), text("done"))
    (home.work / "app.py").write_text("print('bug')\n")
    config = home.root / "harbor-config"
    config.mkdir()
    (config / "init.lua").write_text(init_lua("test/m", home.fake.base_url))
    logs = home.root / "logs"
    uji = " ".join(shlex.quote(x) for x in (sys.executable, "-m", "uji"))
    script = run_script(INSTRUCTION, uji=uji, config_dir=str(config), logs=str(logs))
    proc = subprocess.run(
        ["bash", "-c", script], cwd=home.work, env=home.env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, (
        (logs / "uji.stderr").read_text() if (logs / "uji.stderr").exists() else proc.stderr
    )
    assert home.fake.turn_requests[0].body["messages"][-1] == {"role": "user", "content": INSTRUCTION}
    done = read_usage(logs / "uji.jsonl")
    assert done is not None and done["text"] == "done"
    trajectory = (logs / "trajectory.json").read_text()
    steps = json.loads(trajectory)["steps"]
    assert steps[0] == {"step_id": 1, "source": "user", "message": INSTRUCTION}
    assert steps[1]["tool_calls"][0]["function_name"] == "read_file"
    validate_trajectory(trajectory)
    python = harbor_python()
    if python is None:
        print("Harbor is not installed here: the adapter's class was not run")
        return
    # LiteLLM, which Harbor imports, would fetch its price list from the network.
    env = {**home.env(), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run(
        [str(python), "-c", POPULATE, str(ROOT), str(logs)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    read = json.loads(out.stdout.strip().splitlines()[-1])
    assert read["name"] == "uji" and read["steps"] == len(steps)
    usage = done["usage"]
    assert read["context"]["n_input_tokens"] == usage["input"] + usage["cache_read"]
    assert read["context"]["n_output_tokens"] == usage["output"]


def test_init_lua_chooses_the_job_s_model() -> None:
    assert 'uji.model.use({ provider = "anthropic", model = "claude-sonnet-4-5" })' in init_lua(
        "anthropic/claude-sonnet-4-5"
    )
    try:
        init_lua("no-slash")
    except ValueError as e:
        assert "PROVIDER/MODEL" in str(e)
    else:
        raise AssertionError("a model name without a provider was taken")
