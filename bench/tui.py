"""Terminal UI figures, printed; run by hand: `python bench/tui.py`.

- time to first frame: the real `uji` spawned in a pseudo-terminal, until the screen
  shows the composer (median of several starts; target under 250 ms): the frame painted
  before Textual loads (uji.early_frame, from the frame the start before kept), and
  Textual's own first frame, from which keys typed are read (typed earlier, they wait);
- key-press-to-screen: a key (and a backspace) in the composer over a 500-message
  session, from the key event to the screen update rendered for the terminal
  (target under 16 ms);
- a streamed 1,500-token markdown reply: per delta and in total, over loopback HTTP
  from the fake server, and fed straight to the transcript (also while a config replaced
  two of its markdown block views).
"""

from __future__ import annotations

import asyncio
import os
import pty
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.conftest import PROVIDER_LUA  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, text  # noqa: E402
from tests.test_tui_support import idle, make_app, ready, send  # noqa: E402
from textual import events  # noqa: E402

from uji.tui.live import LiveAnswer  # noqa: E402

# A normal install has bytecode; measure what users get.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False)

# The composer's placeholder: the first frame is up. (Its first letter carries the
# cursor, so it comes in a separate styled run.)
MARKER = "essage uji — Enter sends".encode()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


# Time to first frame -------------------------------------------------------------------


def first_frame(
    runs: int = 7, cpu: list[float] | None = None, textual: list[tuple[float, float]] | None = None
) -> list[float]:
    """Seconds from spawning the real `uji` in a pty to its first frame, per start (after
    one start that keeps the frame painted early). With `cpu`, the CPU time (user +
    system) the process had used by then is appended to it for each start: on a loaded
    machine wall time mostly measures the queue for a core. With `textual`, the same two
    figures for Textual's own first frame, drawn again over the early one."""
    samples = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        home = Path(tmp)
        config = home / ".config" / "uji"
        config.mkdir(parents=True)
        (config / "init.lua").write_text(PROVIDER_LUA.format(base_url=fake.base_url))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
        env.update(HOME=tmp, TERM="xterm-256color", COLUMNS="120", LINES="40")
        _spawn_until_painted(env, tmp)  # keeps the first frame for the next starts
        for _ in range(runs):
            wall, used = _spawn_until_painted(env, tmp)
            samples.append(wall)
            if cpu is not None:
                cpu.append(used)
            if textual is not None:
                textual.append(_spawn_until_painted(env, tmp, times=2))
    return samples


def codex_first_frame(runs: int = 7, cpu: list[float] | None = None) -> list[float]:
    """The same for native Codex's TUI (from bench/peers.py's npm install, with its
    opt-out switches and the fake provider), until its composer shows; [] without it."""
    from bench.peers import CACHE, CODEX_SWITCHES, codex_binary

    codex = codex_binary()
    if codex is None:
        return []
    samples = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        home = CACHE / "home-codex-tui"  # not under /tmp: codex refuses helper links there
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            'model = "gpt-5-fake"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
            f'base_url = "{fake.base_url}"\nwire_api = "responses"\nenv_key = "FAKE_API_KEY"\n'
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CODEX_", "OPENAI_"))}
        env.update(HOME=tmp, CODEX_HOME=str(home), FAKE_API_KEY="fake", TERM="xterm-256color")
        for _ in range(runs):
            wall, used = _spawn_until_painted(env, tmp, [codex, *CODEX_SWITCHES], b"Ask Codex")
            samples.append(wall)
            if cpu is not None:
                cpu.append(used)
    return samples


def _cpu_seconds(pid: int) -> float:
    """The CPU time process `pid` has used so far, over all its threads: from each
    thread's schedstat (nanoseconds), else from /proc/PID/stat (user + system, in clock
    ticks of 10 ms, too coarse to compare two starts)."""
    try:
        return (
            sum(int((t / "schedstat").read_text().split()[0]) for t in Path(f"/proc/{pid}/task").iterdir())
            / 1e9
        )
    except (OSError, ValueError, IndexError):
        pass
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spawn_until_painted(
    env: dict[str, str], cwd: str, argv: list[str] | None = None, marker: bytes = MARKER, times: int = 1
) -> tuple[float, float]:
    """Spawn `argv` (uji by default) in a pty until `marker` has shown `times` times:
    (seconds, CPU seconds by then). A cursor-position query is answered as a terminal
    would (Codex waits on it)."""
    argv = argv or [sys.executable, "-m", "uji"]
    started = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the real command, in a terminal of its own
        os.chdir(cwd)
        os.execve(argv[0], argv, env)
    seen = b""
    painted = None
    cpu = float("nan")
    try:
        _set_size(fd, 40, 120)
        while painted is None and time.perf_counter() - started < 10:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    got = os.read(fd, 65536)
                except OSError:
                    break
                seen += got
                for _ in range(got.count(b"\x1b[6n")):
                    os.write(fd, b"\x1b[1;1R")
                if seen.count(marker) >= times:
                    painted = time.perf_counter() - started
                    cpu = _cpu_seconds(pid)
        os.write(fd, b"\x03")  # Ctrl+C quits
        deadline = time.perf_counter() + 5
        while time.perf_counter() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            with _suppress():
                if select.select([fd], [], [], 0.05)[0]:
                    os.read(fd, 65536)
        else:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    finally:
        os.close(fd)
    if painted is None:
        raise RuntimeError(f"no first frame within 10 s; the terminal showed: {seen[-500:]!r}")
    return painted, cpu


