"""A uji process's own temporary folders, `<tmp>/<prefix><pid>-<random>` (its callers make
one per process and kind, and keep it), removed when it exits; those a uji left behind
when it was killed (its pid gone) are removed by the next uji that makes one of the same
kind.

Left there, they would pile up in the temporary folder, and each one costs every later
sandboxed command a rule: the sandbox grants the temporary folder entry by entry when a
place it keeps commands out of lies in it (uji.sandbox.policy: Landlock cannot deny).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import stat
import tempfile

MAX_SWEPT = 10_000  # entries of the temporary folder looked at, at most


def make(prefix: str) -> str:
    """A new folder `<tmp>/<prefix><pid>-<random>`, removed at exit, after removing this
    user's `<prefix><pid>-*` folders whose process is gone."""
    sweep(prefix)
    path = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")
    atexit.register(shutil.rmtree, path, True)
    return path


def sweep(prefix: str) -> None:
    """Remove this user's `<prefix><pid>-*` folders (never links) whose process is gone."""
    try:
        with os.scandir(tempfile.gettempdir()) as entries:
            # The prefix first: the temporary folder may hold thousands of other entries.
            names = [
                (e.name, e.path)
                for _, e in zip(range(MAX_SWEPT), entries, strict=False)
                if e.name.startswith(prefix)
            ]
    except OSError:
        return
    for name, path in names:
        pid = name[len(prefix) :].split("-", 1)[0]
        if not (pid.isascii() and pid.isdigit()) or alive(int(pid)):  # as a pid is spelled
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)


def alive(pid: int) -> bool:
    """Whether `pid` may be a living process: what is not known gone counts as alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    except OverflowError:
        return True  # no pid is that large: a name anyone may give a folder, not ours
    return True
