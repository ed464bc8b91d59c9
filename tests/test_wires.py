"""What every wire shares: the name → factory table, and the HTTP client, which is owned
and closed by whoever made it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

from tests.fakes.base import RecordingReply
from tests.fakes.openai_server import FakeOpenAI, text
from uji.app import App
from uji.paths import resolve
from uji.wires.base import Answer, WireRequest
from uji.wires.http import Http
from uji.wires.openai_chat import OpenAIChatWire
from uji.wires.registry import BUILTIN, Wires


def request(base_url: str) -> WireRequest:
    return WireRequest(
        model="m",
        system="s",
        messages=[{"type": "user", "text": "hi"}],
        tools=[{"name": "t", "description": "", "parameters": {"type": "object"}}],
        provider={"id": "test", "base_url": base_url},
        auth={"key": "sk-test"},
    )


async def ask(wire: object, base_url: str) -> Answer:
    reply = RecordingReply()
    await wire.stream(request(base_url), reply)  # type: ignore[attr-defined]
    [end] = reply.ends
    assert isinstance(end, Answer), end
    return end


# --------------------------------------------------------------------------- the table


def test_every_builtin_wire_is_made_by_its_factory_under_its_name() -> None:
    wires = Wires(Http())
    assert wires.names() == ["anthropic", "gemini", "openai-chat", "responses"] == sorted(BUILTIN)
    for name in BUILTIN:
        wire = wires.get(name)
        assert wire.name == name
        assert wires.get(name) is wire  # made once
        assert wire.http is wires.http  # type: ignore[attr-defined]


def test_an_added_wire_shadows_a_builtin_until_removed() -> None:
    wires = Wires(Http())

    class Mine:
        name = "mine"

        async def stream(self, request: WireRequest, reply: object) -> None: ...

    mine = Mine()
    wires.add("openai-chat", mine)
    wires.add("mine", mine)
    assert wires.get("openai-chat") is mine and "mine" in wires.names()
    assert wires.remove("openai-chat") and wires.remove("mine")
    assert not wires.remove("mine")
    assert isinstance(wires.get("openai-chat"), OpenAIChatWire)
    with pytest.raises(
        LookupError, match=r"no wire named 'mine' \(known: anthropic, gemini, openai-chat, responses\)"
    ):
        wires.get("mine")


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_wire_loads_only_its_own_module(name: str) -> None:
    code = (
        "import sys; from uji.wires.http import Http; from uji.wires.registry import Wires;"
        f"Wires(Http()).get({name!r});"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('uji.wires.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    loaded = set(out.stdout.split())
    wires = {"uji.wires.anthropic", "uji.wires.gemini", "uji.wires.openai_chat", "uji.wires.responses"}
    own = {"uji.wires." + name.replace("-", "_")}
    if name in ("responses", "gemini"):
        own.add("uji.wires.openai_chat")  # they share its headers and hosts, or its error reading
    assert loaded & wires == own


# --------------------------------------------------------------------------- the client's owner


@pytest.fixture(scope="module")
def server() -> object:
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def fake(server: FakeOpenAI) -> FakeOpenAI:
    server.reset()
    return server


async def test_the_owner_makes_the_client_on_first_use_and_closes_it(fake: FakeOpenAI) -> None:
    async with Http() as http:
        wire = OpenAIChatWire(http)
        fake.script(text("a"), text("b"))
        assert (await ask(wire, fake.base_url)).text == "a"
        assert (await ask(wire, fake.base_url)).text == "b"
        assert fake.connections == 1  # one pooled connection for both calls
        assert fake.open_connections == 1
    assert fake.wait_for_open_connections(0)  # closed with its owner


async def test_a_client_made_elsewhere_is_left_to_its_maker(fake: FakeOpenAI) -> None:
    async with httpx2.AsyncClient() as client:
        http = Http(client)
        fake.script(text("a"))
        assert (await ask(OpenAIChatWire(http), fake.base_url)).text == "a"
        await http.aclose()
        assert not client.is_closed
        assert fake.open_connections == 1
    assert client.is_closed


async def test_app_close_closes_the_wires_client(fake: FakeOpenAI, tmp_path: Path) -> None:
    app = App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path))
    fake.script(text("a"))
    assert (await ask(app.wire("openai-chat"), fake.base_url)).text == "a"
    assert fake.open_connections == 1
    await app.close()
    assert fake.wait_for_open_connections(0)
