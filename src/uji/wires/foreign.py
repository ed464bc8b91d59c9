"""An httpx-style AsyncClient made elsewhere (the SDK-replay tests hand the wires the
one the official SDKs use) behind the transport's interface: its responses read the
same way, its errors become the transport's, told apart by the names of their classes
(httpx and its forks share them), so neither library is imported here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from . import transport


class Foreign(transport.Client):
    def __init__(self, client: Any) -> None:
        super().__init__(trust_env=False)
        self._foreign = client

    @property
    def is_closed(self) -> bool:
        return bool(self._foreign.is_closed)

    @is_closed.setter
    def is_closed(self, value: bool) -> None:
        pass  # the maker's client says whether it is closed

    @asynccontextmanager
    async def stream(self, method: str, url: str, **kwargs: Any) -> AsyncIterator[transport.Response]:
        try:
            async with self._foreign.stream(method, url, **kwargs) as response:
                yield ForeignResponse(response)
        except Exception as e:
            raise translated(e) from None

    async def aclose(self) -> None:
        await self._foreign.aclose()


class ForeignResponse(transport.Response):
    def __init__(self, response: Any) -> None:  # no connection of ours: the foreign one reads
        self._foreign = response
        self.status_code = response.status_code
        self.reason = str(getattr(response, "reason_phrase", ""))
        self.headers = response.headers

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._foreign.aiter_bytes():
                yield chunk
        except Exception as e:
            raise translated(e) from None

    def close(self) -> None:
        pass  # the foreign stream's own block closes it


def translated(error: Exception) -> Exception:
    """An httpx-family error as the transport's own; anything else as it is."""
    names = {c.__name__ for c in type(error).__mro__}
    if "HTTPError" not in names or isinstance(error, transport.HTTPError):
        return error
    kind: type[transport.HTTPError] = transport.ProtocolError
    if "TooManyRedirects" in names:
        kind = transport.TooManyRedirects
    elif "ConnectTimeout" in names:
        kind = transport.ConnectTimeout
    elif "ConnectError" in names:
        kind = transport.ConnectError
    elif "TransportError" in names:
        kind = transport.ReadError
    return kind(str(error) or type(error).__name__)