def _set_size(fd: int, rows: int, cols: int) -> None:
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


# Key press to screen -------------------------------------------------------------------

REPLY = """Here is what I found in **`src/app.py`**:

1. The handler reads the *whole* file before it checks the size.
2. Errors are swallowed in `load()`.

```python
def load(path):
    with open(path) as f:
        return f.read()
```

> Reading lazily would fix both.
"""


def fill_session(app: Any, turns: int = 125) -> str:
    """500 messages: per turn a user message, an assistant step with a call, its result,
    and a markdown reply."""
    uji = app.conversation.app
    store = uji.store
    sid = store.create_session(uji.cwd, "bench")
    for i in range(turns):
        store.append(sid, {"type": "user", "text": f"question {i}: what does load() do?"})
        call = {"id": f"c{i}", "name": "read_file", "arguments": '{"path": "src/app.py"}'}
        store.append(sid, {"type": "assistant", "text": "", "tool_calls": [call]})
        body = "\n".join(f"{n}: line {n}" for n in range(1, 40))
        store.append(
            sid,
            {
                "type": "tool",
                "tool_call_id": f"c{i}",
                "name": "read_file",
                "content": body,
                "summary": "Read 39 lines",
            },
        )
        store.append(sid, {"type": "assistant", "text": REPLY})
    return sid


async def key_latency(messages: int, keys: int = 200, cpu: list[float] | None = None) -> list[float]:
    """Seconds from each key (alternately "a" and Backspace) to the frame showing it,
    over a session of `messages` messages (a multiple of 4; 0: an empty one). With `cpu`,
    the CPU time of each is appended to it."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        app = make_app(Path(tmp), fake)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            if messages:
                sid = fill_session(app, turns=messages // 4)
                app.conversation.resume(sid)
                await pilot.pause(0.5)
            painted = asyncio.Event()
            original = app._display

            def display(screen: Any, renderable: Any) -> None:
                if renderable is not None:
                    renderable.render_segments(app.console)  # the bytes a terminal would get
                    painted.set()
                original(screen, renderable)

            app._display = display  # type: ignore[method-assign]
            samples = []
            for i in range(keys):
                key = events.Key("a", "a") if i % 2 == 0 else events.Key("backspace", None)
                painted.clear()
                t0, c0 = time.perf_counter(), time.process_time()
                app.post_message(key)  # as the terminal driver does
                await asyncio.wait_for(painted.wait(), 2)
                samples.append(time.perf_counter() - t0)
                if cpu is not None:
                    cpu.append(time.process_time() - c0)
                await asyncio.sleep(0.01)  # a fast typist: 100 keys a second
            return samples


# A streamed markdown reply ------------------------------------------------------------

BLOCK = """## Step {n}: tidy the loader

The loader in `src/app.py` reads **everything** up front; we make it *lazy*:

