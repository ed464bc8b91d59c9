"""API keys: `<data>/auth.toml` (mode 0600, one table per provider) and the provider's
`auth_env` variables. A saved key wins; an empty variable counts as unset.

The file holds `[<provider id>]` tables with `type = "api_key"` and `key = "…"` (other
types, such as OAuth data, are kept as they are); a bare string value means an API key.
It is read with the stdlib `tomllib` and written by the small writer below, which only
needs to round-trip what `tomllib` gives back, so no TOML dependency is needed.
"""

from __future__ import annotations

import os
import stat
import tempfile
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
    import tomllib  # here, not at the top: most runs have no auth file to read

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


def env_key(provider: Provider) -> str | None:
    for var in provider.auth_env:
        value = os.environ.get(var)
        if value:  # an empty variable counts as unset
            return value
    return None


def find_key(path: str, provider: Provider) -> str | None:
    return saved_key(path, provider.id) or env_key(provider)


def authenticated(path: str, provider: Provider) -> bool:
    """A saved key or an `auth_env` hit. Raises AuthError for an unusable auth.toml."""
    return find_key(path, provider) is not None


def save_key(path: str, provider_id: str, key: str) -> None:
    """Save an API key for a provider, keeping the file's other entries.

    The file is replaced atomically, and the new one is created with mode 0600 from the
    start (`mkstemp`), so the key is never readable by others, not even briefly.
    Raises AuthError if the existing file cannot be used or the write fails.
    """
    if not key:
        raise AuthError("the key must be a non-empty string")
    data = _read_auth_file(path)
    data[provider_id] = {"type": "api_key", "key": key}
    _write_auth_file(path, data)


def remove_key(path: str, provider_id: str) -> bool:
    """Drop a provider's entry (sign out); True if there was one. Raises AuthError."""
    data = _read_auth_file(path)
    if data.pop(provider_id, None) is None:
        return False
    _write_auth_file(path, data)
    return True


def _write_auth_file(path: str, data: dict[str, Any]) -> None:
    """Replace auth.toml atomically with a file created 0600 (`mkstemp`)."""
    text = dumps(data) if data else ""
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".auth-", suffix=".toml", dir=folder)
    except OSError as e:
        raise AuthError(f"could not write {path}: {e.strerror or e}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise AuthError(f"could not write {path}: {e.strerror or e}") from None


def missing_key_message(provider: Provider) -> str:
    if provider.auth_env:
        names = " or ".join(provider.auth_env)
        return f"no API key for {provider.name}: set {names}, or save one with /login"
    return f"no API key for {provider.name}: save one with /login"


def dumps(data: dict[str, Any]) -> str:
    """auth.toml's text, written by tomli-w (what `tomllib` reads back)."""
    import tomli_w

    try:
        return tomli_w.dumps(data)
    except (TypeError, ValueError) as e:
        raise AuthError(f"auth.toml: cannot write it: {e}") from None
