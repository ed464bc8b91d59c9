"""An MCP resource a message mentions (`@server:uri`), once read: what the turn saves
after the message (agent/mentions.py's `file` row, its content sent with the message).
The reading is uji.mcp's, given to the turn as TurnServices.resources."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from uji.record import Record
from uji.tools.base import ToolResult

if TYPE_CHECKING:
    from uji.store.rows import FileRow


class Mentioned(Record):
    """An `@server:uri` resource a message names (an MCP server's), read."""

    server: str
    uri: str
    result: ToolResult

    def row(self, redact: Callable[[str], str]) -> FileRow:
        """The `file` row saved after the message: its content goes with it as an @file's."""
        row: FileRow = {
            "type": "file",
            "path": f"{self.server}:{self.uri}",
            "server": self.server,
            "uri": self.uri,
            "content": redact(self.result.text),
        }
        if self.result.images:
            row["images"] = self.result.images
        return row


class MentionFailed(Exception):
    """A resource the message mentions could not be read: the message is not sent."""
