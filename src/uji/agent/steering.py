"""Messages typed while a turn runs: queued, then steered into the turn one per model
call (or, typed too late for that, the frontend starts the next turn with one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from uji.events.stream import QueueChanged

if TYPE_CHECKING:
    from uji.events.stream import Sink
    from uji.wires.base import Image


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Queued(TypedDict):
        """A message typed during a turn, waiting to be steered in."""

        text: str
        images: NotRequired[list[Image]]
        shown: NotRequired[str]  # what the transcript shows instead of `text`


class Steering:
    def __init__(self, emit: Sink) -> None:
        self._emit = emit
        self.queue: list[Queued] = []

    def enqueue(self, text: str, images: list[Image] | None = None, shown: str | None = None) -> None:
        """Queue a message typed during a turn; it is steered in at the next model call.
        `shown`: what the transcript shows instead of `text` (long pastes as markers)."""
        item: Queued = {"text": text}
        if images:
            item["images"] = images
        if shown is not None and shown != text:
            item["shown"] = shown
        self.queue.append(item)
        self.changed()

    def next(self) -> Queued | None:
        """The first queued message, taken off the queue."""
        if not self.queue:
            return None
        item = self.queue.pop(0)
        self.changed()
        return item

    def texts(self) -> list[str]:
        return [item.get("shown") or item["text"] for item in self.queue]

    def changed(self) -> None:
        self._emit(QueueChanged(len(self.queue)))