- open the file once, and [read](https://example.com) in chunks
- keep `load()` small, with the error handling in one place

```python
def load(path: str, size: int = 65536) -> Iterator[bytes]:
    with open(path, "rb") as f:
        while chunk := f.read(size):
            yield chunk
```

| before | after |
|--------|-------|
| 1 read | n reads |

"""


def markdown_reply(tokens: int = 1500) -> str:
    """About `tokens` tokens (4 characters each) of rich markdown."""
    out, n = "", 1
    while len(out) < tokens * 4:
        out += BLOCK.format(n=n)
        n += 1
    return out[: tokens * 4]


async def stream_over_http(reply: str) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        fake.script(text(reply, piece=4))
        app = make_app(Path(tmp), fake)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            t0 = time.perf_counter()
            await send(pilot, "go")
            await idle(pilot, timeout=60)
            live = app.query(LiveAnswer).first()
            await asyncio.wait_for(live.finished.wait(), 60)
            await pilot.pause()
            return time.perf_counter() - t0, len(reply) // 4


async def stream_direct(reply: str, over_history: bool) -> tuple[float, int]:
    """Deltas fed straight to the transcript, each given its turn on the event loop."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        app = make_app(Path(tmp), fake)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            if over_history:
                app.conversation.resume(fill_session(app))
                await pilot.pause(0.5)
            t0 = time.perf_counter()
            deltas = await feed(app, reply)
            await pilot.pause()
            return time.perf_counter() - t0, deltas


async def feed(app: Any, reply: str) -> int:
    """`reply` fed to the transcript 4 characters at a time, each delta given its turn on
    the event loop, then finished; returns once it is rendered, with the number of
    deltas. (A long answer is made a plain widget once it has scrolled out of sight,
    while the next one streams: that cost falls in the next stream.)"""
    pieces = [reply[i : i + 4] for i in range(0, len(reply), 4)]
    for piece in pieces:
        app.transcript.delta("text", piece)
        await asyncio.sleep(0)
    app.transcript.assistant({"type": "assistant", "text": reply})
    live = app.query(LiveAnswer).last()
    await asyncio.wait_for(live.finished.wait(), 120)
    return len(pieces)


REPLACED_VIEWS = """
local heading, code = uji.ui.Heading, uji.ui.CodeBlock
uji.ui.Heading = function(p) return heading(p) end
uji.ui.CodeBlock = function(p) return code(p) end
"""


async def stream_replaced(reply: str) -> tuple[float, int]:
    """The same deltas while a config replaced the Heading and CodeBlock views (each
    frame draws the answer again through its blocks)."""
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI() as fake:
        app = make_app(Path(tmp), fake, REPLACED_VIEWS)
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(pilot)
            t0 = time.perf_counter()
            pieces = [reply[i : i + 4] for i in range(0, len(reply), 4)]
            for piece in pieces:
                app.transcript.delta("text", piece)
                await asyncio.sleep(0)
            app.transcript.assistant({"type": "assistant", "text": reply})
            await pilot.pause()
            return time.perf_counter() - t0, len(pieces)


def summary(samples: list[float]) -> str:
    q = statistics.quantiles(samples, n=20)
    return f"median {ms(statistics.median(samples))}, p95 {ms(q[-1])}, max {ms(max(samples))}"


def main() -> None:
    cpu: list[float] = []
    textual: list[tuple[float, float]] = []
    frames = first_frame(cpu=cpu, textual=textual)
    print(
        f"time to first frame (real uji in a pty, {len(frames)} starts, painted before Textual loads):"
        f" median {ms(statistics.median(frames))}, CPU time by then: median {ms(statistics.median(cpu))}"
    )
    print(f"  all: {', '.join(ms(x) for x in frames)}")
    print(
        f"Textual's first frame (the same again; keys are read from here): median"
        f" {ms(statistics.median(t for t, _ in textual))}, CPU time by then: median"
        f" {ms(statistics.median(c for _, c in textual))}"
    )
    codex_cpu: list[float] = []
    if codex := codex_first_frame(cpu=codex_cpu):
        print(
            f"native Codex's TUI, the same way: median {ms(statistics.median(codex))}"
            f", CPU time by then: median {ms(statistics.median(codex_cpu))}"
        )
    else:
        print("native Codex's TUI: not installed (bench/peers.py installs it)")
    if "--first-frame" in sys.argv:
        return
    empty = asyncio.run(key_latency(messages=0))
    print(f"key press to screen, empty session: {summary(empty)}")
    full = asyncio.run(key_latency(messages=500))
    print(f"key press to screen, 500-message session: {summary(full)}")
    full = asyncio.run(key_latency(messages=5_000))
    print(f"key press to screen, 5,000-message session: {summary(full)}")
    reply = markdown_reply()
    total, deltas = asyncio.run(stream_over_http(reply))
    print(
        f"1,500-token markdown reply over loopback HTTP ({deltas} deltas): total {ms(total)}, per delta {ms(total / deltas)}"
    )
    total, deltas = asyncio.run(stream_direct(reply, over_history=False))
    print(f"the same fed to the transcript: total {ms(total)}, per delta {ms(total / deltas)}")
    total, deltas = asyncio.run(stream_direct(reply, over_history=True))
    print(f"the same over a 500-message session: total {ms(total)}, per delta {ms(total / deltas)}")
    total, deltas = asyncio.run(stream_replaced(reply))
    print(
        f"the same with replaced Heading and CodeBlock views: total {ms(total)}, per delta {ms(total / deltas)}"
    )


if __name__ == "__main__":
    main()
