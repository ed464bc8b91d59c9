"""Credentials: `<data>/auth.toml` (mode 0600, one table per provider), the system
keychain when `uji.auth.configure{keychain = true}` asks for it, and the provider's
`auth_env` variables. A saved credential wins; an empty variable counts as unset.

The file holds `[<provider id>]` tables with `type = "api_key"` and `key = "…"`, or
`type = "oauth"` with `access`, `refresh` and `expires_at` (providers/oauth.py); a bare
string value means an API key. It is read with the stdlib `tomllib` and written by
tomli-w. In the keychain a credential is the same table as JSON, under service `uji`
and the provider's id as the account (the original's layout); a keychain that refuses a
save leaves the credential in the file instead.
"""

from __future__ import annotations

import os
import stat
import tempfile
from typing import TYPE_CHECKING, Any

from uji.providers.catalog import Provider

if TYPE_CHECKING:
    from uji.keychain import Credential
    from uji.providers.oauth import OAuthSettings, Session


class AuthError(Exception):
    pass


KEYCHAIN_SERVICE = "uji"
# The auth files whose credentials go to the keychain (uji.auth.configure); what was read
# from it is kept in uji.keychain.credentials.
_keychain_files: set[str] = set()


def use_keychain(path: str, on: bool) -> str | None:
    """Keep the credentials of `path` in the keychain (or not); the reason it cannot,
    when there is none to use (they stay in the file)."""
    if not on:
        _keychain_files.discard(path)
        return None
    from uji.keychain import KeychainError, command

    try:
        command("get", KEYCHAIN_SERVICE, "probe", None)
    except KeychainError as e:
        return f"{e}; credentials stay in {path}"
    _keychain_files.add(path)
    return None


def credential_of(raw: object) -> Credential | None:
    """A saved credential as uji uses it, from what auth.toml or the keychain held: a
    bare string is an API key, a table says its `type` (one without is an API key if it
    has one); a field of the wrong type is left out (it could not be used)."""
    if isinstance(raw, str):
        return {"type": "api_key", "key": raw} if raw else None
    if not isinstance(raw, dict):
        return None
    if not isinstance(raw.get("type"), str) or not raw["type"]:
        key = raw.get("key")
        return {"type": "api_key", "key": key} if isinstance(key, str) and key else None
    found: Credential = {"type": raw["type"]}
    if isinstance(raw.get("key"), str):
        found["key"] = raw["key"]
    if isinstance(raw.get("access"), str):
        found["access"] = raw["access"]
    if isinstance(raw.get("refresh"), str):
        found["refresh"] = raw["refresh"]
    if isinstance(raw.get("expires_at"), int):
        found["expires_at"] = raw["expires_at"]
    return found


def _keychain_entry(path: str, provider_id: str) -> Credential | None:
    from uji.keychain import KeychainError, credentials, keep_read, run

    if (path, provider_id) in credentials:
        return credentials[(path, provider_id)]
    try:
        raw = run("get", KEYCHAIN_SERVICE, provider_id)
    except KeychainError:
        raw = None
    entry: Credential | None = None
    if isinstance(raw, str) and raw:
        import json

        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        keep_read(parsed if isinstance(parsed, dict) else raw)  # all of it is cut from tool results
        # The credential as JSON, or (a key saved by hand) the key itself.
        entry = (credential_of(parsed) if isinstance(parsed, dict) else None) or credential_of(raw)
    credentials[(path, provider_id)] = entry
    return entry


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


def saved_entry(path: str, provider_id: str) -> Credential | None:
    """A provider's saved credential: from the keychain when it is used, else the file."""
    if path in _keychain_files:
        found = _keychain_entry(path, provider_id)
        if found is not None:
            return found
    return credential_of(_read_auth_file(path).get(provider_id))


def saved_key(path: str, provider_id: str) -> str | None:
    entry = saved_entry(path, provider_id)
    key = entry.get("key") if entry is not None else None
    return key if isinstance(key, str) and key else None


def env_key(provider: Provider) -> str | None:
    for var in provider.auth_env:
        value = os.environ.get(var)
        if value:  # an empty variable counts as unset
            return value
    return None


def find_key(path: str, provider: Provider) -> str | None:
    return saved_key(path, provider.id) or env_key(provider)


def authenticated(path: str, provider: Provider) -> bool:
    """A saved key or sign-in, or an `auth_env` hit. Raises AuthError for an unusable
    auth.toml."""
    return saved_entry(path, provider.id) is not None or env_key(provider) is not None


def save_key(path: str, provider_id: str, key: str) -> None:
    """Save an API key for a provider, keeping the file's other entries.

    The file is replaced atomically, and the new one is created with mode 0600 from the
    start (`mkstemp`), so the key is never readable by others, not even briefly.
    Raises AuthError if the existing file cannot be used or the write fails.
    """
    if not key:
        raise AuthError("the key must be a non-empty string")
    save_credential(path, provider_id, {"type": "api_key", "key": key})


def save_credential(path: str, provider_id: str, credential: Credential) -> None:
    """Save a provider's credential: in the keychain when it is used and takes it, else
    in the file (its other entries kept). Raises AuthError if neither can."""
    if path in _keychain_files:
        import json

        from uji.keychain import KeychainError, credentials, run

        try:
            run("set", KEYCHAIN_SERVICE, provider_id, json.dumps(credential))
        except KeychainError:
            pass  # the file keeps it (the original's fallback)
        else:
            credentials[(path, provider_id)] = credential
            return
    data = _read_auth_file(path)
    data[provider_id] = credential
    _write_auth_file(path, data)


def remove_key(path: str, provider_id: str) -> bool:
    """Drop a provider's entry (sign out); True if there was one. Raises AuthError."""
    if path in _keychain_files:
        from uji.keychain import KeychainError, credentials, run

        had = _keychain_entry(path, provider_id) is not None
        credentials[(path, provider_id)] = None
        try:
            run("delete", KEYCHAIN_SERVICE, provider_id)
        except KeychainError:
            pass
        if had and provider_id not in _read_auth_file(path):
            return True
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


# A request's sign-in ---------------------------------------------------------------------


def signed_in_session(path: str, provider_id: str, settings: OAuthSettings) -> Session | None:
    """What a request to a provider signed in by subscription carries, or None."""
    entry = saved_entry(path, provider_id)
    if entry is None or entry.get("type") != "oauth":
        return None
    from uji.providers.oauth import session

    return session(settings, entry)


async def refresh_if_expired(path: str, provider_id: str, name: str, settings: OAuthSettings) -> None:
    """Before a request: an expired sign-in is refreshed and saved. A refresh that fails
    fails the request (`provider`: signing in again is the way out)."""
    from uji.providers.oauth import LoginError, expired, refresh
    from uji.wires.base import Failure

    try:
        entry = saved_entry(path, provider_id)
    except AuthError:
        return  # the request says why the file cannot be used
    if entry is None or entry.get("type") != "oauth" or not expired(entry):
        return
    try:
        fresh = await refresh(settings, str(entry.get("refresh") or ""))
        save_credential(path, provider_id, fresh)
    except (LoginError, AuthError) as e:
        raise Failure(
            "provider", f"the sign-in to {name} could not be refreshed ({e}); sign in again"
        ) from None
