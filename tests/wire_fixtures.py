"""The three fixtures of a wire's test file, made once for every wire:

    server, fake, wire = wire_fixtures(FakeAnthropic, AnthropicWire)

`server`: the wire's fake provider, one per module; `fake`: that server, reset for each
test; `wire`: the wire on an HTTP client the fixture owns and closes (idle 5 s)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from tests.fakes.base import FakeServer
from uji.wires.common import SSEWire
from uji.wires.http import Http


def wire_fixtures(fake_class: type[FakeServer], wire_class: type[SSEWire]) -> tuple[Any, Any, Any]:
    @pytest.fixture(scope="module")
    def server() -> Iterator[FakeServer]:
        with fake_class() as fake:
            yield fake

    @pytest.fixture
    def fake(server: FakeServer) -> FakeServer:
        server.reset()
        return server

    @pytest.fixture
    async def wire() -> AsyncIterator[SSEWire]:
        async with Http() as http:
            yield wire_class(http, idle=5.0)

    return server, fake, wire
