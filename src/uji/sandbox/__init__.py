"""The OS sandbox: the kernel's line under every process uji starts for the model.

The gate's parser decides first and cannot see through everything bash does after
parsing (`${IFS}`, brace expansion, `eval`...). Whatever it lets through still runs
under Linux Landlock (`spawn.py`): reads everywhere but a deny list of secret places,
writes only the working directory, the roots and a private temporary folder, the
network unless configured off (`policy.py`). `uji sandbox -- CMD` runs one command
under the same code (`uji.sandbox_cli`).

A child `uji run` started for a subagent gets its parent's settings in UJI_SANDBOX_PARENT
and never runs laxer than them.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os

from uji.record import Record
from uji.sandbox.policy import MODES, Mode, SandboxPolicy, SandboxSettings

__all__ = ["SandboxPolicy", "SandboxSettings", "SandboxStatus", "current", "private_tmpdir", "status"]

FLOOR_ENV = "UJI_SANDBOX_PARENT"
PRIVATE_TMPDIR_PREFIX = "uji-sandbox-"

# The sandbox of the tool call running now: processes a Lua tool starts while it runs
# (uji.job.start) are put in it. Set by the agent around each call.
current: contextvars.ContextVar[SandboxPolicy | None] = contextvars.ContextVar("uji_sandbox", default=None)


class SandboxStatus(Record):
    mode: Mode
    available: bool  # commands really run sandboxed (mode is not off and the kernel can)
    reason: str  # why not, or what the kernel offers


def status(settings: SandboxSettings) -> SandboxStatus:
    from uji.sandbox import landlock

    if settings.mode == "off":
        return SandboxStatus("off", False, "the sandbox is off (uji.sandbox.configure{ mode = ... })")
    why = landlock.missing(settings.network)
    if why is not None:
        return SandboxStatus(settings.mode, False, why)
    return SandboxStatus(settings.mode, True, f"Landlock ABI {landlock.abi_version()}")


@functools.cache
def private_tmpdir() -> str:
    """This uji's temporary folder for sandboxed commands (their TMPDIR), removed at exit;
    those of a uji that was killed go when the next one makes its own."""
    from uji import private_dirs

    return private_dirs.make(PRIVATE_TMPDIR_PREFIX)


def floor_env(settings: SandboxSettings, cwd: str) -> str:
    """The settings a child uji must not loosen, as UJI_SANDBOX_PARENT's value."""
    from uji.sandbox.policy import expand

    return json.dumps(
        {
            "mode": settings.mode,
            "network": settings.network,
            "writable": [expand(p, cwd) for p in settings.writable],
            "deny_read": [expand(p, cwd) for p in settings.deny_read],
        }
    )


def floor_from_env(environ: dict[str, str] | None = None) -> SandboxSettings | None:
    """The parent's settings, when this uji was started for a subagent. A value that
    cannot be read is the strictest sandbox, not none."""
    raw = (os.environ if environ is None else environ).get(FLOOR_ENV)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        mode = data["mode"]
        if mode not in MODES:
            raise ValueError(mode)
        return SandboxSettings(
            mode=mode,
            network=bool(data.get("network", True)),
            writable=[str(p) for p in data.get("writable", [])],
            deny_read=[str(p) for p in data.get("deny_read", [])],
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return SandboxSettings(mode="read-only", network=False)
