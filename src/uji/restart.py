"""What one run of uji hands the next: `uji.os.restart{args, roots, carry}`, `uji.os.exit`'s
status, and `<data>/overrides.json`, the packs that replace uji's own modules.

A restart without `args` starts the App again in this process (a fresh Lua; the screen
keeps its session and draft). With `args`, once the frontend has closed, the process is
replaced by `uji ARGS` (exec), the carry and roots handed over in the environment, which
the new process reads and clears at its start. `roots` are folders whose `lua/` and
`native/` come before uji's own Lua in the next run; the override packs are such roots,
remembered in overrides.json so that they apply from boot.
"""

from __future__ import annotations

import json
import os
import sys

from uji.record import Struct, field

CARRY_VAR = "UJI_CARRY"  # uji.os.carry as JSON, for the process a restart execs
ROOTS_VAR = "UJI_ROOTS"  # the roots, joined with os.pathsep
COUNT_VAR = "UJI_RESTARTS"  # restarts in a row, so a config that always restarts stops
MAX_RESTARTS = 8
OVERRIDES = "overrides.json"
# A pack with one of these replaces modules of uji itself (`uji.*`, `uji.sys.*`).
OVERRIDE_DIRS = (os.path.join("lua", "uji"), os.path.join("native", "uji"))


class Handover(Struct):
    """What a run starts with."""

    carry: str | None = None  # uji.os.carry as JSON text
    roots: list[str] = field(default_factory=list)
    count: int = 0  # restarts before this run
    overrides: bool = False  # this run is the one-time restart for new override packs


class Restart(Struct):
    """A restart asked for (uji.os.restart, or new override packs)."""

    handover: Handover
    args: list[str] | None = None  # the next command line: exec; None: in this process


_started: Handover | None = None
_exit_code: int | None = None


def at_start() -> Handover:
    """The handover of the process that exec'd this one (once; its variables are cleared
    so that nothing this run starts inherits them)."""
    global _started
    if _started is None:
        roots = os.environ.pop(ROOTS_VAR, "")
        count = os.environ.pop(COUNT_VAR, "0")
        _started = Handover(
            carry=os.environ.pop(CARRY_VAR, None),
            roots=[r for r in roots.split(os.pathsep) if r],
            count=int(count) if count.isdigit() else 0,
        )
        return _started
    return Handover()


def next_run(after: Handover, carry: str | None, roots: list[str], overrides: bool = False) -> Handover:
    return Handover(carry=carry, roots=roots, count=after.count + 1, overrides=overrides)


def too_many(handover: Handover) -> bool:
    return handover.count >= MAX_RESTARTS


def exec_into(restart: Restart) -> None:
    """Replace this process with `uji ARGS` (does not return); the frontend has closed
    and flushed what Lua wrote (uji.lua.runtime.flush_c_stdio)."""
    assert restart.args is not None
    env = dict(os.environ)
    env.pop(CARRY_VAR, None)
    if restart.handover.carry is not None:
        env[CARRY_VAR] = restart.handover.carry
    env[ROOTS_VAR] = os.pathsep.join(restart.handover.roots)
    env[COUNT_VAR] = str(restart.handover.count)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, "-m", "uji", *restart.args], env)


def set_exit_code(code: int) -> None:
    """uji.os.exit(code): the status uji exits with."""
    global _exit_code
    _exit_code = code


def exit_code(default: int) -> int:
    """The status uji.os.exit asked for (once), else `default`."""
    global _exit_code
    code, _exit_code = _exit_code, None
    return default if code is None else code


# overrides.json ----------------------------------------------------------------------


def overrides_path(data: str) -> str:
    return os.path.join(data, OVERRIDES)


def is_override(root: str) -> bool:
    return any(os.path.isdir(os.path.join(root, d)) for d in OVERRIDE_DIRS)


def read_overrides(data: str) -> list[str]:
    """The override packs remembered last time that still exist (a damaged file: none)."""
    try:
        with open(overrides_path(data), encoding="utf-8") as f:
            listed = json.load(f)
    except (OSError, ValueError):
        return []
    if not isinstance(listed, list):
        return []
    return [r for r in listed if isinstance(r, str) and is_override(r)]


def write_overrides(data: str, roots: list[str]) -> None:
    os.makedirs(data, exist_ok=True)
    path = overrides_path(data)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(roots, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
