"""What OAuth left each MCP server: `<data>/mcp-auth.json`, beside the provider keys'
auth.toml and, like it, mode 0600 from the start (written whole to a `mkstemp` file, then
renamed over the old one).

One entry per server name, for the URL it was granted for (a server whose `url` changed
starts again): the token the authorization server issued and when it expires, the client
registration (dynamic, or the metadata document's), the metadata discovered on the way
(so a refresh on the next run knows the token endpoint), and the scope a step-up asked
for, which the next `uji mcp login` asks for too. The SDK's models are stored as the JSON
they dump; this module does not import the SDK (the redactor reads the file on every run).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TypedDict, cast

FILE = "mcp-auth.json"
MAX_BYTES = 4 * 1024 * 1024
# The fields whose values are secrets, wherever they sit in an entry: the redactor cuts
# them out of tool results, notices, diagnostics and exports.
SECRET_FIELDS = ("access_token", "refresh_token", "client_secret", "id_token")

Json = dict[str, object]


class Entry(TypedDict, total=False):
    url: str  # the server's URL the rest was granted for
    tokens: Json  # the SDK's OAuthToken
    expires_at: float | None  # time.time() when the access token expires (None: it does not say)
    client: Json  # the SDK's OAuthClientInformationFull
    metadata: Json  # the authorization server's metadata (OAuthMetadata)
    resource: Json  # the protected resource metadata (ProtectedResourceMetadata)
    scope: str  # what a step-up (403 insufficient_scope) asked for


def path(data_dir: str) -> str:
    return os.path.join(data_dir, FILE)


def read_all(data_dir: str) -> dict[str, Entry]:
    try:
        with open(path(data_dir), "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        table = json.loads(raw) if len(raw) <= MAX_BYTES else {}
    except (OSError, ValueError):
        return {}
    if not isinstance(table, dict):
        return {}
    return {name: cast(Entry, entry) for name, entry in table.items() if isinstance(entry, dict)}


def entry(data_dir: str, name: str, url: str) -> Entry:
    """What is kept for server `name` at `url` (empty if nothing, or for another URL)."""
    found = read_all(data_dir).get(name)
    return found if found is not None and found.get("url") == url else Entry()


def save(data_dir: str, name: str, url: str, new: Entry) -> None:
    """Merge `new` into the server's entry (an entry for another URL is replaced)."""
    table = read_all(data_dir)
    old = table.get(name)
    merged = Entry(url=url) if old is None or old.get("url") != url else old
    merged.update(new)
    table[name] = merged
    _write(data_dir, table)


def forget(data_dir: str, name: str) -> bool:
    """Drop everything kept for `name` (`uji mcp logout`); True if there was something."""
    table = read_all(data_dir)
    if table.pop(name, None) is None:
        return False
    _write(data_dir, table)
    return True


def _write(data_dir: str, table: dict[str, Entry]) -> None:
    import tempfile  # here: the redactor reads this module's file on every run

    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".mcp-auth-", suffix=".json", dir=data_dir)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(table, f, ensure_ascii=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path(data_dir))
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def secrets(data_dir: str) -> dict[str, str]:
    """Every secret kept in the file, each labelled with its server: for the redactor."""
    found: dict[str, str] = {}

    def walk(value: object, label: str) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in SECRET_FIELDS and isinstance(inner, str) and inner:
                    found.setdefault(inner, label)
                else:
                    walk(inner, label)

    for name, kept in read_all(data_dir).items():
        walk(kept, f"mcp {name} token")
    return found
