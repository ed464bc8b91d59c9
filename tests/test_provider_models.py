"""Providers beyond the table: `uji.provider.get/load`, lazy `models` functions, model
discovery from a local server (`/v1/models`, Ollama's `/api/tags`), the local-server
probe, custom endpoints that stick, and failures that are fast and said once."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home
from tests.fakes.openai_server import FakeOpenAI, status, text
from tests.waiting import until_async
from uji.agent.loop import Agent, TurnOptions
from uji.app import App
from uji.events.stream import discard
from uji.headless import auto_approver
from uji.paths import resolve


@pytest.fixture
def home(tmp_path: Path, fake: FakeOpenAI) -> Home:
    return Home(tmp_path, fake)


def closed_port() -> int:
    """A loopback port where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def make_app(tmp_path: Path, lua: str = "") -> tuple[App, list[str]]:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "init.lua").write_text(lua)
    notices: list[str] = []
    app = App(resolve(str(cfg), str(tmp_path / "data")), cwd=str(tmp_path), notice=notices.append)
    await app.load_config()
    return app, notices


async def lua(app: App, source: str) -> Any:
    rt = app.lua
    values = await rt.call(rt.load_source(source, "/cfg/test.lua"))
    return rt.convert.to_python(values[0]) if values else None


# --------------------------------------------------------------------------- get / load


async def test_list_get_and_load(tmp_path: Path) -> None:
    app, _ = await make_app(tmp_path)
    got = await lua(
        app,
        """
        local openai = uji.provider.get("openai")
        local ok, err = pcall(uji.provider.load, "nope")
        return {
          count = #uji.provider.list(), openai = openai, missing = uji.provider.get("nope") == nil,
          custom = uji.provider.get("custom") == nil, err = err, state = uji.provider.STATE,
          ollama = uji.provider.get("ollama").state,
        }
        """,
    )
    assert got["count"] == 22 and got["missing"] and got["custom"]
    row = got["openai"]
    assert {"id", "name", "api", "base_url", "auth_env", "models", "oauth", "loop", "state"} <= set(row)
    assert (row["api"], row["base_url"], row["auth_env"], row["state"]) == (
        "openai-chat",
        "https://api.openai.com/v1",
        ["OPENAI_API_KEY"],
        "loaded",
    )
    assert row["oauth"] is False and row["loop"] is False
    assert {"id": "gpt-4.1", "name": "GPT-4.1", "context": 1_047_576}.items() <= row["models"][5].items()
    assert "unknown provider 'nope'" in got["err"] and "test.lua:3:" in got["err"]
    assert got["state"] == {"IDLE": "idle", "LOADING": "loading", "LOADED": "loaded", "FAILED": "failed"}
    assert got["ollama"] == "idle"  # get never loads
    await app.close()


# --------------------------------------------------------------------------- lazy models


