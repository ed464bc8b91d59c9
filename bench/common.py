"""What the bench scenarios share: a figure with its budget, and a harness that runs the
real `uji run --json` in a subprocess against a loopback fake model, timing it and
reading its peak RSS.

Not a test: nothing here fails a build; scenarios print figures and PASS/OVER.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _p in (str(ROOT), str(ROOT / "src")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

# A normal install has bytecode; this machine may set PYTHONDONTWRITEBYTECODE, which
# would make every start compile uji from source. Measure what users get.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

UJI = [sys.executable, "-m", "uji"]


@dataclass
class Figure:
    """One measured number. `budget` is the most it may be (same unit), None for a
    figure shown for information; `where` says where the budget comes from."""

    name: str
    value: float
    unit: str = "ms"
    budget: float | None = None
    where: str = ""
    note: str = ""

    @property
    def verdict(self) -> str:
        if self.budget is None:
            return ""
        return "PASS" if self.value <= self.budget else "OVER"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Figures:
    """What one scenario returns: its figures, and what went wrong (shown, not raised)."""

    items: list[Figure] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, name: str, value: float, unit: str = "ms", **kw: Any) -> Figure:
        f = Figure(name, value, unit, **kw)
        self.items.append(f)
        return f

    def check(self, ok: bool, problem: str) -> None:
        """A correctness check of what uji did (the figure is worthless if it failed)."""
        if not ok and problem not in self.problems:
            self.problems.append(problem)


def compile_src() -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False)


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


# --------------------------------------------------------------------------- a run


@dataclass
class Run:
    seconds: float
    rss_mib: float  # the child's peak resident set
    code: int
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0  # user + sys of the child and what it waited for

    @property
    def ms(self) -> float:
        return self.seconds * 1000

    @property
    def cpu_ms(self) -> float:
        return self.cpu_seconds * 1000

    def events(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stdout.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def done(self) -> dict[str, Any]:
        """The `done` event (an empty dict when there is none)."""
        for ev in reversed(self.events()):
            if isinstance(ev, dict) and ev.get("type") == "done":
                return dict(ev)
        return {}

    def why(self) -> str:
        """A short account of a failed run, for a problem line."""
        tail = (self.stderr.strip().splitlines() or [""])[-1][:200]
        return f"exit {self.code}: {tail}"


# The launcher: a small process that starts every measured child. A child's peak RSS
# from wait4 includes the memory of the process it was forked from (Linux records the
# forked mm's high-water mark at exec), so spawning from this bench process, whose fake
# server may hold a 15 MB request body, would add its size to uji's figure.
_LAUNCHER = r"""
import json, os, subprocess, sys, threading, time
for line in sys.stdin:
    job = json.loads(line)
    with open(job["out"], "wb") as out, open(job["err"], "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(job["cmd"], env=job["env"], cwd=job["cwd"], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err)
        killer = threading.Timer(job["timeout"], proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        elapsed = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    print(json.dumps([elapsed, usage.ru_maxrss / 1024, code, usage.ru_utime + usage.ru_stime]), flush=True)
"""
_launcher: subprocess.Popen[str] | None = None


def _launch(cmd: list[str], env: dict[str, str], cwd: str, timeout: float, out: str, err: str) -> list[Any]:
    global _launcher
    if _launcher is None or _launcher.poll() is not None:
        _launcher = subprocess.Popen(
            [sys.executable, "-I", "-c", _LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
    assert _launcher.stdin is not None and _launcher.stdout is not None
    job = {"cmd": cmd, "env": env, "cwd": cwd, "timeout": timeout, "out": out, "err": err}
    _launcher.stdin.write(json.dumps(job) + "\n")
    _launcher.stdin.flush()
    answer: list[Any] = json.loads(_launcher.stdout.readline())
    return answer


def spawn(cmd: list[str], *, env: dict[str, str], cwd: Path | str, timeout: float = 120.0) -> Run:
    """Run `cmd` from the launcher, timing it from spawn to exit, and take its peak RSS
    from wait4. Its output goes to files, so a large one costs the child nothing extra."""
    with tempfile.TemporaryDirectory(prefix="uji-bench-run-") as tmp:
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
        elapsed, rss, code, cpu = _launch(cmd, env, str(cwd), timeout, out, err)
        return Run(
            elapsed,
            rss,
            code,
            Path(out).read_bytes().decode("utf-8", "replace"),
            Path(err).read_bytes().decode("utf-8", "replace"),
            cpu,
        )


class Home:
    """A config dir, data dir and work dir of their own, with one provider "b" (model
    "m") at the fake's base URL on the given wire. Removed on exit."""

    def __init__(
        self, base_url: str, wire: str = "openai-chat", lua: str = "", parent: Path | None = None
    ) -> None:
        """`parent`: the folder it is made in (the temporary folder when None)."""
        self.root = Path(tempfile.mkdtemp(prefix="uji-bench-", dir=parent))
        self.cfg = self.root / "cfg"
        self.data = self.root / "data"
        self.work = self.root / "work"
        for d in (self.cfg, self.data, self.work):
            d.mkdir()
        provider = f'id = "b", name = "B", wire = "{wire}", base_url = "{base_url}"'
        (self.cfg / "init.lua").write_text(
            f'uji.provider.add({{ {provider}, models = {{ {{ id = "m", context = 1000000000 }} }} }})\n'
            'uji.model.use({ provider = "b", model = "m" })\n' + lua
        )
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
        self.env.update(
            UJI_CONFIG_DIR=str(self.cfg),
            UJI_DATA_DIR=str(self.data),
            HOME=str(self.root),
            UJI_PROBE_PORTS="",
        )

    def run(self, *args: str, timeout: float = 120.0) -> Run:
        return spawn([*UJI, *args], env=self.env, cwd=self.work, timeout=timeout)

    def __enter__(self) -> Home:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def fill(store: Any, sid: str, n: int, compact_every: int | None = None) -> None:
    """n messages into session `sid` of a uji Store, in one transaction through the
    store's own insert: per four, a user message, an assistant step with a read_file
    call, its result, and a markdown reply. With `compact_every`, a compaction row after
    every that many messages, folding all but the last 100 (as a long session compacts)."""
    from uji.store.sessions import now_ms

    body = "\n".join(f"{k}: line {k}" for k in range(1, 12))
    turn_ends: list[int] = []  # seqs of the replies that end a turn
    with store._write() as w:
        for i in range(n):
            k = i % 4
            if k == 0:
                m: dict[str, Any] = {"type": "user", "text": f"question {i}: what does load() do?"}
            elif k == 1:
                c = {"id": f"c{i}", "name": "read_file", "arguments": '{"path": "src/app.py"}'}
                m = {"type": "assistant", "text": "", "tool_calls": [c]}
            elif k == 2:
                m = {"type": "tool", "tool_call_id": f"c{i - 1}", "name": "read_file", "content": body}
            else:
                m = {"type": "assistant", "text": f"answer {i}: it reads the **whole** file first."}
            mtype, data = store._split(m)
            seq = store._insert(w, sid, mtype, data, now_ms())
            if k == 3:
                turn_ends.append(seq)
            if compact_every and (i + 1) % compact_every == 0 and len(turn_ends) > 25:
                summary = {
                    "summary": f"## Goal\nsummary up to message {i}",
                    "through": turn_ends[-26],
                    "files": [],
                }
                store._insert(
                    w, sid, "compaction", store._split({"type": "compaction", **summary})[1], now_ms()
                )


def self_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
