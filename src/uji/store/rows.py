"""The stored message: one TypedDict per `type` of a session's row, as the store writes
and reads it, the agent builds it and the wires translate it (one JSON row each).

The rows the model is sent (user, assistant, tool) are the wire's messages
(`uji.wires.base.Message`) plus what only the session keeps: the `seq` the store gives
each row, the answer a user interrupted, what a tool call was decided on and showed.
The other rows stay with the session (`agent/messages.py` `for_model` says what of them
goes). A row is the dict the JSON gives back: the TypedDicts exist for the type checker
only (creating one costs about 0.2 ms, and `uji run` imports the store at start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

RowType = Literal["user", "assistant", "tool", "system", "shell", "error", "compaction", "context", "file"]

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.wires.base import AssistantItem, Image, ToolItem, UserItem

    class UserRow(UserItem):
        shown: NotRequired[str]  # what the transcript shows instead of `text` (a long paste's marker)
        seq: NotRequired[int]  # given by the store; absent before the row is saved

    class AssistantRow(AssistantItem):
        interrupted: NotRequired[bool]  # the user stopped this answer (Esc, SIGINT)
        seq: NotRequired[int]

    class ToolRow(ToolItem):
        subject: NotRequired[str]  # what the call was decided on and shown as (`uji resume`)
        diff: NotRequired[str]  # the unified diff the transcript shows
        summary: NotRequired[str]  # the one line the transcript shows for the result
        seq: NotRequired[int]

    class FileRow(TypedDict):
        """An `@path` mention (agent/mentions.py) or an `@server:uri` resource (agent/mentioned.py):
        its content goes with the user message it follows."""

        type: Literal["file"]
        path: str
        content: NotRequired[str]  # attached; else `denied` or `error` says why not
        summary: NotRequired[str]
        images: NotRequired[list[Image]]
        denied: NotRequired[str]
        error: NotRequired[str]
        server: NotRequired[str]  # a resource's server and uri
        uri: NotRequired[str]
        seq: NotRequired[int]

    class CompactionRow(TypedDict):
        """A checkpoint summary folding every row up to seq `through`."""

        type: Literal["compaction"]
        summary: str
        through: int
        files: list[str]  # the paths the folded calls touched
        seq: NotRequired[int]

    class TextRow(TypedDict):
        """A row of text the model is not sent as such: an error, context a provider or a
        hook added for the turn (sent as user text), a system note."""

        type: Literal["error", "context", "system"]
        text: str
        seq: NotRequired[int]

    class ShellRow(TypedDict):
        """A `!command` the user ran from the composer, with what it printed."""

        type: Literal["shell"]
        command: str
        output: str
        code: int | None
        seq: NotRequired[int]

    Row = UserRow | AssistantRow | ToolRow | FileRow | CompactionRow | TextRow | ShellRow
