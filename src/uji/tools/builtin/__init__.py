"""The four built-in tools, registered like any other tool: each module has its SPEC,
its `run(args, ctx)` (and a `preview(args, sandbox)` for the writing tools) and the
`Tool` class that offers them to the agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.tools.base import Tool
    from uji.tools.builtin.tool import SandboxFactory
    from uji.tools.confine import Sandbox


def builtin_tools(sandbox: SandboxFactory | None = None) -> list[Tool]:
    """read_file, edit_file, write_file and run_command. `sandbox` gives the file tools'
    previews the sandbox of the moment (by default: the working directory, confined)."""
    from uji.tools.builtin import edit_file, read_file, run_command, write_file

    if sandbox is None:
        sandbox = _here
    return [
        read_file.ReadFile(sandbox),
        edit_file.EditFile(sandbox),
        write_file.WriteFile(sandbox),
        run_command.RunCommand(sandbox),
    ]


def _here() -> Sandbox:
    import os

    from uji.tools.confine import Sandbox

    return Sandbox(os.getcwd(), [])
