"""The checkpoints a turn takes of the files (issue 13 part 2), on the turn's side.

`TurnCheckpoints.begin`, when the user's message is saved, starts the snapshot in a
thread (it runs while the model is asked); `before_tool` waits for it before a tool runs
and keeps a file tool's pre-image; `end` records what the turn left. A checkpoint that
fails never fails the turn: it says so once and is off for the rest of the process. The
storage is `uji.store.checkpoints`; rewinding is `uji.agent.rewind`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from uji.store.checkpoints import CheckpointError, Checkpoints

if TYPE_CHECKING:
    from uji.tools.base import Tool

READ_ONLY_TOOLS = frozenset({"read_file", "job_output"})  # tools that change no file
FIRST_WAIT = 15.0  # seconds a tool waits for the turn's checkpoint


class TurnCheckpoints:
    """The checkpoints of one project, as the turns of a process take them."""

    def __init__(self, make: Callable[[], Checkpoints], notice: Callable[[str], None]) -> None:
        self._make = make
        self._repo: Checkpoints | None = None
        self._notice = notice
        self.off: str | None = None  # why checkpoints are off, once they failed
        self._begin: asyncio.Task[bool] | None = None
        self._pruned = False

    @property
    def repo(self) -> Checkpoints:
        if self._repo is None:
            self._repo = self._make()
        return self._repo

    def _failed(self, e: Exception) -> None:
        if self.off is None:
            self.off = str(e)
            self._notice(f"checkpoints are off for this session: {e}")

    async def _run(self, fn: Callable[..., None], *args: Any) -> bool:
        if self.off is not None:
            return False
        try:
            await asyncio.to_thread(fn, *args)
        except (CheckpointError, OSError) as e:
            self._failed(e)
            return False
        return True

    def begin(self, session: str, seq: int) -> None:
        """The checkpoint before the turn whose user message is `seq`, taken in a thread."""
        if self.off is not None:
            return
        try:
            repo = self.repo
        except (CheckpointError, OSError) as e:
            self._failed(e)
            return
        self._begin = asyncio.get_running_loop().create_task(self._run(repo.begin, session, seq))
        if not self._pruned:
            self._pruned = True
            from uji.store.checkpoints import prune_in_background

            prune_in_background(repo, lambda text: None)

    async def _started(self) -> bool:
        """Whether the turn's checkpoint is taken, waiting for it (FIRST_WAIT at most: a
        first snapshot of a huge tree must not hold the turn up for long)."""
        task = self._begin
        if task is None:
            return False
        if task.done():
            return task.result()
        try:
            async with asyncio.timeout(FIRST_WAIT):
                return await asyncio.shield(task)
        except TimeoutError:
            pass
        # Too slow: the turn goes on without it. What the thread still writes would hold
        # the turn's own changes, so it is thrown away once done.
        repo = self.repo
        task.add_done_callback(lambda _: repo.discard())
        self._failed(CheckpointError(f"taking one of {repo.root} took over {FIRST_WAIT:.0f}s"))
        return False

    async def before_tool(self, tool: Tool, subject: str, abspath: Callable[[str], str]) -> None:
        """Before a tool runs: the turn's checkpoint is taken; a file tool's target keeps
        its pre-image."""
        if tool.name in READ_ONLY_TOOLS or not await self._started():
            return
        repo = self.repo
        if tool.path_subject:
            await self._run(repo.capture, abspath(subject))
        repo.touched()

    async def end(self) -> None:
        """What the turn left, recorded (awaited at the turn's end)."""
        if not await self._started():
            return
        self._begin = None
        await self._run(self.repo.end)
