"""The reaper: nothing a background job started outlives uji, even a uji killed with -9.

uji starts this file as a tiny process of its own (`python -I -S reaper.py`, in its own
session, so a Ctrl+C or a hang-up meant for uji's terminal does not reach it), the first
time a command may outlive its tool call. uji holds the write end of the reaper's stdin
and tells it each process group it starts ("+PGID") and each one that is over ("-PGID").
When that pipe reaches end of file, uji is gone, however it ended (the kernel closes a
killed process's files): the reaper sends SIGKILL to every group it was told of, and
exits. PR_SET_PDEATHSIG would reach only the direct children; a group reaches the
grandchildren too, as long as they stay in it (a process that makes its own session with
setsid leaves it).

The file runs as a script with only the standard library, so it starts fast. The class
`Reaper` is uji's side.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any


def main() -> None:
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTSTP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    groups: set[int] = set()
    stdin = sys.stdin.buffer
    for raw in iter(stdin.readline, b""):  # ends at EOF: uji has exited
        line = raw.strip()
        if len(line) < 2 or not line[1:].isdigit():
            continue
        pgid = int(line[1:])
        if line[:1] == b"+":
            groups.add(pgid)
        elif line[:1] == b"-":
            groups.discard(pgid)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass


class Reaper:
    """uji's side: starts the reaper on the first `watch` and tells it the groups."""

    def __init__(self) -> None:
        self._fd: int | None = None
        self._pid: int | None = None
        self._proc: Any = None  # the Popen, kept so that it is not reaped while it runs
        self._failed = False

    def watch(self, pgid: int) -> None:
        self._send(f"+{pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        """The reaper's process id, once started."""
        return self._pid

    def _send(self, line: str) -> None:
        fd = self._start()
        if fd is None:
            return
        try:
            os.write(fd, line.encode())
        except OSError:  # the reaper is gone; the groups are still killed at close
            self._failed = True
            self.close()

    def _start(self) -> int | None:
        if self._fd is not None or self._failed:
            return self._fd
        import subprocess

        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,
            )
        except OSError:
            self._failed = True
            return None
        assert proc.stdin is not None
        self._pid, self._proc = proc.pid, proc
        # Our end must not leak into the commands we start: Python's pipes are not
        # inheritable, and the commands are started with close_fds.
        self._fd = os.dup(proc.stdin.fileno())
        os.set_inheritable(self._fd, False)
        proc.stdin.close()
        return self._fd

    def close(self) -> None:
        """uji is closing: end of file for the reaper, which kills what is left."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass


if __name__ == "__main__":
    main()
