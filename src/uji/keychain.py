"""The system keychain through its command-line tool: `security` on macOS, `secret-tool`
(libsecret) elsewhere. `uji.keychain.*` and the credentials of `uji.auth.configure
{keychain = true}` use it. Without either tool, every call raises KeychainError saying so.
A secret goes to `secret-tool` on its stdin, never on a command line; `security` takes
it as an argument (it has no other way)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    class Credential(TypedDict):
        """A saved credential, as auth.toml and the keychain hold it (providers/auth.py):
        an API key (`key`), or a sign-in (providers/oauth.py)."""

        type: str
        key: NotRequired[str]
        access: NotRequired[str]
        refresh: NotRequired[str]
        expires_at: NotRequired[int]


Action = Literal["get", "set", "delete"]
SECONDS = 10.0
NO_KEYCHAIN = "no system keychain here (needs `security` on macOS or `secret-tool` from libsecret)"


class KeychainError(Exception):
    pass


# The credentials this process read from or saved to the keychain, by (auth file,
# provider id): a keychain is asked once (uji.providers.auth), and tool results have
# these cut out like the keys of auth.toml (uji.tools.secrets).
credentials: dict[tuple[str, str], Credential | None] = {}
# Every string the keychain gave for them, the fields uji does not use included (a
# credential saved by another program may hold more than uji reads).
read: set[str] = set()


def keep_read(found: object) -> None:
    """What the keychain gave (its JSON, or a bare key), for secrets()."""
    if isinstance(found, str):
        read.add(found)
    elif isinstance(found, dict):
        read.update(v for k, v in found.items() if k != "type" and isinstance(v, str))


def secrets() -> list[str]:
    """Every secret string of the credentials above, and of what the keychain gave."""
    held = {
        value
        for entry in credentials.values()
        for key, value in (entry or {}).items()
        if key != "type" and isinstance(value, str)
    }
    return sorted(held | read)


def action_of(text: str) -> Action:
    for action in ("get", "set", "delete"):
        if text == action:
            return action
    raise KeychainError(f"no keychain action {text!r}")


def command(action: Action, service: str, account: str, secret: str | None) -> tuple[list[str], bytes | None]:
    """The argv of the action, and what goes to its stdin."""
    import shutil

    if sys.platform == "darwin" and shutil.which("security"):
        argv = {
            "get": ["security", "find-generic-password", "-s", service, "-a", account, "-w"],
            "set": [
                "security",
                "add-generic-password",
                "-U",
                "-s",
                service,
                "-a",
                account,
                "-w",
                secret or "",
            ],
            "delete": ["security", "delete-generic-password", "-s", service, "-a", account],
        }[action]
        return argv, None
    if shutil.which("secret-tool"):
        attrs = ["service", service, "account", account]
        argv = {
            "get": ["secret-tool", "lookup", *attrs],
            "set": ["secret-tool", "store", "--label", f"{service} {account}", *attrs],
            "delete": ["secret-tool", "clear", *attrs],
        }[action]
        return argv, (secret or "").encode() if action == "set" else None
    raise KeychainError(NO_KEYCHAIN)


def outcome(action: Action, argv: list[str], code: int, out: bytes, err: bytes) -> str | bool | None:
    """get: the secret, or None when there is none; set/delete: True. Raises on failure."""
    if action == "get":
        return out.decode("utf-8", "replace").rstrip("\n") if code == 0 else None
    if code != 0:
        said = err.decode("utf-8", "replace").strip()
        raise KeychainError(f"{argv[0]}: {said or f'exit status {code}'}")
    return True


def run(action: Action, service: str, account: str, secret: str | None = None) -> str | bool | None:
    """The action, waited for (a credential a request needs now)."""
    import subprocess

    argv, feed = command(action, service, account, secret)
    try:
        done = subprocess.run(
            argv,
            input=feed,
            stdin=None if feed is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise KeychainError(f"{argv[0]} did not answer within {SECONDS:.0f} s") from None
    except OSError as e:
        raise KeychainError(f"{argv[0]}: {e.strerror or e}") from None
    return outcome(action, argv, done.returncode, done.stdout, done.stderr)


async def run_async(
    action: Action, service: str, account: str, secret: str | None = None
) -> str | bool | None:
    """The action, on the event loop (uji.keychain.*)."""
    import asyncio

    argv, feed = command(action, service, account, secret)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if feed is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(SECONDS):
            out, err = await proc.communicate(feed)
    except TimeoutError:
        proc.kill()
        raise KeychainError(f"{argv[0]} did not answer within {SECONDS:.0f} s") from None
    return outcome(action, argv, proc.returncode or 0, out, err)
