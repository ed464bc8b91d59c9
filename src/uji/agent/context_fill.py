"""How full the context window is: a token estimate anchored on what the provider
last reported, and the budget that triggers compaction (reference internals §5)."""

from __future__ import annotations

import math
from typing import Any

from uji.record import Struct

DEFAULT_RESERVE = 20_000
KEEP_RECENT = 20_000


def image_tokens(image: dict[str, Any]) -> int:
    width, height = image.get("width"), image.get("height")
    if isinstance(width, int) and isinstance(height, int):
        return math.ceil(width * height / 750)
    # No size recorded: judge by the bytes (about 1,600 tokens for a full-size image).
    return min(1600, max(85, len(image.get("data", "")) * 3 // 4 // 750))


def tokens(text: str) -> int:
    """The estimate for a piece of text: characters / 4."""
    return math.ceil(len(text) / 4)


def estimate(message: dict[str, Any]) -> int:
    """Characters / 4, plus tool-call names and arguments, plus images."""
    chars = 0
    for key in ("text", "content", "summary", "reasoning"):
        value = message.get(key)
        if isinstance(value, str) and not (key == "summary" and message.get("type") == "tool"):
            chars += len(value)
    for call in message.get("tool_calls") or []:
        chars += len(call.get("name", "")) + len(call.get("arguments", ""))
    tokens = math.ceil(chars / 4)
    for image in message.get("images") or []:
        tokens += image_tokens(image)
    return tokens


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
