"""The effort scale and its mapping, the built-in catalog's model lists, and the Lua
views of them: uji.model.efforts, uji.provider.list/remove."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from uji.app import App
from uji.paths import resolve
from uji.providers.catalog import Catalog, Model
from uji.providers.efforts import accepted, for_request, nearest
from uji.wires.base import EFFORTS


@pytest.mark.parametrize(
    ("wanted", "accepted_levels", "sent"),
    [
        ("high", ["low", "medium", "high"], "high"),  # exact
        ("medium", ["low", "high"], "high"),  # a tie goes up
        ("minimal", ["low", "medium", "high"], "low"),  # above first
        ("off", ["minimal", "low"], "minimal"),  # a model that cannot stop thinking
        ("max", ["low", "medium", "high"], "high"),  # nothing above: the nearest below
        ("xhigh", ["off", "low", "high", "max"], "max"),
        ("low", ["off"], "off"),
        ("low", ["high", "low", "bogus"], "low"),  # order and junk in the list do not matter
        ("low", [], None),
        ("bogus", ["low"], None),
    ],
)
def test_nearest(wanted: str, accepted_levels: list[str], sent: str | None) -> None:
    assert nearest(wanted, accepted_levels) == sent


def test_accepted_and_for_request() -> None:
    thinker = Model("t", reasoning=True)
    assert accepted(thinker) == ["off", "minimal", "low", "medium", "high"]  # the default list
    assert accepted(Model("t", reasoning=True, efforts=["high", "low"])) == ["low", "high"]
    assert accepted(Model("plain")) == [] and accepted(None) == []
    assert for_request("max", thinker) == "high"
    assert for_request("high", Model("plain")) is None  # a model that does not reason gets none
    assert for_request("xhigh", None) == "xhigh"  # unlisted: sent as asked, the wire decides
    assert for_request(None, thinker) is None  # the provider's default


BUILTIN_IDS = [
    "anthropic",
    "openai",
    "google",
    "xai",
    "deepseek",
    "mistral",
    "groq",
    "cerebras",
    "fireworks",
    "together",
    "openrouter",
    "perplexity",
    "huggingface",
    "github-models",
    "nvidia",
    "moonshotai",
    "zhipuai",
    "baseten",
    "ollama",
    "lmstudio",
    "opencode-zen",
    "opencode-go",
]


def test_builtin_catalog() -> None:
    catalog = Catalog()
    ids = [p.id for p in catalog.list()]
    # The reference's 22; `custom` joins them once it has a base URL.
    assert len(BUILTIN_IDS) == 22 and ids == sorted(BUILTIN_IDS)
    assert catalog.get("custom") is None
    for p in catalog.list():
        assert p.base_url.startswith(("https://", "http://localhost:")), p.id
        assert p.auth_env, p.id
        if p.id in ("ollama", "lmstudio"):
            assert not p.models and p.lazy and p.state == "idle" and not p.needs_key
            continue
        assert p.models and p.state == "loaded" and p.needs_key, p.id
        assert len({m.id for m in p.models}) == len(p.models), p.id
        for m in p.models:
            assert m.name and m.context and m.output and m.output <= m.context, m.id
            assert all(e in EFFORTS for e in m.efforts or []), m.id
            assert m.efforts is None or m.reasoning, m.id
    zen = catalog.get("opencode-zen")
    assert zen.wire_for("claude-sonnet-4-5") == "anthropic" and zen.wire_for("qwen3-coder") == "openai-chat"
    assert catalog.get("google").wire == "gemini" and catalog.get("anthropic").wire == "anthropic"
    assert (
        catalog.get("ollama").base_url == "http://localhost:11434/v1" and not catalog.get("ollama").needs_key
    )
    assert all(m.cache for m in catalog.get("anthropic").models)
    opus = catalog.get("anthropic").model("claude-opus-4-6")
    assert opus is not None and opus.efforts == ["off", "low", "medium", "high", "max"]


def test_model_lists_are_copies() -> None:
    a, b = Catalog(), Catalog()
    a.get("anthropic").models[0].efforts.append("max")  # type: ignore[union-attr]
    assert "max" not in (b.get("anthropic").models[0].efforts or [])


# --------------------------------------------------------------------------- through Lua


@pytest.fixture
def app(tmp_path: Path) -> App:
    return App(resolve(str(tmp_path / "cfg"), str(tmp_path / "data")), cwd=str(tmp_path))


async def lua(app: App, source: str) -> Any:
    rt = app.lua
    values = await rt.call(rt.load_source(source, "/cfg/init.lua"))
    return rt.convert.to_python(values[0]) if values else None


async def test_uji_model_efforts(app: App) -> None:
    got = await lua(
        app,
        """
        local out = {}
        uji.model.use({ provider = "anthropic", model = "claude-opus-4-6" })
        out.opus = uji.model.efforts()
        uji.model.use({ provider = "google", model = "gemini-3-pro-preview" })
        out.g3 = uji.model.efforts()
        uji.model.use({ provider = "openai", model = "gpt-4.1" })
        out.plain = uji.model.efforts()
        uji.model.use({ provider = "openai", model = "not-listed" })
        out.unknown = uji.model.efforts()
        return out
        """,
    )
    assert got == {
        "opus": ["off", "low", "medium", "high", "max"],
        "g3": ["low", "high"],
        "plain": [],
        "unknown": [],
    }


async def test_uji_provider_list_and_remove(app: App) -> None:
    got = await lua(
        app,
        """
        uji.provider.add({ id = "mine", name = "Mine", api = "gemini", base_url = "http://h/v1beta/",
          auth_env = { "MINE_KEY" }, models = { "a", { id = "b", reasoning = true, efforts = { "low" } } } })
        uji.provider.add({ id = "mine", name = "Mine 2" })  -- merges by id
        local row
        for _, p in ipairs(uji.provider.list()) do if p.id == "mine" then row = p end end
        local removed, again = uji.provider.remove("mine"), uji.provider.remove("mine")
        local left = false
        for _, p in ipairs(uji.provider.list()) do if p.id == "mine" then left = true end end
        return { row = row, removed = removed, again = again, left = left }
        """,
    )
    row = got["row"]
    assert (row["name"], row["wire"], row["api"], row["base_url"]) == (
        "Mine 2",
        "gemini",
        "gemini",
        "http://h/v1beta",
    )
    assert row["auth_env"] == ["MINE_KEY"]
    assert row["models"] == [
        {"id": "a", "reasoning": False},
        {"id": "b", "reasoning": True, "efforts": ["low"]},
    ]
    assert (got["removed"], got["again"], got["left"]) == (True, False, False)


async def test_a_builtin_provider_nobody_asked_for_is_removed_and_merged_like_the_others(app: App) -> None:
    # The catalog makes a built-in provider when it is first asked for; removing or
    # merging into one before that behaves as if it had been made at start.
    got = await lua(
        app,
        """
        local removed, again = uji.provider.remove("groq"), uji.provider.remove("groq")
        uji.provider.add({ id = "cerebras", name = "Cerebras here" })
        local ids, cerebras = {}, nil
        for _, p in ipairs(uji.provider.list()) do
          ids[#ids + 1] = p.id
          if p.id == "cerebras" then cerebras = p end
        end
        return { removed = removed, again = again, ids = ids, name = cerebras.name,
          models = #cerebras.models, url = cerebras.base_url }
        """,
    )
    assert (got["removed"], got["again"]) == (True, False)
    assert "groq" not in got["ids"] and {"openai", "anthropic", "cerebras"} <= set(got["ids"])
    assert got["name"] == "Cerebras here"
    assert got["models"] > 0 and got["url"].startswith("https://")


async def test_builtin_wires_are_known(app: App) -> None:
    assert await lua(app, "return uji.wire.list()") == ["anthropic", "gemini", "openai-chat", "responses"]
    from uji.wires.anthropic import AnthropicWire
    from uji.wires.gemini import GeminiWire

    assert isinstance(app.wires.get("anthropic"), AnthropicWire) and isinstance(
        app.wires.get("gemini"), GeminiWire
    )
    with pytest.raises(LookupError, match="no wire named 'x'"):
        app.wires.get("x")


def test_remove_key_signs_out_and_keeps_the_other_entries(tmp_path: Path) -> None:
    import os
    import stat

    from uji.providers import auth

    path = str(tmp_path / "data" / "auth.toml")
    auth.save_key(path, "openai", "sk-one")
    auth.save_key(path, "anthropic", "sk-two")
    assert auth.remove_key(path, "openai") is True
    assert auth.remove_key(path, "openai") is False
    assert auth.saved_key(path, "openai") is None
    assert auth.saved_key(path, "anthropic") == "sk-two"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [n for n in os.listdir(tmp_path / "data") if n.startswith(".auth-")] == []


def test_the_command_line_knows_the_same_effort_scale() -> None:
    from uji.cli import EFFORTS as ON_THE_COMMAND_LINE  # kept apart: `uji --version` imports no wire

    assert ON_THE_COMMAND_LINE == EFFORTS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": 3}, "`name` must be a string"),
        ({"base_url": None}, "`base_url` must be a string"),
        ({"auth_env": [1]}, "`auth_env` must be a list of variable names"),
        ({"models": "m"}, "`models` must be a list"),
        ({"context_window": 0}, "`context_window` must be a whole number of tokens"),
        ({"idle": -1}, "`idle` must be a number of seconds > 0"),
        ({"compat": {"nonsense": 1}}, "compat"),
    ],
)
def test_a_bad_field_is_named_and_changes_nothing(change: dict[str, Any], message: str) -> None:
    from uji.providers.catalog import CatalogError

    catalog = Catalog()
    catalog.add({"id": "mine", "name": "Mine", "wire": "openai-chat", "base_url": "http://h/v1/", "idle": 5})
    # Fields before the bad one in the table would be set too if the checks and the
    # changes were interleaved.
    with pytest.raises(CatalogError, match=message) as raised:
        catalog.add({"id": "mine", "name": "Renamed", "base_url": "http://other/v1", **change})
    assert str(raised.value).startswith("uji.provider.add mine: ")
    kept = catalog.get("mine")
    assert kept is not None
    assert (kept.name, kept.base_url, kept.idle) == ("Mine", "http://h/v1", 5.0)


def test_a_provider_table_sets_each_field_as_the_provider_holds_it() -> None:
    catalog = Catalog()
    p = catalog.add(
        {
            "id": "mine",
            "name": "Mine",
            "api": "openai-chat",
            "base_url": "http://h/v1/",
            "auth_env": "MINE_KEY",
            "idle": 7,
            "context_window": 1000,
            "models": ["a", {"id": "b", "context": 10}],
        }
    )
    assert (p.wire, p.base_url, p.auth_env, p.idle, p.context_window) == (
        "openai-chat",
        "http://h/v1",
        ["MINE_KEY"],
        7.0,
        1000,
    )
    assert [m.id for m in p.models] == ["a", "b"] and p.needs_key
    assert "MINE_KEY" in catalog.key_variables() and "ANTHROPIC_API_KEY" in catalog.key_variables()
    catalog.remove("anthropic")  # a built-in provider's key stays a secret once it is removed
    assert "ANTHROPIC_API_KEY" in catalog.key_variables()
    p = catalog.add({"id": "mine", "auth_env": {}, "needs_key": False, "context_window": None})
    assert (p.auth_env, p.needs_key, p.context_window) == ([], False, None)


def test_saved_credentials_are_read_in_every_shape_auth_toml_may_hold(tmp_path: Path) -> None:
    import os

    from uji.providers import auth

    path = tmp_path / "auth.toml"
    path.write_text(
        'bare = "sk-bare"\n'
        'empty = ""\n'
        '[typed]\ntype = "api_key"\nkey = "sk-typed"\n'
        '[untyped]\nkey = "sk-untyped"\n'
        '[nothing]\nnote = "no key here"\n'
        '[signed]\ntype = "oauth"\naccess = "at"\nrefresh = "rt"\nexpires_at = "soon"\n'
    )
    os.chmod(path, 0o600)
    file = str(path)
    assert auth.saved_key(file, "bare") == "sk-bare"
    assert auth.saved_key(file, "typed") == "sk-typed"
    assert auth.saved_key(file, "untyped") == "sk-untyped"  # a key without its type is still a key
    assert auth.saved_entry(file, "empty") is None and auth.saved_entry(file, "nothing") is None
    # A field of the wrong type is left out: this sign-in has no expiry, not a broken one.
    assert auth.saved_entry(file, "signed") == {"type": "oauth", "access": "at", "refresh": "rt"}