def test_a_lazy_models_function_is_called_and_its_model_used(home: Home) -> None:
    """The function waits on uji.http.request inside, and the request carries its model."""
    home.fake.models = ["served-a", "served-b"]
    calls = home.root / "calls"
    home.init(
        f"""
        uji.provider.add({{ id = "lazy", name = "Lazy", api = "openai-chat", base_url = "{home.fake.base_url}",
          models = function()
            local f = io.open("{calls}", "a"); f:write("x"); f:close()
            local r = assert(uji.http.request({{ url = "{home.fake.base_url}/models" }}))
            local out = {{}}
            for _, m in ipairs(uji.json.decode(r.body).data) do out[#out + 1] = {{ id = m.id, context = 5000 }} end
            return out
          end }})
        uji.model.use({{ provider = "lazy" }})
        """,
        provider=False,
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert home.fake.turn_requests[0].body["model"] == "served-a"
    assert calls.read_text() == "x"  # called once: when current, shared with the request's need


async def test_a_failed_load_keeps_the_old_list_and_the_next_need_retries(tmp_path: Path) -> None:
    app, notices = await make_app(
        tmp_path,
        """
        local tries = 0
        uji.provider.add({ id = "lz", name = "Lz", api = "openai-chat", base_url = "http://127.0.0.1:9/v1",
          models = { { id = "old", context = 1000 }, "kept" } })
        uji.provider.add({ id = "lz", models = function()
          tries = tries + 1
          if tries == 1 then error("catalog down") end
          return { { id = "old", context = 2000 }, "new" }
        end })
        """,
    )
    got = await lua(
        app,
        """
        local first = uji.provider.load("lz")
        local second = uji.provider.load("lz")
        return { first = first, second = second, third = uji.provider.load("lz").state }
        """,
    )
    first, second = got["first"], got["second"]
    assert first["state"] == "failed" and "catalog down" in first["error"]
    assert [m["id"] for m in first["models"]] == ["old", "kept"]
    assert any("could not load the models of Lz" in n and "catalog down" in n for n in notices)
    assert second["state"] == "loaded" and "error" not in second
    # Merged by id: "old" replaced whole, in its place; "new" added.
    assert [(m["id"], m.get("context")) for m in second["models"]] == [
        ("old", 2000),
        ("kept", None),
        ("new", None),
    ]
    assert got["third"] == "loaded"
    await app.close()


async def test_a_models_function_that_returns_junk_fails_the_load_with_where(tmp_path: Path) -> None:
    app, _ = await make_app(
        tmp_path,
        """uji.provider.add({ id = "j", name = "J", api = "openai-chat", base_url = "http://h/v1",
          models = function() return { { name = "no id" } } end })""",
    )
    row = await lua(app, 'return uji.provider.load("j")')
    assert row["state"] == "failed" and "each model is an id string or a table with an `id`" in row["error"]
    assert row["models"] == []
    await app.close()


# --------------------------------------------------------------------------- discovery


async def test_discovery_reads_v1_models_and_ollama_tags(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.models = ["llama3.2:latest", "only-in-v1"]
    fake.tags = ["qwen3:8b", "llama3.2:latest"]
    app, _ = await make_app(
        tmp_path,
        f"""
        uji.provider.add({{ id = "ollama", base_url = "{fake.base_url}" }})
        uji.provider.add({{ id = "lmstudio", base_url = "{fake.base_url}" }})
        """,
    )
    got = await lua(app, 'return { uji.provider.load("ollama"), uji.provider.load("lmstudio") }')
    ollama, lmstudio = got
    assert ollama["state"] == "loaded"
    assert [m["id"] for m in ollama["models"]] == ["qwen3:8b", "llama3.2:latest", "only-in-v1"]
    assert [m["id"] for m in lmstudio["models"]] == ["llama3.2:latest", "only-in-v1"]
    assert sorted(fake.listings) == ["/api/tags", "/v1/models", "/v1/models"]
    await app.close()


async def test_models_lists_a_local_servers_models(tmp_path: Path, fake: FakeOpenAI) -> None:
    """What /models offers: the local server's models, found when the list is asked for."""
    fake.models = ["local-one", "local-two"]
    app, notices = await make_app(
        tmp_path,
        f"""
        uji.provider.add({{ id = "lmstudio", base_url = "{fake.base_url}" }})
        uji.provider.add({{ id = "ollama", base_url = "http://127.0.0.1:{closed_port()}/v1" }})
        """,
    )
    choices = await app.models.model_choices()
    assert ("lmstudio", "local-one") in choices and ("lmstudio", "local-two") in choices
    assert not [c for c in choices if c[0] == "ollama"]  # not running: lists nothing
    assert notices == []  # and says nothing about it
    await app.close()


def test_a_discovered_model_is_used_when_the_provider_names_none(home: Home) -> None:
    home.fake.tags = ["nomic-embed-text:latest", "qwen3:8b"]
    home.fake.models = ["nomic-embed-text:latest", "qwen3:8b"]
    home.init(
        f"""
        uji.provider.add({{ id = "ollama", base_url = "{home.fake.base_url}" }})
        uji.model.use({{ provider = "ollama" }})
        """,
        provider=False,
    )
    run = home.run("hi")
    assert run.rc == 0, run.stderr
    assert home.fake.turn_requests[0].body["model"] == "qwen3:8b"  # not the embedding model


# --------------------------------------------------------------------------- the probe


def test_the_probe_finds_a_local_server_with_no_config(home: Home) -> None:
    home.fake.tags = ["gemma3:1b"]
    home.fake.models = ["gemma3:1b"]
    home.fake.script(text("hello from the local server"))
    (home.config / "init.lua").write_text("")
    probe = f"vllm=127.0.0.1:{closed_port()},ollama=127.0.0.1:{home.fake.port}"
    run = home.run("hi", env={"UJI_PROBE_PORTS": probe})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "hello from the local server"
    assert home.fake.turn_requests[0].body["model"] == "gemma3:1b"
    (picked,) = [n for n in run.notices if "found" in n]
    assert "Ollama" in picked and home.fake.base_url in picked and "ollama/gemma3:1b" in picked
    # Plain mode says it on stderr.
    plain = home.uji("run", "again", env={"UJI_PROBE_PORTS": probe})
    assert plain.rc == 0 and "found Ollama at" in plain.stderr


def test_the_probe_finding_nothing_is_one_line_and_exit_1(home: Home) -> None:
    (home.config / "init.lua").write_text("")
    run = home.uji(
        "run", "hi", env={"UJI_PROBE_PORTS": f"{closed_port()},lmstudio=127.0.0.1:{closed_port()}"}
    )
    assert run.rc == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uji: error: no model chosen and no local server found")
    assert "--model" in lines[0] and "uji.model.use" in lines[0]


def test_the_probe_only_knocks_on_loopback(home: Home) -> None:
    (home.config / "init.lua").write_text("")
    run = home.uji("run", "hi", env={"UJI_PROBE_PORTS": "ollama=10.0.0.1:11434"})
    assert run.rc == 1
    assert "is not a loopback address" in run.stderr


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("provider", "hint"),
    [("ollama", "is `ollama serve` running?"), ("custom", "is the server running at that address?")],
)
def test_a_refused_local_connection_fails_at_once_with_the_url_and_a_hint(
    home: Home, provider: str, hint: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    home.init(
        f'uji.provider.add({{ id = "{provider}", base_url = "{url}" }})\n'
        f'uji.model.use({{ provider = "{provider}", model = "m" }})',
        provider=False,
    )
    run = home.run("hi")
    assert run.rc == 1
    error = run.done["error"]
    assert error.startswith(f"could not connect to {url} (connection refused)") and error.endswith(hint)
    assert not [n for n in run.notices if "retrying" in n]  # one attempt, no retries


def test_a_refused_remote_connection_is_still_retried(home: Home) -> None:
    """Only local addresses fail fast: this URL is not one, so the loop retries it."""
    from uji.agent.model_call import refused_locally
    from uji.wires.base import Failure, WireRequest

    failure = Failure("http", "could not connect: All connection attempts failed")

    def request(url: str) -> WireRequest:
        return WireRequest("m", "", [], [], {"id": "p", "base_url": url}, {})

    assert refused_locally(failure, request("https://api.example.com/v1"), None) is None
    for local in (
        "http://localhost:1/v1",
        "http://192.168.1.5:1/v1",
        "http://box.local/v1",
        "http://[::1]:1",
    ):
        assert refused_locally(failure, request(local), None) is not None, local
    timeout = Failure("http", "connection timed out: x")
    assert refused_locally(timeout, request("http://127.0.0.1:1/v1"), None) is None


async def titled_agent(tmp_path: Path, fake: FakeOpenAI) -> tuple[App, Agent, list[str]]:
    """An agent on the fake that titles its session with a side request, as the UI's does."""
    app, notices = await make_app(
        tmp_path,
        f"""
        uji.provider.add({{ id = "t", name = "T", api = "openai-chat", base_url = "{fake.base_url}",
          models = {{ "m" }} }})
        uji.model.use({{ provider = "t", model = "m" }})
        """,
    )
    sid = app.store.create_session(app.cwd)
    agent = Agent(app.turn_services(), sid, discard, auto_approver("allow"), TurnOptions(auto_title=True))
    return app, agent, notices


async def test_retry_notices_come_once_per_retry_not_per_side_request(tmp_path: Path) -> None:
    """The title request fails beside the turn; only the turn's retries are said."""
    with FakeOpenAI(side_calls=False) as fake:
        fails = [status(500, "down", headers={"retry-after": "0"}) for _ in range(4)]
        fake.script(*fails, text("Title"), text("answer"), text("Title"))
        app, agent, notices = await titled_agent(tmp_path, fake)
        result = await agent.turn("hello")
        assert agent.titler.task is not None
        await asyncio.gather(agent.titler.task, return_exceptions=True)
        turn_failures = [
            r for r in fake.requests if r.body.get("tools") and r.step is not None and r.step < 4
        ]
        retries = [n for n in notices if n.startswith("request failed")]
        assert result.error is None
        assert len(retries) == len(turn_failures) >= 1
        assert [n.endswith(f"({k}/5)") for k, n in enumerate(retries, 1)] == [True] * len(retries)
        await app.close()


async def test_after_an_interrupt_nothing_retries(tmp_path: Path) -> None:
    with FakeOpenAI(side_calls=False) as fake:
        fake.script(*[status(503, "busy", headers={"retry-after": "30"}) for _ in range(20)])
        app, agent, notices = await titled_agent(tmp_path, fake)
        turn = asyncio.get_running_loop().create_task(agent.turn("hello"))
        await until_async(lambda: any(n.startswith("request failed") for n in notices), what="a retry")
        turn.cancel()  # what Esc does
        result = await turn
        assert result.interrupted
        title = agent.titler.task
        assert title is not None and title.done() and title.cancelled()
        # Nothing of the turn is left to retry: no task but this one still runs.
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
        assert left == []
        assert len([n for n in notices if n.startswith("request failed")]) == 1
        await app.close()


# --------------------------------------------------------------------------- custom


def test_a_custom_endpoint_from_login_survives_a_restart(home: Home) -> None:
    home.init("", provider=False)

    async def login() -> None:
        from uji.paths import resolve

        app = App(resolve(str(home.config), str(home.data)), cwd=str(home.work))
        await app.load_config()
        app.models.set_custom(home.fake.base_url + "/")
        app.models.use_model("custom", "my-model")
        await app.close()

    asyncio.run(login())
    run = home.run("hi")  # a new process, no config
    assert run.rc == 0, run.stderr
    assert home.fake.turn_requests[0].body["model"] == "my-model"
    assert not run.notices  # no probe: the saved endpoint was used
    import sqlite3

    con = sqlite3.connect(home.db)
    try:
        saved = dict(con.execute("SELECT key, value FROM settings").fetchall())
    finally:
        con.close()
    assert saved["custom.base_url"] == home.fake.base_url
    assert not any("key" in k for k in saved)


async def test_login_custom_saves_the_endpoint_for_the_next_start(tmp_path: Path, fake: FakeOpenAI) -> None:
    """/login → Custom in the UI; then a new `uji run` process with no config uses it."""
    from tests.test_tui_support import SIZE, make_app, ready, send, shows, until
    from uji.tui.modals import PromptPanel, SelectPanel

    fake.models = ["listed-first", "other"]
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/login")
        await until(pilot, lambda: app.query(SelectPanel))
        assert "Custom (OpenAI-compatible) (custom)" in await shows(pilot, "Sign in to which provider?")
        await pilot.press("escape")
        await until(pilot, lambda: not app.query(SelectPanel))
        await send(pilot, "/login custom")  # the id picks it directly too
        for answer in (fake.base_url, ""):  # the URL; Enter alone: the first model it lists
            panel = (await until(pilot, lambda: app.query(PromptPanel))).first()
            panel.field().value = answer
            await pilot.press("enter")
            await until(pilot, lambda: not panel.is_attached)  # noqa: B023 - awaited here
        await shows(pilot, "now using custom/listed-first")
        await until(pilot, lambda: app.query(PromptPanel))  # the key, which it does not need
        await pilot.press("enter")
        await shows(pilot, "no key saved")
    # A new process with the same directories (and a config that chooses nothing).
    dirs = {"UJI_CONFIG_DIR": str(tmp_path / "config"), "UJI_DATA_DIR": str(tmp_path / "data")}
    run = Home(tmp_path / "again", fake).run("hi", env=dirs)
    assert run.rc == 0, run.stderr
    assert fake.turn_requests[-1].body["model"] == "listed-first"


async def test_the_screen_finds_a_local_server_by_itself(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_tui_support import SIZE, make_app, ready, shows

    fake.models = ["local-model"]
    monkeypatch.setenv("UJI_PROBE_PORTS", f"lmstudio=127.0.0.1:{fake.port}")
    app = make_app(tmp_path, None)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await shows(pilot, f"found LM Studio at {fake.base_url}: using lmstudio/local-model")
        await shows(pilot, "lmstudio/local-model ·")  # the footer


async def test_slash_models_lists_a_local_servers_models(tmp_path: Path, fake: FakeOpenAI) -> None:
    from tests.test_tui_support import SIZE, make_app, ready, send, shows

    fake.tags = ["qwen3:8b"]
    fake.models = ["qwen3:8b", "gemma3:1b"]
    app = make_app(tmp_path, fake, f'uji.provider.add({{ id = "ollama", base_url = "{fake.base_url}" }})')
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/models")
        screen = await shows(pilot, "Pick the model")
        assert "ollama/qwen3:8b" in screen and "ollama/gemma3:1b" in screen


async def test_model_use_base_url_overrides_resets_and_clears(tmp_path: Path) -> None:
    app, _ = await make_app(tmp_path)
    got = await lua(
        app,
        """
        local out = {}
        uji.model.use({ provider = "openai", model = "gpt-4.1", base_url = "http://proxy.test/v1/" })
        out.set = uji.model.current().base_url
        uji.model.use({ base_url = "" })
        out.reset = uji.model.current().base_url
        uji.model.use({ base_url = "http://proxy.test/v1" })
        uji.model.use({ provider = "groq" })
        out.switched = uji.model.current().base_url
        uji.model.use({ provider = "custom", base_url = "http://127.0.0.1:9/v1", model = "m" })
        out.custom = uji.provider.get("custom").base_url
        out.count = #uji.provider.list()
        return out
        """,
    )
    assert got == {
        "set": "http://proxy.test/v1",
        "reset": "https://api.openai.com/v1",
        "switched": "https://api.groq.com/openai/v1",
        "custom": "http://127.0.0.1:9/v1",
        "count": 23,  # custom joined the 22
    }
    assert app.models.setting("custom.base_url") == "http://127.0.0.1:9/v1"
    await app.close()
