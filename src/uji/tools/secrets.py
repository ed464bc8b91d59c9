"""Keys stay secret (SPEC §2): what counts as a secret, cutting it out of tool results, and
the environment commands run with.

The known secrets are the value of every provider's `auth_env` variable that is set, every
key saved in `<data>/auth.toml`, and the MCP servers' OAuth tokens and client secrets kept
beside it in `<data>/mcp-auth.json` (uji.mcp_tokens). A tool result has them replaced by
`[redacted NAME]` once, in the tool-call path, before it reaches the model, the database,
the events, the screen or an `after_tool` hook. `run_command` output is redacted as it
streams, so the overflow file and the progress line never hold a key either.

Commands (`run_command`, `uji.job.start`) run without the providers' key variables unless
the config keeps them with `uji.tool.inherit_keys`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, AnyStr

MIN_SECRET = 8  # shorter values ("x", "test") would garble ordinary output


class Redactor:
    """Replaces each known secret in a text (the mapping's keys) by its replacement (the
    values). No order among them is needed: cut_out finds every occurrence of each first."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.pairs = list(secrets.items())

    def __bool__(self) -> bool:
        return bool(self.pairs)

    def __call__(self, text: str) -> str:
        return cut_out(text, self.pairs)

    def stream(self) -> StreamRedactor:
        return StreamRedactor(self.pairs)


def cut_out(text: AnyStr, pairs: Sequence[tuple[AnyStr, AnyStr]]) -> AnyStr:
    """`text` with every byte of every secret's occurrences cut out: a run of overlapping
    occurrences becomes the labels of the ones no other occurrence holds. (Replacing one
    secret after another would leave the start of a key whose end another key took.)"""
    spans: list[tuple[int, int, AnyStr]] = []
    for secret, label in pairs:
        at = text.find(secret)
        while at != -1:
            spans.append((at, at + len(secret), label))
            at = text.find(secret, at + 1)
    if not spans:
        return text
    spans.sort(key=lambda s: (s[0], -s[1]))
    parts: list[AnyStr] = []
    pos = i = 0
    while i < len(spans):
        start, end, label = spans[i]
        labels: list[AnyStr] = [label]
        i += 1
        while i < len(spans) and spans[i][0] < end:
            if spans[i][1] > end:  # runs on past the others: its label shows too
                end = spans[i][1]
                labels.append(spans[i][2])
            i += 1
        parts.append(text[pos:start])
        parts.extend(labels)
        pos = end
    parts.append(text[pos:])
    return text[:0].join(parts)


class StreamRedactor:
    """The same for a byte stream cut into arbitrary chunks. The end of a chunk that could
    be the start of a secret is held back, unreplaced, until the next chunk (or `flush`)
    shows it: a shorter secret complete there may be the start of a longer one, and the
    part sent on ends where no secret runs across the cut."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self._pairs = [(s.encode(), replacement.encode()) for s, replacement in pairs]
        self._pending = b""

    def feed(self, data: bytes) -> bytes:
        if not self._pairs:
            return data
        buf = self._pending + data
        cut = self._safe_cut(buf, len(buf) - self._partial(buf))
        self._pending = buf[cut:]
        return self._replace(buf[:cut])

    def flush(self) -> bytes:
        out, self._pending = self._pending, b""
        return self._replace(out)

    def _replace(self, buf: bytes) -> bytes:
        return cut_out(buf, self._pairs)

    def _partial(self, buf: bytes) -> int:
        """The length of the longest end of `buf` that begins some secret (and is shorter
        than it: a whole one may still begin a longer one)."""
        longest = max(len(s) for s, _ in self._pairs) - 1
        for k in range(min(longest, len(buf)), 0, -1):
            tail = buf[-k:]
            if any(s.startswith(tail) and len(s) > k for s, _ in self._pairs):
                return k
        return 0

    def _safe_cut(self, buf: bytes, cut: int) -> int:
        """`cut` moved back to the start of any secret in `buf` that runs across it, so
        the part before it is replaced with each of its secrets whole."""
        moved = True
        while moved:
            moved = False
            for secret, _ in self._pairs:
                start = buf.find(secret, max(cut - len(secret) + 1, 0))
                if start != -1 and start < cut:
                    cut, moved = start, True
        return cut


def _saved(auth_file: str) -> dict[str, str]:
    """The strings saved in auth.toml, each labelled with its provider. Read whatever the
    file's mode: a key that uji refuses to use is still a key to keep out of results."""
    try:
        with open(auth_file, "rb") as f:
            raw = f.read()
    except OSError:
        return {}
    import tomllib  # only with a file to parse: most runs have none, and start-up stays lean

    try:
        data = tomllib.loads(raw.decode())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}
    found: dict[str, str] = {}

    def walk(value: Any, label: str, key: str) -> None:
        if isinstance(value, str):
            if key != "type":
                found.setdefault(value, label)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, label, str(k))

    for provider_id, entry in data.items():
        walk(entry, f"{provider_id} key", "key")
    return found


def known_secrets(key_variables: Iterable[str], auth_file: str) -> Redactor:
    """The redactor for the secrets known now: the environment's keys (the values of the
    providers' `key_variables`, uji.providers.catalog.Catalog.key_variables) and the saved ones."""
    found: dict[str, str] = {}
    for var in key_variables:
        value = os.environ.get(var)
        if value:
            found.setdefault(value, var)
    for value, label in _saved(auth_file).items():
        found.setdefault(value, label)
    import sys

    keychain = sys.modules.get("uji.keychain")  # loaded once a keychain was used
    for value in keychain.secrets() if keychain is not None else ():  # uji.auth.configure's
        found.setdefault(value, "keychain credential")
    from uji import mcp_tokens as tokens

    for value, label in tokens.secrets(os.path.dirname(auth_file) or ".").items():
        found.setdefault(value, label)
    return Redactor({s: f"[redacted {label}]" for s, label in found.items() if len(s) >= MIN_SECRET})


def child_env(key_variables: Iterable[str], inherit: bool | list[str]) -> dict[str, str]:
    """The environment for a command uji starts: uji's own, without the providers' key
    variables (except those `inherit` keeps), and with GIT_TERMINAL_PROMPT=0."""
    env = dict(os.environ)
    if inherit is not True:
        keep = set(inherit or [])
        for var in key_variables:
            if var not in keep:
                env.pop(var, None)
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env
