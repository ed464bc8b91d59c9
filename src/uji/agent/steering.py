"""Messages typed while a turn runs: queued, then steered into the turn one per model
call (or, typed too late for that, the frontend starts the next turn with one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.events.stream import QueueChanged

if TYPE_CHECKING:
    from uji.events.stream import Sink


class Steering:
    def __init__(self, emit: Sink) -> None:
        self._emit = emit
        self.queue: list[dict[str, Any]] = []  # {text, images?, shown?}

    def enqueue(
        self, text: str, images: list[dict[str, Any]] | None = None, shown: str | None = None
    ) -> None:
        """Queue a message typed during a turn; it is steered in at the next model call.
        `shown`: what the transcript shows instead of `text` (long pastes as markers)."""
        item: dict[str, Any] = {"text": text}
        if images:
            item["images"] = images
        if shown is not None and shown != text:
            item["shown"] = shown
        self.queue.append(item)
        self.changed()

    def next(self) -> dict[str, Any] | None:
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
