"""Prompt caching by default, seen in what the model receives through the real `uji run`:
every model on the Anthropic wire, built in or declared in init.lua, gets the cache
breakpoints unless it (or the context) says otherwise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home
from tests.fakes.anthropic_server import FakeAnthropic, text

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def claude(tmp_path: Path) -> Iterator[tuple[Home, FakeAnthropic]]:
    with FakeAnthropic() as fake:
        yield Home(tmp_path, None), fake


def breakpoints(body: dict[str, object]) -> list[str]:
    """Where the request put `cache_control`: system, tools, and message roles."""
    found: list[str] = []
    for part in ("system", "tools"):
        blocks = body.get(part) or []
        assert isinstance(blocks, list)
        found += [part for block in blocks if "cache_control" in block]
    messages = body.get("messages") or []
    assert isinstance(messages, list)
    for m in messages:
        found += [m["role"] for block in m["content"] if "cache_control" in block]
    return found


@pytest.mark.parametrize(
    ("model_lua", "context_lua", "expected"),
    [
        ('"my-sonnet"', "", ["system", "tools", "user"]),  # declared by id alone
        ('{ id = "claude-sonnet-4-5", output = 8192 }', "", ["system", "tools", "user"]),
        ('{ id = "my-sonnet", cache = false }', "", []),  # a server that refuses them
        ('"my-sonnet"', 'uji.context.configure({ cache = "off" })', []),
    ],
)
def test_a_declared_anthropic_model_gets_cache_breakpoints_unless_told_not_to(
    claude: tuple[Home, FakeAnthropic], model_lua: str, context_lua: str, expected: list[str]
) -> None:
    home, fake = claude
    model = model_lua.split('"')[1]
    home.init(
        f"""
        uji.provider.add({{ id = "c", name = "C", wire = "anthropic", base_url = "{fake.base_url}",
          auth_env = {{ "C_KEY" }}, models = {{ {model_lua} }} }})
        uji.model.use({{ provider = "c", model = "{model}" }})
        {context_lua}
        """,
        provider=False,
    )
    fake.script(text("cached"))
    run = home.run("hi", env={"C_KEY": "sk-ant-test"})
    assert run.done["text"] == "cached", run.stderr
    [request] = fake.turn_requests
    assert breakpoints(request.body) == expected
