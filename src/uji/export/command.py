"""`uji export`: a session written to stdout or a file."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from uji.paths import Paths

if TYPE_CHECKING:
    from uji.export import Format
    from uji.store.sessions import Store


def export_text(store: Store, paths: Paths, session_id: str, fmt: Format) -> str:
    """The session in `fmt`, with the known secrets cut out once more."""
    from uji.export import render
    from uji.providers.catalog import Catalog
    from uji.tools.secrets import known_secrets

    session = store.get_session(session_id)
    if session is None:
        raise KeyError(session_id)
    text = render(session, store.messages(session_id), fmt, store.usage(session_id))
    return known_secrets(Catalog().key_variables(), paths.auth_file)(text)


def export_command(paths: Paths, session_id: str | None, fmt: Format, output: str | None) -> int:
    from uji.store.sessions import Store

    store = Store(paths.db)
    try:
        if session_id is None:
            session_id = store.latest_session(os.path.realpath(os.getcwd()))
            if session_id is None:
                print(
                    "uji: error: no session in this directory; pass --id ID (`uji list` shows them)",
                    file=sys.stderr,
                )
                return 1
        elif store.get_session(session_id) is None:
            print(f"uji: error: no session {session_id}", file=sys.stderr)
            return 1
        text = export_text(store, paths, session_id, fmt)
    finally:
        store.close()
    if output is None or output == "-":
        from uji.stdio import silence, write_all

        try:
            write_all(sys.stdout, text)
            sys.stdout.flush()
        except BrokenPipeError:
            silence(sys.stdout)
        return 0
    try:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        print(f"uji: error: -o {output}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"uji: wrote {output}", file=sys.stderr)
    return 0
