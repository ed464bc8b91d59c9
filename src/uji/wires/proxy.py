"""Which proxy a request goes through, from the environment as curl and httpx read it:
`https_proxy` / `HTTPS_PROXY` for https URLs, `http_proxy` / `HTTP_PROXY` for http ones,
`all_proxy` / `ALL_PROXY` for both, and `no_proxy` / `NO_PROXY` (host names, domain
suffixes, `*`) for the hosts that go direct. A proxy URL may carry credentials
(`http://user:pass@proxy:3128`), sent as Basic `Proxy-Authorization`.

The environment is read per request: a few dict look-ups."""

from __future__ import annotations

import os
from base64 import b64encode
from urllib.parse import unquote, urlsplit

from uji.record import Record


class Proxy(Record):
    url: str  # without credentials: safe to show
    host: str
    port: int
    user: str | None
    password: str | None

    def auth_headers(self) -> list[tuple[str, str]]:
        if self.user is None:
            return []
        pair = f"{self.user}:{self.password or ''}".encode()
        return [("Proxy-Authorization", "Basic " + b64encode(pair).decode("ascii"))]


def proxy_for(scheme: str, host: str, port: int) -> Proxy | None:
    """The proxy for a request to scheme://host:port, or None to go direct."""
    address = _env(f"{scheme}_proxy") or _env("all_proxy")
    if not address or bypassed(_env("no_proxy"), host, port):
        return None
    return parse(address)


def _env(name: str) -> str:
    """The lower-case variable, else the upper-case one (as curl and the standard library)."""
    return (os.environ.get(name) or os.environ.get(name.upper()) or "").strip()


def parse(address: str) -> Proxy:
    """A proxy URL (`host:port` alone means http://host:port). Only http proxies are
    spoken to: another kind raises ValueError rather than be bypassed."""
    parts = urlsplit(address if "://" in address else f"http://{address}")
    if parts.scheme != "http":
        raise ValueError(
            f"the proxy {parts.scheme}://{parts.hostname} is not supported: only http:// proxies are"
        )
    if not parts.hostname:
        raise ValueError(f"the proxy {address!r} names no host")
    port = parts.port or 80  # a bad port raises ValueError
    shown = f"http://{parts.hostname}:{port}"
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return Proxy(url=shown, host=parts.hostname, port=port, user=user, password=password)


def bypassed(no_proxy: str, host: str, port: int) -> bool:
    """Whether NO_PROXY sends host:port direct: `*`, the host itself, a domain it is in
    (`example.com` and `.example.com` both cover `api.example.com`), or `host:port`."""
    host = host.lower().strip("[]").rstrip(".")
    for entry in no_proxy.lower().split(","):
        entry = entry.strip()
        if entry == "*":
            return True
        name, only = entry, ""
        if entry.startswith("["):  # [::1] or [::1]:8080
            name, _, rest = entry[1:].partition("]")
            only = rest.removeprefix(":")
        elif entry.count(":") == 1:
            name, _, only = entry.partition(":")
        name = name.lstrip(".").rstrip(".")
        if not name or (only and only != str(port)):
            continue
        if host == name or host.endswith("." + name):
            return True
    return False
