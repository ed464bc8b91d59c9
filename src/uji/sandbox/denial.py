"""Telling the model plainly when the sandbox stopped a command.

The kernel answers a denied open with EACCES, which a program prints as a bare
"Permission denied"; nothing says the sandbox did it. When a sandboxed command fails and
its output has such a line, uji adds one of its own: which place was refused and why,
judged by the policy (the path the program printed, when it printed one)."""

from __future__ import annotations

import os
import re

from uji.sandbox.policy import SandboxPolicy, home_short, inside

MARKERS = ("Permission denied", "Operation not permitted", "Read-only file system")
# A path as programs print it around the error: 'x', "x", `x', or `prog: x: Permission denied`.
_QUOTED = re.compile(r"""['"‘`]([^'"’`\n]+)['"’]""")
_COLON = re.compile(
    r"(?:^|:\s)([^:\n]+):\s+(?:Permission denied|Operation not permitted|Read-only file system)"
)


def note(policy: SandboxPolicy | None, code: int, output: str, cwd: str) -> str | None:
    """The line that explains a failure the sandbox likely caused, or None."""
    if policy is None or code == 0:
        return None
    lines = [line for line in output.splitlines()[-200:] if any(m in line for m in MARKERS)]
    if not lines:
        return None
    for line in lines:
        for path in _paths(line):
            reason = _why(policy, os.path.realpath(os.path.join(cwd, os.path.expanduser(path))))
            if reason:
                return f"blocked by the sandbox: {reason} ({path})"
    if not policy.network and any("connect" in line.lower() or "socket" in line.lower() for line in lines):
        return "blocked by the sandbox: the network is off for commands (uji.sandbox.configure{ network = true })"
    return f"this looks blocked by the sandbox: {policy.describe()}"


def _paths(line: str) -> list[str]:
    return [p for p in _QUOTED.findall(line) + [m.strip() for m in _COLON.findall(line)] if p]


def _why(policy: SandboxPolicy, real: str) -> str | None:
    for denied in policy.deny:
        if inside(real, denied):
            return f"commands may not read or write {home_short(denied)}"
    if any(inside(real, w) for w in policy.writable):
        return None
    if policy.mode == "read-only":
        return "commands may not write anywhere in read-only mode"
    return "writing outside the working directory and the roots is not allowed"
