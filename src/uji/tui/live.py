"""The answer being streamed, as a Textual `Markdown` widget. Apart from the transcript
so that Textual's Markdown (and markdown-it) is imported with the first answer, not
before the first frame."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from textual.message import Message
from textual.widgets import Markdown

from uji.tui.mdparse import textual_parser

if TYPE_CHECKING:
    from uji.tui.entry import Entry


class LiveAnswer(Markdown):
    """The answer being streamed: deltas go to a MarkdownStream, which batches them
    when they come faster than the screen can take them."""

    DEFAULT_CSS = "LiveAnswer { padding: 0; }"

    class Finished(Message):
        """Its stream has written its last piece (to the transcript: it may become plain)."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(classes="entry answer", parser_factory=textual_parser)
        self.entry = entry
        self._parts: list[str] = []
        self._wake = asyncio.Event()
        self._ending = False
        self.finished = asyncio.Event()
        self.widgets: int | None = None  # its widgets once finished (the transcript counts them)

    def on_mount(self) -> None:
        self.run_worker(self._pump(), exit_on_error=False, group="stream")

    def feed(self, text: str) -> None:
        self._parts.append(text)
        self._wake.set()

    def close(self) -> None:
        self._ending = True
        self._wake.set()

    async def _pump(self) -> None:
        stream = Markdown.get_stream(self)
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                if self._parts:
                    text = "".join(self._parts)
                    self._parts.clear()
                    await stream.write(text)
                if self._ending and not self._parts:
                    break
        finally:
            with contextlib.suppress(Exception):
                await stream.stop()
            self.finished.set()
            self.post_message(self.Finished())
