"""What the next request holds, part by part (`/context`, `uji.context.list`): the base
prompt, the tools, the instruction files, each context provider, other prompt text, the
compaction summary, the conversation and its images, with a total meant to be what the
provider will count.

How: no tokenizer (each provider has its own, and most are not public). Every part is
estimated as characters / 4 of what is sent (images by their size), and the estimate is
calibrated on the provider's own count: after each request, the input it reported divided
by the same estimate of that request gives tokens per estimated token (1.0 until a request
reported usage). Each part is shown times that ratio, so the total is the last request's
count plus the calibrated estimate of what was added since, and the parts add up to it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from uji.agent.context_fill import call_chars, image_tokens, tokens
from uji.agent.contexts import Part
from uji.record import Record, Struct

if TYPE_CHECKING:
    from uji.store.rows import Row
    from uji.wires.base import Image, Message


class Calibration(Struct):
    """The last request that reported its input: what the provider counted, and what
    the estimate said of the same request."""

    reported: int = 0
    estimated: int = 0

    @property
    def ratio(self) -> float | None:
        return self.reported / self.estimated if self.reported > 0 and self.estimated > 0 else None


class Window(Record):
    parts: tuple[Part, ...]  # each part's size, calibrated
    total: int
    ratio: float | None  # provider tokens per estimated token; None: not calibrated yet


def message_tokens(sent: Mapping[str, object], images: bool = True) -> int:
    """One message as a wire sends it: its text, reasoning, calls and tool output / 4,
    plus its images (`images=False`: without them)."""
    chars = 0
    for key in ("text", "content", "reasoning"):
        value = sent.get(key)
        if isinstance(value, str):
            chars += len(value)
    chars += call_chars(sent.get("tool_calls"))
    count = -(-chars // 4)
    found = sent.get("images")
    if images and isinstance(found, list):
        count += sum(image_tokens(i) for i in found)
    return count


def request_tokens(system: str, tools: list[Any], messages: list[Message]) -> int:
    """The estimate of a whole request (what the calibration compares with the count)."""
    return tokens(system) + tokens(json.dumps(tools)) + sum(message_tokens(m) for m in messages)


def conversation_parts(history: list[Row], folded: Callable[[int], int] | None = None) -> list[Part]:
    """The compaction summary (with `folded(through)`, how many messages it folded), the
    conversation's messages and their images, as the next request sends them."""
    from uji.agent.messages import for_model, live

    compaction, _ = live(history)
    sent = for_model(history)
    parts: list[Part] = []
    if compaction is not None and sent:
        through = compaction.get("through", 0)
        count = (
            folded(through) if folded is not None else sum(1 for m in history if m.get("seq", 0) <= through)
        )
        parts.append(Part("compaction summary", "summary", message_tokens(sent[0]), count=count))
        sent = sent[1:]
    parts.append(
        Part(
            "conversation",
            "conversation",
            sum(message_tokens(m, images=False) for m in sent),
            count=len(sent),
        )
    )
    images: list[Image] = []
    for m in sent:
        if m["type"] != "assistant":
            images += m.get("images") or []
    if images:
        parts.append(Part("images", "images", sum(image_tokens(i) for i in images), count=len(images)))
    return parts


def window(
    prompt: list[Part],
    history: list[Row] | None,
    calibration: Calibration | None,
    folded: Callable[[int], int] | None = None,
) -> Window:
    """The parts of the next request, calibrated, and their total; with no session open
    (`history` None), the prompt's parts alone. `folded(through)`: how many messages the
    session holds up to seq `through` (the history kept in memory starts after a fold)."""
    parts = [*prompt, *(conversation_parts(history, folded) if history is not None else [])]
    ratio = calibration.ratio if calibration is not None else None
    scaled = tuple(
        Part(p.name, p.kind, round(p.tokens * (ratio or 1.0)), p.path, p.at, p.count) for p in parts
    )
    return Window(scaled, sum(p.tokens for p in scaled), ratio)
