"""The terminal UI (`uji`, `uji new`, `uji resume`).

This package's `__init__` imports no Textual: Textual costs about 155 ms to import, and
only the screen needs it. `uji run` and the Lua bridge reach nothing here: they talk to
the UI port (`uji.ui`), which `host.ScreenUi` implements for the screen."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.early_frame import Painted
    from uji.paths import Paths
    from uji.tui.app import UjiApp


def pick_session(paths: Paths, runs: bool = False) -> int:
    """`uji list` at a terminal: the screen on the latest session, with its session
    picker open (resume or delete); `runs`: the picker of the one-shot runs."""
    from uji.tui.app import UjiApp
    from uji.tui.terminal import enable_alt_enter

    enable_alt_enter()
    app = UjiApp(paths, latest=True)
    app._early.append("/sessions runs" if runs else "/sessions")  # runs as soon as the config has loaded
    code = app.run()
    _say_how_to_resume(app)
    return code or 0


def main(
    paths: Paths,
    resume: str | None = None,
    latest: bool = False,
    prompt: str | None = None,
    early: Painted | None = None,
) -> int:
    """Open the screen on a new session, the latest one of the cwd (`latest`), or `resume`;
    `prompt` is sent as soon as the session is open. `early`: the first frame painted
    before Textual loaded (uji.early_frame), whose terminal mode is put back at the end."""
    if resume is not None:
        problem = _check_session(paths, resume)
        if problem:
            print(f"uji: error: {problem}", file=sys.stderr)
            return 1
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        print("uji: error: the screen needs a terminal; use `uji run PROMPT` without one", file=sys.stderr)
        return 1
    from uji.tui.app import UjiApp
    from uji.tui.terminal import enable_alt_enter

    enable_alt_enter()
    app = UjiApp(paths, resume=resume, latest=latest, prompt=prompt)
    try:
        with _sigint_quits(app):
            code = app.run()
    finally:
        if early is not None:
            early.restore(screen_started=True)
    _say_how_to_resume(app)
    _restart_if_asked(app)
    from uji.restart import exit_code

    return exit_code(code or 0)


def _restart_if_asked(app: UjiApp) -> None:
    """uji.os.restart{args = ...}: the screen has gone; `uji ARGS` replaces this process."""
    done = app.conversation.app
    asked = done.ui.restart_requested if done is not None else None
    if asked is not None and asked.args is not None:
        from uji.lua.runtime import flush_c_stdio
        from uji.restart import exec_into

        flush_c_stdio()
        exec_into(asked)


def _say_how_to_resume(app: UjiApp) -> None:
    """After the screen is gone, as Claude Code and Codex do: how to come back (and what
    became of the session's worktree)."""
    for note in app.leaving.exit_notes:
        print(note)
    if app.leaving.resume_hint is not None:
        print(f"Resume this session with: uji resume --id {app.leaving.resume_hint}")


@contextlib.contextmanager
def _sigint_quits(app: UjiApp) -> Iterator[None]:
    """SIGINT (from outside: the terminal's Ctrl+C is a key here) quits like Ctrl+C,
    after stopping any Lua that runs, even while the config loads."""

    def handle(signum: int, frame: Any) -> None:
        app.conversation.break_lua()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not started yet, or already gone
        loop.call_soon_threadsafe(lambda: app.spawn(app.quit()))

    previous = signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_session(paths: Paths, session_id: str) -> str | None:
    from uji.store.sessions import Store, StoreError, is_session_id

    if not is_session_id(session_id):
        return f"not a session id: {session_id!r} (ids look like 0190a1b2-…; `uji list` shows them)"

    try:
        with Store(paths.db) as store:
            if store.get_session(session_id) is None:
                return f"no session {session_id}"
    except StoreError as e:
        return str(e)
    return None
