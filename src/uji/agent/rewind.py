"""Undo: rewinding a session to before one of its turns — its files (from the
checkpoints `uji.agent.checkpointing` takes), its conversation, or both."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uji.record import Struct, field
from uji.store.checkpoints import ChangedFile, CheckpointError, Plan

if TYPE_CHECKING:
    from uji.agent.loop import Agent


class RewindPoint(Struct):
    """A turn that can be rewound: its user message, and what it changed in the files."""

    seq: int
    text: str
    time: float | None  # seconds since the epoch, from the checkpoint
    files: list[ChangedFile] | None  # None: no checkpoint of the files before it

    @property
    def has_files(self) -> bool:
        return self.files is not None


class RewindRefused(Exception):
    """Files changed outside uji would be overwritten."""

    def __init__(self, message: str, paths: list[str]) -> None:
        super().__init__(message)
        self.paths = paths


class Rewound(Struct):
    seq: int
    text: str  # the prompt of the turn rewound
    written: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    messages: int = 0  # conversation messages dropped

    def summary(self) -> str:
        parts = []
        if self.written or self.deleted:
            parts.append(f"restored {len(self.written)} file(s), removed {len(self.deleted)}")
        if self.messages:
            parts.append(f"dropped {self.messages} message(s)")
        return ", ".join(parts) or "nothing to change"


def points(agent: Agent, limit: int = 20) -> list[RewindPoint]:
    """The session's last `limit` turns, newest first."""
    rows = agent.services.store.user_messages(agent.session_id, limit)
    cps = agent.services.checkpoints
    marks: dict[int, Any] = {}
    if cps is not None and cps.off is None:
        try:
            marks = dict(cps.repo.turns(agent.session_id))
        except (CheckpointError, OSError):
            marks = {}
    out = []
    for seq, text in rows:
        mark = marks.get(seq)
        files = None if mark is None else (mark.files if mark.files is not None else [])
        out.append(RewindPoint(seq, text, mark.time if mark else None, files))
    return out


def outside_message(paths: list[str]) -> str:
    shown = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
    return f"{len(paths)} file(s) changed outside uji since the checkpoint would be overwritten: {shown}"


async def rewind(
    agent: Agent, seq: int, *, files: bool = True, conversation: bool = True, force: bool = False
) -> Rewound:
    """Back to before the turn with user message `seq`: the files as they were then (a
    file changed outside uji since refuses, unless `force`), and the conversation
    without that turn and what followed it. Raises RewindRefused, or ValueError."""
    if agent.running:
        raise ValueError("a turn is running")
    row = next((p for p in points(agent, limit=10_000) if p.seq == seq), None)
    if row is None:
        raise ValueError(f"no turn at message {seq} in this session")
    done = Rewound(seq, row.text)
    cps = agent.services.checkpoints
    if files:
        if cps is None or cps.off is not None or not row.has_files:
            why = f" ({cps.off})" if cps is not None and cps.off else ""
            raise ValueError(f"no checkpoint of the files before that turn{why}")
        repo = cps.repo
        try:
            plan: Plan = await asyncio.to_thread(repo.plan, agent.session_id, seq)
            if plan.conflicts and not force:
                raise RewindRefused(outside_message(plan.conflicts), plan.conflicts)
            await asyncio.to_thread(repo.restore, plan, agent.session_id)
        except (CheckpointError, OSError) as e:
            raise ValueError(f"could not restore the files: {e}") from None
        done.written, done.deleted = sorted(plan.write), sorted(plan.delete)
    if conversation:
        done.messages = agent.truncate(seq)
        if cps is not None and cps.off is None:
            try:
                await asyncio.to_thread(cps.repo.drop_turns, agent.session_id, seq)
            except (CheckpointError, OSError):
                pass
    return done
