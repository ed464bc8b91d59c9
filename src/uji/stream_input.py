"""`uji run --input-format stream-json`: user messages on stdin, one JSON object a line, in
Claude Code's format, each run as its own turn of one session:

    {"type": "user", "message": {"role": "user", "content": "fix the test"}}
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is wrong here?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "..."}}]}}

A line that is not such a message is reported with its number and skipped; the lines
after it still run. The end of stdin ends the run.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
from collections.abc import AsyncIterator
from typing import Any

from uji.record import Record

LINE_LIMIT = 64 * 1024 * 1024  # bytes of one line (a message with images)


class BadLine(Exception):
    """A line that is not a user message; the text says why."""


class UserMessage(Record):
    text: str
    images: tuple[tuple[str, bytes], ...] = ()  # (media type, data) of each image part


def parse(line: str) -> UserMessage:
    """One line as a user message, or BadLine saying what is wrong with it."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise BadLine(f"not JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict) or obj.get("type") != "user":
        kind = obj.get("type") if isinstance(obj, dict) else type(obj).__name__
        raise BadLine(f'expected {{"type": "user", "message": ...}}, got type {kind!r}')
    message = obj.get("message")
    if not isinstance(message, dict):
        raise BadLine('"message" must be an object {"role": "user", "content": ...}')
    if message.get("role", "user") != "user":
        raise BadLine(f'"message.role" must be "user", got {message.get("role")!r}')
    content = message.get("content")
    if isinstance(content, str):
        return UserMessage(content)
    if not isinstance(content, list):
        raise BadLine('"message.content" must be a string or a list of text and image parts')
    texts: list[str] = []
    images: list[tuple[str, bytes]] = []
    for i, part in enumerate(content, 1):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "image":
            images.append(_image(part, i))
        else:
            raise BadLine(f"content part {i}: expected a text part or an image part, got {_short(part)}")
    return UserMessage("\n\n".join(texts), tuple(images))


def _image(part: dict[str, Any], i: int) -> tuple[str, bytes]:
    source = part.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise BadLine(
            f'content part {i}: an image\'s source must be {{"type": "base64", "media_type", "data"}}'
        )
    media_type, data = source.get("media_type"), source.get("data")
    if not isinstance(media_type, str) or not isinstance(data, str):
        raise BadLine(f'content part {i}: an image needs "media_type" and "data" strings')
    try:
        return media_type, base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadLine(f"content part {i}: the image data is not base64") from None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:80] + "…"


async def lines(fd: int) -> AsyncIterator[tuple[int, str]]:
    """(line number, line) of stdin as they come, blank lines left out. A pipe is read by
    the event loop (a turn runs while the next line waits); a file is read directly."""
    import stat

    number = 0
    if stat.S_ISREG(os.fstat(fd).st_mode):
        with os.fdopen(os.dup(fd), "rb") as f:
            for raw in f:
                number += 1
                if raw.strip():
                    yield number, raw.decode("utf-8", errors="replace")
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(fd), "rb", 0)
    )
    try:
        while True:
            try:
                raw = await reader.readline()
            except ValueError:  # over LINE_LIMIT: the stream cannot be read on from there
                raise BadLine(f"line {number + 1} is over {LINE_LIMIT // (1024 * 1024)} MiB") from None
            if not raw:
                return
            number += 1
            if raw.strip():
                yield number, raw.decode("utf-8", errors="replace")
    finally:
        transport.close()
