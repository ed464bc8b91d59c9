"""The diagnostics log, `<data>/diagnostics.log`: what went wrong that a user may want to
read later (a config error, a failing hook or timer, a pack that would not fetch, a call
of a function this uji lacks). One line per entry, `YYYY-MM-DD HH:MM:SS<TAB>source<TAB>text`
(newlines in the text kept as `\\n`), secrets cut out before anything is written. Past
1 MB the file is trimmed to its newest half megabyte. `uji.diagnostics.list` and
`/diagnostics` read it back, newest first, without repeats.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypedDict

LOG_NAME = "diagnostics.log"
MAX_BYTES = 1024 * 1024
KEEP_BYTES = 512 * 1024
MAX_ENTRY = 8 * 1024  # characters of one entry's text


class Entry(TypedDict):
    time: str
    source: str
    text: str


class Diagnostics:
    def __init__(self, data_dir: str, redact: Callable[[str], str] | None = None) -> None:
        self.path = os.path.join(data_dir, LOG_NAME)
        self._redact = redact

    def set_redactor(self, redact: Callable[[str], str]) -> None:
        self._redact = redact

    def add(self, source: str, text: str) -> None:
        """Appends an entry; a log that cannot be written is skipped (it must never stop uji)."""
        if self._redact is not None:
            text = self._redact(text)
        text = text[:MAX_ENTRY].replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
        source = source.replace("\t", " ").replace("\n", " ")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        line = f"{stamp}\t{source}\t{text}\n".encode("utf-8", "replace")
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line)
                size = os.fstat(fd).st_size
            finally:
                os.close(fd)
            if size > MAX_BYTES:
                self._trim()
        except OSError:
            pass

    def _trim(self) -> None:
        with open(self.path, "rb") as f:
            f.seek(-KEEP_BYTES, os.SEEK_END)
            tail = f.read()
        cut = tail.find(b"\n")
        tail = tail[cut + 1 :] if cut >= 0 else b""
        tmp = self.path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(tail)
        os.replace(tmp, self.path)

    def list(self, limit: int = 1000) -> list[Entry]:
        """Newest first; an entry seen again (same source and text) only once, at its newest."""
        try:
            with open(self.path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - MAX_BYTES))
                data = f.read()
        except OSError:
            return []
        out: list[Entry] = []
        seen: set[tuple[str, str]] = set()
        for raw in reversed(data.decode("utf-8", "replace").splitlines()):
            parts = raw.split("\t", 2)
            if len(parts) != 3:
                continue
            stamp, source, text = parts
            text = _unescape(text)
            if (source, text) in seen:
                continue
            seen.add((source, text))
            out.append({"time": stamp, "source": source, "text": text})
            if len(out) >= limit:
                break
        return out


def _unescape(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "r": "\r", "\\": "\\"}.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
