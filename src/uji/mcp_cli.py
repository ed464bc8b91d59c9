"""`uji mcp login NAME` and `uji mcp logout NAME`: an HTTP server's OAuth token, got in the
browser and kept in `<data>/mcp-auth.json`, or forgotten."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.paths import Paths


async def login_command(paths: Paths, name: str) -> int:
    """Read the config (starting no server), then log in to `name` (uji.mcp.auth.login)."""
    from uji.app import App
    from uji.mcp.auth import LoginError, login

    app = App(paths, notice=lambda text: print(f"uji: {text}", file=sys.stderr, flush=True))
    app.mcp.dormant = True
    try:
        await app.load_config()
        try:
            line = await login(app.mcp, name, say=lambda text: print(text, flush=True))
        except LoginError as e:
            print(f"uji: error: {e}", file=sys.stderr, flush=True)
            return 1
        print(line, flush=True)
        return 0
    finally:
        await app.close()


def logout_command(paths: Paths, name: str) -> int:
    from uji import mcp_tokens as tokens

    if tokens.forget(paths.data, name):
        print(f"forgot the authorization kept for {name}")
    else:
        print(f"nothing kept for {name}")
    return 0
