"""asyncio without its `ssl` until a TLS connection needs it.

`import asyncio` imports `ssl` (asyncio.base_events, selector_events and sslproto each
`try: import ssl`), and with it OpenSSL's libssl and ssl.py's enums: about an eighth of
what importing asyncio costs, paid by every `uji run` whose model is on plain http
(a local server) and by every screen. `import_asyncio` imports asyncio with `ssl`
hidden, so those modules bind `ssl = None` as they would on a Python built without it;
`asyncio_ssl` imports the real module and gives it to them before the first TLS
connection (uji.wires.transport, the only code here that asks asyncio for TLS; the MCP
SDK's HTTP client wraps TLS itself, through anyio's streams).
"""

from __future__ import annotations

import sys
from types import ModuleType


def import_asyncio() -> None:
    """Import asyncio with `ssl` hidden, unless either is imported already."""
    if "asyncio" in sys.modules or "ssl" in sys.modules:
        return
    sys.modules["ssl"] = None  # type: ignore[assignment]  # `import ssl` raises ImportError
    try:
        import asyncio  # noqa: F401
    finally:
        if sys.modules.get("ssl", 0) is None:
            del sys.modules["ssl"]


def asyncio_ssl() -> ModuleType:
    """The ssl module, given first to every asyncio module that bound `ssl = None`."""
    import ssl

    for name, module in list(sys.modules.items()):
        if name.startswith("asyncio.") and getattr(module, "ssl", 0) is None:
            module.ssl = ssl  # type: ignore[attr-defined]
            if name == "asyncio.sslproto":  # what it defines beside the import when ssl is there
                module.SSLAgainErrors = (ssl.SSLWantReadError, ssl.SSLSyscallError)  # type: ignore[attr-defined]
    return ssl
