"""Session store figures: resuming a 5,000-message session and appending 10,000
messages. Run by hand: `python bench/sessions.py`."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

from tests.fakes.openai_server import FakeOpenAI, text  # noqa: E402

from uji.store.sessions import Store  # noqa: E402


def fill(store: Store, sid: str, n: int) -> None:
    for i in range(n // 2):
        store.append(sid, {"type": "user", "text": f"question {i} " + "words " * 30})
        store.append(sid, {"type": "assistant", "text": f"answer {i} " + "more words " * 40})


def bench_append() -> None:
    root = Path(tempfile.mkdtemp(prefix="uji-bench-"))
    store = Store(str(root / "uji.db"))
    sid = store.create_session(str(root), "bench")
    t0 = time.perf_counter()
    fill(store, sid, 10_000)
    elapsed = time.perf_counter() - t0
    store.close()
    print(
        f"append 10,000 messages     {elapsed * 1000:7.1f} ms  ({elapsed / 10_000 * 1e6:.0f} µs per message, each committed)"
    )


def bench_resume() -> None:
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    root = Path(tempfile.mkdtemp(prefix="uji-bench-"))
    store = Store(str(root / "uji.db"))
    sid = store.create_session(str(root), "bench")
    fill(store, sid, 5_000)
    t0 = time.perf_counter()
    for _ in range(10):
        store.messages(sid)
    load = (time.perf_counter() - t0) / 10
    store.close()
    print(f"load 5,000 messages        {load * 1000:7.1f} ms (store only, mean of 10)")
    with FakeOpenAI() as fake:
        cfg = root / "cfg"
        cfg.mkdir()
        (cfg / "init.lua").write_text(
            f'uji.provider.add({{ id = "b", name = "B", wire = "openai-chat", base_url = "{fake.base_url}", models = {{ "m" }} }})\n'
            'uji.model.use({ provider = "b", model = "m" })\n'
        )
        env = dict(os.environ, UJI_CONFIG_DIR=str(cfg), UJI_DATA_DIR=str(root), HOME=str(root))
        samples, fresh = [], []
        for _ in range(5):
            fake.script(text("ok"))
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "uji", "run", "--session", sid, "next"],
                env=env,
                cwd=root,
                capture_output=True,
                check=True,
            )
            samples.append(time.perf_counter() - t0)
            fake.script(text("ok"))
            t0 = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "uji", "run", "next"],
                env=env,
                cwd=root,
                capture_output=True,
                check=True,
            )
            fresh.append(time.perf_counter() - t0)
        resumed, new = statistics.median(samples), statistics.median(fresh)
        print(
            f"uji run --session (5,000)  {resumed * 1000:7.1f} ms end to end; a new session {new * 1000:.1f} ms"
        )
        print(
            f"  → resuming 5,000 messages costs {(resumed - new) * 1000:.1f} ms over a new session (target < 300)"
        )


if __name__ == "__main__":
    bench_append()
    bench_resume()
