"""How full the context window is: a token estimate anchored on what the provider
last reported, and the budget that triggers compaction (reference internals §5)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from uji.record import Struct

DEFAULT_RESERVE = 20_000
KEEP_RECENT = 20_000


def image_tokens(image: Mapping[str, object]) -> int:
    """An image's tokens: by its size, else by its bytes (an image a plugin or an old
    session left without one)."""
    width, height = image.get("width"), image.get("height")
    if isinstance(width, int) and isinstance(height, int):
        return math.ceil(width * height / 750)
    # No size recorded: judge by the bytes (about 1,600 tokens for a full-size image).
    data = image.get("data", "")
    return min(1600, max(85, len(data if isinstance(data, str) else "") * 3 // 4 // 750))


def tokens(text: str) -> int:
    """The estimate for a piece of text: characters / 4."""
    return math.ceil(len(text) / 4)


def estimate(message: Mapping[str, object]) -> int:
    """Characters / 4, plus tool-call names and arguments, plus images: of any row, or of
    a message as a wire sends it."""
    chars = 0
    for key in ("text", "content", "summary", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and not (key == "summary" and message.get("type") == "tool"):
            chars += len(value)
    chars += call_chars(message.get("tool_calls"))
    tokens = math.ceil(chars / 4)
    images = message.get("images")
    for image in images if isinstance(images, list) else ():
        tokens += image_tokens(image)
    return tokens


def call_chars(calls: object) -> int:
    """The characters of the tool calls of a message (`tool_calls`, if any): names and
    arguments."""
    if not isinstance(calls, list):
        return 0
    return sum(len(call.get("name", "")) + len(call.get("arguments", "")) for call in calls)


class Budget(Struct):
    window: int | None
    reserve: int

    @property
    def usable(self) -> int | None:
        return None if self.window is None else self.window - self.reserve

    def keep_recent(self, used: int | None = None, manual: bool = False) -> int:
        usable = self.usable or KEEP_RECENT * 4
        keep = max(min(KEEP_RECENT, usable // 4), 1)
        if manual and used:
            keep = max(min(keep, used // 4), 1)
        return keep


def budget(window: int | None, model_output: int | None, reserve: int | None = None) -> Budget:
    if window is None:
        return Budget(None, 0)
    if reserve is None:
        reserve = min(model_output or DEFAULT_RESERVE, window // 4)
    return Budget(window, reserve)
