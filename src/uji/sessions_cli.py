"""`uji list` and `uji delete ID`: sessions from the command line."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable

from uji.paths import Paths


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


def listing(paths: Paths, as_json: bool = False, runs: bool = False) -> int:
    """The conversations of this directory (with `runs`, its one-shot `uji run`s instead),
    newest first: title, updated, id. At a terminal the session picker opens instead. With
    `as_json`, one object per line: `{id, title, directory, updated}` (updated in ms since
    the epoch), for scripts."""
    import json

    from uji.store.sessions import Store

    store = Store(paths.db)
    try:
        here = os.path.realpath(os.getcwd())
        rows = store.list_sessions(here, kind="run" if runs else "conversation")
        others = 0 if rows or runs else len(store.list_sessions(here, kind="run"))
    finally:
        store.close()
    if as_json:
        return _print_lines(json.dumps(r, ensure_ascii=False) for r in rows)
    if rows and sys.stdout.isatty() and sys.stdin.isatty():
        from uji.tui import pick_session

        return pick_session(paths, runs)
    if not rows and not runs and others:
        print(f"no conversations here; `uji list --runs` lists {others} one-shot `uji run`s", file=sys.stderr)
    width = max((len(r["title"]) for r in rows), default=5)
    width = min(max(width, 5), 60)
    return _print_lines(f"{r['title'][:60]:<{width}}  {_when(r['updated'])}  {r['id']}" for r in rows)


def _print_lines(lines: Iterable[str]) -> int:
    """Print lines; a reader that goes away (`uji list | head -1`) ends it quietly."""
    from uji.stdio import silence

    try:
        for line in lines:
            print(line, flush=True)
    except BrokenPipeError:
        silence(sys.stdout)
    return 0


def delete(paths: Paths, session_id: str) -> int:
    from uji.store.sessions import Store, is_session_id

    if not is_session_id(session_id):
        print(f"uji: error: not a session id: {session_id}", file=sys.stderr)
        return 2
    store = Store(paths.db)
    try:
        if not store.delete_session(session_id):
            print(f"uji: error: no session {session_id}", file=sys.stderr)
            return 1
    finally:
        store.close()
    print(f"deleted {session_id}")
    return 0
