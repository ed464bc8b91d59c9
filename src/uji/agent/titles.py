"""Session titles: a side request for at most six words, sanitised to one short line."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from uji.events.stream import SessionTitled

if TYPE_CHECKING:
    from uji.agent.session_log import SessionLog
    from uji.events.stream import Sink

PLACEHOLDERS = frozenset({"", "untitled", "new", "resumed"})
INPUT_CHARS = 2000
MAX_CHARS = 60
PROMPT = (
    "Give a title of at most 6 words for a coding session that starts with the user's message below. "
    "Answer with the title only: no quotes, no punctuation at the end."
)


def sanitize(answer: str) -> str:
    """First non-blank line, without #-* markers, quotes or trailing .!?, at most 60 chars."""
    line = next((ln.strip() for ln in answer.splitlines() if ln.strip()), "")
    line = line.lstrip("#-* ").strip()
    line = line.strip("\"'`“”‘’").strip()
    line = line.rstrip(".!?").strip()
    return line[:MAX_CHARS].rstrip()


def clip_input(text: str) -> str:
    return text[:INPUT_CHARS]


class Titler:
    """Titles a session from its first message, with a side request beside the turn (the
    screen's sessions; `uji run` leaves them untitled), or as `uji.session.set_title` says."""

    def __init__(
        self,
        log: SessionLog,
        emit: Sink,
        side: Callable[[str, str, int, bool], Awaitable[str]],
        auto: bool,
        after_first_call: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.log = log
        self._emit = emit
        self._side = side
        self.auto = auto
        # To a server that runs one stream at a time: waits for the turn's own first call.
        self._after_first_call = after_first_call
        self.task: asyncio.Task[None] | None = None

    def first_message(self, text: str) -> None:
        """The user's message was saved: if it is the session's first and the session has
        no title yet, one is asked for."""
        if not self.auto:
            return
        log = self.log
        session = log.store.get_session(log.session_id)
        if session is None or session["title"].strip().lower() not in PLACEHOLDERS:
            return
        messages = log.messages  # read first: it sets `since`
        if log.since > 1 or sum(1 for m in messages if m["type"] == "user") != 1:
            return
        self.task = asyncio.get_running_loop().create_task(self._title(text))

    async def _title(self, text: str) -> None:
        if self._after_first_call is not None:
            await self._after_first_call()  # never beside the turn's own first call
        try:
            answer = await self._side(PROMPT, clip_input(text), 64, True)
        except Exception:
            return  # a title is a nicety; the turn goes on without one
        title = sanitize(answer)
        if title:
            self.set(title)

    def set(self, title: str) -> None:
        self.log.store.set_title(self.log.session_id, title)
        self._emit(SessionTitled(title))

    async def cancel(self) -> None:
        """Esc stops everything the turn started: a title still retrying included."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.wait({self.task}, timeout=5)  # let it finish cancelling
