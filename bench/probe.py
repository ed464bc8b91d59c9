"""What the local-server probe adds to `uji run` when nothing listens; run by hand:
`python bench/probe.py`. Prints figures, fails nothing (target: under 5 ms).

1. In-process: `probe.find` over four loopback ports where nothing listens (the four
   usual ones are not used, as this machine may run a server on one): each refuses the
   connection at once, so this is the probe's whole cost, import included.
2. End to end: `uji run hi` with no model chosen, probing the four closed ports, against
   the same run with the probe off (`UJI_PROBE_PORTS=""`). Both end in "no model
   chosen"; the difference of the medians is the probe's share (process noise is larger).
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], check=False)


def closed_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def in_process(spec: str, n: int) -> tuple[float, list[float]]:
    os.environ["UJI_PROBE_PORTS"] = spec
    t0 = time.perf_counter()
    from uji.providers import probe

    imported = time.perf_counter() - t0

    async def runs() -> list[float]:
        from uji.wires.http import Http

        out = []
        async with Http() as http:
            for _ in range(n):
                t = time.perf_counter()
                found = await probe.find(http, probe.targets())
                out.append(time.perf_counter() - t)
                assert found is None
        return out

    return imported, asyncio.run(runs())


def end_to_end(spec: str, n: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UJI_", "XDG_"))}
        env.update(HOME=tmp, UJI_PROBE_PORTS=spec, PYTHONPATH=str(ROOT / "src"))
        Path(tmp, ".config", "uji").mkdir(parents=True)
        out = []
        for _ in range(n):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "uji", "run", "hi"], env=env, cwd=tmp, capture_output=True)
            out.append(time.perf_counter() - t)
        return out


def main() -> None:
    spec = ",".join(
        f"{kind}=127.0.0.1:{port}"
        for kind, port in zip(("ollama", "lmstudio", "llama.cpp", "vllm"), closed_ports(4), strict=True)
    )
    imported, runs = in_process(spec, 200)
    print(f"probe import: {imported * 1000:.2f} ms")
    print(
        f"probe of 4 closed loopback ports: median {statistics.median(runs) * 1000:.2f} ms, "
        f"p90 {sorted(runs)[int(len(runs) * 0.9)] * 1000:.2f} ms (n={len(runs)})"
    )
    off, on = [], []
    for _ in range(10):  # interleaved, so load changes hit both alike
        off += end_to_end("", 1)
        on += end_to_end(spec, 1)
    m_off, m_on = statistics.median(off) * 1000, statistics.median(on) * 1000
    print(f"uji run with no model, probe off: median {m_off:.0f} ms; probe on: {m_on:.0f} ms")
    print(f"probe's added time end to end: {m_on - m_off:+.1f} ms (noise of a process start is larger)")


if __name__ == "__main__":
    main()
