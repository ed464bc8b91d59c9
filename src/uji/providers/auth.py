"""API keys: `<data>/auth.toml` (mode 0600, one table per provider) and the provider's
`auth_env` variables. A saved key wins; an empty variable counts as unset."""

from __future__ import annotations

import os
import stat
from typing import Any

from uji.providers.catalog import Provider


class AuthError(Exception):
    pass


def _read_auth_file(path: str) -> dict[str, Any]:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    if stat.S_IMODE(st.st_mode) & 0o077:
        raise AuthError(
            f"{path} is readable by others (mode {stat.S_IMODE(st.st_mode):o}); "
            f"run `chmod 600 {path}` so uji will use it"
        )
    import tomllib

    with open(path, "rb") as f:
        try:
            return tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise AuthError(f"{path}: {e}") from None


def saved_key(path: str, provider_id: str) -> str | None:
    entry = _read_auth_file(path).get(provider_id)
    if isinstance(entry, str):
        return entry or None
    if isinstance(entry, dict):
        key = entry.get("key")
        return key if isinstance(key, str) and key else None
    return None


def find_key(path: str, provider: Provider) -> str | None:
    key = saved_key(path, provider.id)
    if key:
        return key
    for var in provider.auth_env:
        value = os.environ.get(var)
        if value:
            return value
    return None


def missing_key_message(provider: Provider) -> str:
    if provider.auth_env:
        names = " or ".join(provider.auth_env)
        return f"no API key for {provider.name}: set {names}, or save one with /login"
    return f"no API key for {provider.name}: save one with /login"
