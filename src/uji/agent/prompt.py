"""The system prompt. It is paid on every request: keep it short."""

from __future__ import annotations

import os
import sys

BASE = """You are uji, a coding agent in the user's terminal. You work in {cwd} on {os}.
Use the tools to look before you change anything: read a file before editing it, and run commands to check your work.
Make the smallest change that does the job. Keep answers short and concrete; say what you changed and what you could not do."""


def system_prompt(cwd: str) -> str:
    return BASE.format(cwd=cwd, os=_os_name())


def _os_name() -> str:
    """What `platform.system()` says, without importing `platform` on every run."""
    if sys.platform == "win32":
        return "Windows"
    return os.uname().sysname or "an unknown OS"
