"""The session's live messages as a turn sees them: read from the store once, from the
latest compaction's checkpoint on (what the model is sent comes only from there; older
messages stay in the store, read on demand), then kept in step with every save."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.events.stream import MessageSaved

if TYPE_CHECKING:
    from uji.events.stream import Sink
    from uji.store.rows import Row
    from uji.store.sessions import Store


class SessionLog:
    def __init__(self, store: Store, session_id: str, emit: Sink) -> None:
        self.store = store
        self.session_id = session_id
        self._emit = emit
        self._messages: list[Row] | None = None
        self.since = 1  # the seq `messages` starts at
        self.last_seq = 0  # of the last message saved or read

    @property
    def messages(self) -> list[Row]:
        if self._messages is None:
            self.since = self.store.checkpoint(self.session_id)
            self._messages = self.store.messages(self.session_id, since=self.since)
            if self._messages:
                self.last_seq = self._messages[-1]["seq"]
        return self._messages

    def save(self, message: Row) -> Row:
        """Saved the moment it exists, so an interrupt or a crash keeps everything up to it."""
        messages = self.messages
        seq = self.store.append(self.session_id, message)
        self.last_seq = seq
        saved = message.copy()
        saved["seq"] = seq
        messages.append(saved)
        self._emit(MessageSaved(saved))
        return saved

    def truncate(self, since: int) -> int:
        """Drop the messages from seq `since` on (a rewind); read them afresh next time."""
        dropped = self.store.truncate(self.session_id, since)
        self._messages = None
        self.last_seq = 0
        return dropped

    def fold(self, since: int) -> None:
        """A compaction folded the messages before `since`: they are no longer live, so
        memory keeps only the live part, as a resume would."""
        self.since = since
        self._messages = [m for m in self.messages if m["seq"] >= since]
