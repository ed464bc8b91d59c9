"""Find a local model server by itself: with no model chosen, uji knocks on the usual
loopback ports of Ollama (11434), LM Studio (1234), llama.cpp (8080) and vLLM (8000),
all at once. A port where nothing listens refuses the connection at once, so a machine
without any costs about a millisecond; a port that accepts is asked for its models, and
the first server in that order that lists some is used.

`UJI_PROBE_PORTS` replaces the list: comma-separated `[kind=][host:]port` entries, where
kind is one of ollama, lmstudio, llama.cpp, vllm (by default, the kind whose usual port it
is, else a generic OpenAI-compatible server) and host must be a loopback address
(127.0.0.1 when left out). An empty value probes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.providers.discovery import Listed
    from uji.wires.http import Http

ENV = "UJI_PROBE_PORTS"
CONNECT_TIMEOUT = 0.25  # loopback: a listener accepts in microseconds
LIST_TIMEOUT = 3.0  # a server that accepted gets this long to list its models


# Plain classes, not dataclasses: this module loads on every start without a model, and
# a dataclass compiles its methods at import.
class Kind:
    __slots__ = ("discover", "label", "name", "port", "provider")

    def __init__(self, name: str, label: str, provider: str, port: int, discover: str) -> None:
        self.name = name
        self.label = label
        self.provider = provider  # the provider uji uses for it
        self.port = port
        self.discover = discover  # "ollama" also reads /api/tags


KINDS = [
    Kind("ollama", "Ollama", "ollama", 11434, "ollama"),
    Kind("lmstudio", "LM Studio", "lmstudio", 1234, "openai"),
    Kind("llama.cpp", "llama.cpp", "custom", 8080, "openai"),
    Kind("vllm", "vLLM", "custom", 8000, "openai"),
]
GENERIC = Kind("server", "an OpenAI-compatible server", "custom", 0, "openai")


class Target:
    __slots__ = ("host", "kind", "port")

    def __init__(self, kind: Kind, host: str, port: int) -> None:
        self.kind, self.host, self.port = kind, host, port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"


class Found:
    __slots__ = ("base_url", "label", "models", "provider")

    def __init__(self, label: str, provider: str, base_url: str, models: list[Listed]) -> None:
        self.label, self.provider, self.base_url, self.models = label, provider, base_url, models


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse(value: str) -> list[Target]:
    """The `UJI_PROBE_PORTS` list; raises ValueError naming a bad entry."""
    out: list[Target] = []
    for raw in value.split(","):
        entry = raw.strip()
        if not entry:
            continue
        name, _, rest = entry.rpartition("=")
        host, _, port_text = rest.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{ENV}: {entry!r} names no port")
        if not _loopback(host):
            raise ValueError(f"{ENV}: {entry!r} is not a loopback address (uji only probes this machine)")
        port = int(port_text)
        if name:
            kind = next((k for k in KINDS if k.name == name.strip().lower()), None)
            if kind is None:
                raise ValueError(f"{ENV}: unknown kind {name!r} (known: {', '.join(k.name for k in KINDS)})")
        else:
            kind = next((k for k in KINDS if k.port == port), GENERIC)
        out.append(Target(kind, host, port))
    return out


def targets() -> list[Target]:
    value = os.environ.get(ENV)
    if value is None:
        return [Target(k, "127.0.0.1", k.port) for k in KINDS]
    return parse(value)


async def _listening(target: Target, timeout: float) -> bool:
    try:
        async with asyncio.timeout(timeout):
            _, writer = await asyncio.open_connection(target.host, target.port)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


async def find(
    http: Http,
    found_targets: list[Target],
    connect_timeout: float = CONNECT_TIMEOUT,
    list_timeout: float = LIST_TIMEOUT,
) -> Found | None:
    """The first target, in order, that accepts a connection and lists models."""
    if not found_targets:
        return None
    open_ = await asyncio.gather(*(_listening(t, connect_timeout) for t in found_targets))
    listening = [t for t, ok in zip(found_targets, open_, strict=True) if ok]
    if not listening:
        return None
    from uji.providers.discovery import discover

    listed = await asyncio.gather(
        *(discover(http, t.base_url, t.kind.discover, timeout=list_timeout) for t in listening),
        return_exceptions=True,
    )
    for target, models in zip(listening, listed, strict=True):
        if isinstance(models, list) and models:
            return Found(target.kind.label, target.kind.provider, target.base_url, models)
    return None


def describe(found_targets: list[Target]) -> str:
    return (
        ", ".join(f"{t.kind.label} {t.host}:{t.port}" for t in found_targets) or f"nothing ({ENV} is empty)"
    )
