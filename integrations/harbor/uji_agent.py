"""uji as a Harbor installed agent (`BaseInstalledAgent`), for Terminal-Bench 2.0 and
the other Harbor datasets. See README.md beside this file.

    harbor run -d terminal-bench@2.0 -m anthropic/claude-sonnet-4-5 \
        --agent-import-path integrations.harbor.uji_agent:Uji

install() uploads this checkout of uji into the task's container and installs it with
uv (which brings a Python 3.11 of its own); run() writes an init.lua that chooses the
job's model, runs `uji run --json` on the instruction, then `uji export --format atif`;
populate_context_post_run() reads the usage from the run's `done` line and checks the
trajectory against Harbor's own model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import override

from harbor.agents.capabilities import AgentCapabilities
from harbor.agents.installed.base import BaseInstalledAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext
from harbor.models.trajectories import Trajectory

from integrations.harbor.commands import (
    CONFIG_DIR,
    KEY_VARIABLES,
    REMOTE_SRC,
    REPO,
    UJI,
    init_lua,
    read_usage,
    run_script,
)


class Uji(BaseInstalledAgent):
    """uji (a coding agent for the terminal, shaped with Lua) run headless on each task."""

    capabilities = AgentCapabilities(atif=True, base_url=True)

    @staticmethod
    @override
    def name() -> str:
        return "uji"

    @override
    def get_version_command(self) -> str | None:
        return f"{UJI} --version"

    @override
    def parse_version(self, stdout: str) -> str:
        return stdout.strip().removeprefix("uji ").strip()

    @override
    async def install(self, environment: BaseEnvironment) -> None:
        await self.ensure_system_dependencies(environment, ("curl", "git"))
        await environment.upload_dir(REPO / "src", f"{REMOTE_SRC}/src")
        for name in ("pyproject.toml", "README.md"):
            await environment.upload_file(REPO / name, f"{REMOTE_SRC}/{name}")
        await self.exec_as_agent(
            environment,
            command=(
                "set -euo pipefail; "
                "command -v uv >/dev/null || curl -LsSf https://astral.sh/uv/install.sh | sh; "
                'export PATH="$HOME/.local/bin:$PATH"; '
                f"uv tool install --python 3.11 --force {REMOTE_SRC} && {UJI} --version"
            ),
        )

    @override
    async def run(self, instruction: str, environment: BaseEnvironment, context: AgentContext) -> None:
        base_url = getattr(self, "base_url", None) or os.environ.get("UJI_HARBOR_BASE_URL")
        await self.exec_as_root(environment, command=f"mkdir -p {CONFIG_DIR}")
        await self._upload_config_text(
            environment,
            content=init_lua(self.model_name, base_url),
            remote_path=f"{CONFIG_DIR}/init.lua",
            filename="init.lua",
        )
        env = {name: os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)}
        await self.exec_as_agent(
            environment, command=run_script(self.render_instruction(instruction)), env=env
        )

    @override
    def populate_context_post_run(self, context: AgentContext) -> None:
        done = read_usage(self.logs_dir / "uji.jsonl")
        if done is not None:
            usage = done.get("usage") or {}
            context.n_input_tokens = int(usage.get("input", 0)) + int(usage.get("cache_read", 0))
            context.n_cache_tokens = int(usage.get("cache_read", 0))
            context.n_output_tokens = int(usage.get("output", 0))
            if done.get("cost") is not None:
                context.cost_usd = float(done["cost"])
        trajectory = self.convert_trajectory(self.logs_dir)
        if trajectory is not None and trajectory.final_metrics is not None and context.cost_usd is None:
            context.cost_usd = trajectory.final_metrics.total_cost_usd

    @override
    def convert_trajectory(self, logs_dir: Path) -> Trajectory | None:
        """uji writes ATIF itself (`uji export --format atif`): read and check it."""
        path = logs_dir / "trajectory.json"
        if not path.exists():
            return None
        return Trajectory.model_validate_json(path.read_text())
