"""The built-in slash commands, and a uji.command replacing one."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAI, text, tool_call
from tests.test_tui_support import SIZE, entries, idle, make_app, ready, send, shows, type_text, until
from uji.tui.modals import PromptPanel, SelectPanel

TWO_MODELS = """
uji.provider.add({ id = "test", models = { { id = "m", context = 100000 },
  { id = "deep", context = 200000, reasoning = true } } })
"""


async def choose(pilot, app, filter_text: str) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: app.query(SelectPanel) and app.mode() == "select")
    await type_text(pilot, filter_text)
    await pilot.press("enter")


async def test_login_saves_a_key_and_signs_out(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    auth_file = tmp_path / "data" / "auth.toml"
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/login")
        await choose(pilot, app, "(openai)")
        screen = await shows(pilot, "API key for OpenAI")
        assert "$OPENAI_API_KEY" in screen
        await type_text(pilot, "sk-test-123")
        assert "sk-test-123" not in await shows(pilot, "API key for OpenAI")
        await pilot.press("enter")
        await shows(pilot, "saved the key for OpenAI")
        assert tomllib.loads(auth_file.read_text())["openai"]["key"] == "sk-test-123"
        assert stat.S_IMODE(os.stat(auth_file).st_mode) == 0o600
        await send(pilot, "/login openai")
        await shows(pilot, "OpenAI is signed in")
        await choose(pilot, app, "out")
        await shows(pilot, "signed out of OpenAI")
        assert "openai" not in tomllib.loads(auth_file.read_text())


async def test_models_and_effort(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake, TWO_MODELS)
    async with app.run_test(size=SIZE) as pilot:
        uji = (await ready(pilot)).conversation.app
        assert uji is not None
        await send(pilot, "/effort")
        await shows(pilot, "test/m has no reasoning effort to pick")
        await send(pilot, "/models")
        screen = await shows(pilot, "Pick the model")
        assert "test/m (current)" in screen and "test/deep" in screen
        await choose(pilot, app, "deep")
        await shows(pilot, "model: test/deep")
        assert (uji.models.provider_id, uji.models.model_id) == ("test", "deep")
        assert uji.store.get_setting("model.test") == "deep"
        await send(pilot, "/effort")
        await choose(pilot, app, "high")
        await shows(pilot, "effort: high")
        assert uji.models.effort == "high"
        await shows(pilot, "test/deep · effort high")


async def test_new_keeps_the_draft_and_sessions_resumes_or_deletes(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = 'uji.keymap.add("normal", "<F2>", { command = "new" })\n'
    fake.script(text("first answer"))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        conv = (await ready(pilot)).conversation
        await send(pilot, "first question")
        await idle(pilot)
        first = conv.session_id
        await type_text(pilot, "my draft")
        await pilot.press("f2")
        await until(pilot, lambda: conv.session_id != first)
        assert app.composer.text == "my draft"
        assert not entries(app, "user")
        await pilot.press("ctrl+u")
        await send(pilot, "/sessions")
        await until(pilot, lambda: app.query(SelectPanel))
        assert conv.app is not None
        await choose(pilot, app, first[-12:])  # type: ignore[index]
        await choose(pilot, app, "Resume")
        await until(pilot, lambda: conv.session_id == first)
        await shows(pilot, "first answer")
        # Delete the (empty) other session.
        others = [s for s in conv.app.store.list_sessions(conv.app.cwd) if s["id"] != first]
        assert len(others) == 1
        await send(pilot, "/sessions")
        await choose(pilot, app, others[0]["id"][-12:])
        await choose(pilot, app, "Delete")
        await shows(pilot, "deleted")
        assert [s["id"] for s in conv.app.store.list_sessions(conv.app.cwd)] == [first]


async def test_reload_rereads_config_keeps_session_and_draft(tmp_path: Path, fake: FakeOpenAI) -> None:
    lua = 'uji.tool.policy({ run_command = { default = "allow" } })\nuji.keymap.add("normal", "<F3>", { command = "reload" })\n'
    fake.script(tool_call("run_command", {"command": "sleep 30"}))
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        conv = (await ready(pilot)).conversation
        session = conv.session_id
        await send(pilot, "wait")
        await until(pilot, lambda: any(e.get("status") == "running" for e in entries(app, "tool")))
        await pilot.press("f3")
        await shows(pilot, "/reload: finish or interrupt the turn first")
        await pilot.press("escape")
        await idle(pilot)
        init = tmp_path / "config" / "init.lua"
        init.write_text(init.read_text() + 'uji.notify("config version 2")\n')
        old_app = conv.app
        await type_text(pilot, "draft stays")
        await pilot.press("f3")
        await shows(pilot, "config version 2")
        await shows(pilot, "reloaded the config")
        assert conv.app is not old_app and conv.session_id == session
        assert app.composer.text == "draft stays"
        assert entries(app, "user")[0]["text"] == "wait"  # the history is shown again


async def test_help_compact_unknown_and_a_lua_command_replacing_a_builtin(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    lua = """
    uji.command.add("review", { desc = "review the diff", handler = function() end })
    uji.command.add("thinking", function() uji.notify("my own thinking command") end)
    """
    app = make_app(tmp_path, fake, lua)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/help")
        screen = await shows(pilot, "commands:")
        for name in ("/login", "/models", "/effort", "/compact", "/new", "/sessions", "/reload", "/quit"):
            assert name in screen
        assert "review the diff" in screen
        await send(pilot, "/thinking")
        await shows(pilot, "my own thinking command")
        await send(pilot, "/compact")
        await shows(pilot, "nothing compacted")
        await send(pilot, "/nope")
        await shows(pilot, "unknown command /nope — /help lists them")


async def test_quit_command_exits(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/quit")
        await until(pilot, lambda: app.return_code is not None, what="exit")
    assert app.return_code == 0


async def test_prompt_cancel_leaves_login_alone(tmp_path: Path, fake: FakeOpenAI) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, "/login groq")
        await until(pilot, lambda: app.query(PromptPanel))
        await pilot.press("escape")
        await until(pilot, lambda: not app.query(PromptPanel))
        assert not (tmp_path / "data" / "auth.toml").exists()
        assert app.composer.has_focus


async def test_new_output_after_scrolling_up_keeps_the_place_and_says_new_below(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for _ in range(4):  # enough to scroll
            await send(pilot, "/help")
        await until(
            pilot, lambda: app.transcript.max_scroll_y > 20, what="a transcript taller than the screen"
        )
        await pilot.press("pageup", "pageup")
        await until(pilot, lambda: not app.transcript._following(), what="the user to have scrolled up")
        place = app.transcript.scroll_y
        await send(pilot, "!echo fresh-output")
        await shows(pilot, "new entry below")
        assert app.transcript.scroll_y == place  # still where the user was reading
        for _ in range(20):  # PageDown to the end: the hint goes
            if not app.new_below.display:
                break
            await pilot.press("pagedown")
            await pilot.pause()
        assert not app.new_below.display
        await shows(pilot, "fresh-output")


async def test_compact_says_it_once(tmp_path: Path, fake: FakeOpenAI) -> None:
    fake.script(*[text(f"answer {i}") for i in range(4)])
    app = make_app(tmp_path, fake)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for i in range(4):
            await send(pilot, f"question {i}")
            await shows(pilot, f"answer {i}")
            await idle(pilot)
        await send(pilot, "/compact")
        await until(pilot, lambda: [e for e in entries(app, "info") if e.get("label") == "compacted"])
        await idle(pilot)
        said = [e for e in app.transcript.entries if "compacted" in str(e.data)]
        assert len(said) == 1, said


async def test_login_offers_a_subscription_sign_in_for_a_provider_with_oauth(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/login → a provider with `oauth` → "Subscription (browser sign-in)": the browser
    (here a thread that follows the redirects, as tests/browser.py does) comes back on
    uji's loopback callback, and the sign-in is saved 0600 like a key."""
    import threading
    import urllib.request

    from tests.fakes.oauth_server import FakeAuthServer
    from uji.providers import oauth

    def browse(url: str) -> None:
        threading.Thread(target=lambda: urllib.request.urlopen(url, timeout=30).read(), daemon=True).start()

    monkeypatch.setattr(oauth, "open_browser", browse)
    with FakeAuthServer() as server:
        lua = f"""
        uji.provider.add({{ id = "sub", name = "Sub", api = "openai-chat", base_url = "{fake.base_url}",
          models = {{ "m" }}, oauth = {{ client_id = "c", authorize_url = "{server.url}/authorize",
          token_url = "{server.url}/token" }} }})
        """
        app = make_app(tmp_path, fake, lua)
        auth_file = tmp_path / "data" / "auth.toml"
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            await send(pilot, "/login sub")
            await shows(pilot, "Sign in to Sub")
            await choose(pilot, app, "Subscription")
            await shows(pilot, "signed in to Sub")
            entry = tomllib.loads(auth_file.read_text())["sub"]
            assert entry["type"] == "oauth" and entry["access"] in server.access
            assert stat.S_IMODE(os.stat(auth_file).st_mode) == 0o600
            await shows(pilot, "now using sub/m")
