"""The HTTP client the wires, model listings and `uji.http` share, owned by whoever made it.

    http = Http()                      # cheap: nothing is built or imported yet
    client = http.client()             # the pooled client, made on first use
    ...
    await http.aclose()                # the owner closes it (App.close, a test's fixture)

One client keeps one connection pool, so the calls of a turn reuse one connection. It is
made on first use, on the running event loop (its connections belong to that loop): a
later call on another loop (a test that runs a second `asyncio.run` with the same owner)
gets a fresh client. The CA bundle is read on the first https handshake (see tls.py),
so a run against a local `http://` server never reads it.

`Http(client)` wraps a client someone else made and closes: `aclose` leaves it open. It
may be a `transport.Client`, or an httpx-style `AsyncClient` (the SDK-replay tests hand
the wires the one the SDK uses), which foreign.py adapts.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .transport import Client

CONNECT_TIMEOUT = 10.0


def new_client() -> Client:
    """An HTTP/1.1 client with no read timeout: a model may think for minutes between
    events, and the stall watchdog of `sse.open_sse` decides that a stream is dead."""
    from .transport import Client

    return Client(connect_timeout=CONNECT_TIMEOUT)


class Http:
    def __init__(self, client: Any = None) -> None:
        if client is not None:
            from .foreign import Foreign
            from .transport import Client

            if not isinstance(client, Client):
                client = Foreign(client)
        self._client: Client | None = client
        self._owned = client is None
        self._loop: asyncio.AbstractEventLoop | None = None

    def client(self) -> Client:
        """The client for the running loop, made on first use (and again after `aclose`)."""
        if not self._owned:
            assert self._client is not None
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._client.is_closed or self._loop is not loop:
            # A client of a loop that has finished cannot be closed any more; it is dropped.
            self._client = new_client()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the client this object made (a wrapped one is its maker's to close)."""
        if not self._owned:
            return
        client, loop = self._client, self._loop
        self._client = self._loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.aclose()

    async def __aenter__(self) -> Http:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
