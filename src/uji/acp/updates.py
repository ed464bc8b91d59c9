"""uji's events, and a saved session's messages, as ACP `session/update`s.

A call shows as a `tool_call` when its subject is known (its title is the subject, as
uji's own screen shows it), `in_progress` once it runs, and `completed` or `failed` with
its result when its tool message is saved; an edit carries the file before and after as
a diff.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    ImageContentBlock,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallUpdate,
    ToolKind,
    UserMessageChunk,
)

from uji.agent.approval import Question
from uji.events.stream import AgentEvent, CallSubject, Delta, MessageSaved, ToolStarted

if TYPE_CHECKING:
    from uji.store.rows import Row

Update = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | CurrentModeUpdate
)
ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

# The kinds editors show an icon for; a tool not named here is "other".
KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "edit_file": "edit",
    "write_file": "edit",
    "run_command": "execute",
    "grep": "search",
    "glob": "search",
    "find": "search",
    "fetch": "fetch",
    "web_fetch": "fetch",
}
PATH_KINDS = ("read", "edit")
# A file bigger than this is shown as its unified diff rather than before and after.
DIFF_FILE_LIMIT = 1_000_000
RESULT_LIMIT = 20_000  # characters of a tool's result shown in the editor


def text_block(text: str) -> TextContentBlock:
    return TextContentBlock(type="text", text=text)


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=text_block(text))


def _read_text(path: str) -> str | None:
    """The file's text, or None when it is missing, too big or not text."""
    try:
        if os.path.getsize(path) > DIFF_FILE_LIMIT:
            return None
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def _status(content: str) -> ToolCallStatus:
    return "failed" if content.startswith(("error:", "denied:")) else "completed"


class Updates:
    """The updates of one session: it remembers what each running call needs for its
    last update (its path, the file before an edit)."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.current_call: str | None = None  # the call being decided (a question is about it)
        self._paths: dict[str, str] = {}  # call id -> absolute path, for read and edit calls
        self._before: dict[str, str] = {}  # call id -> the file's text before an edit
        self._edits: dict[str, bool] = {}  # call id -> whether it edits the file at its path
        self._unreadable: set[str] = set()  # edits of a file whose text could not be read

    def _path(self, subject: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, os.path.expanduser(subject)))

    def for_event(self, event: AgentEvent) -> list[Update]:
        match event:
            case Delta(kind="text", text=text):
                return [AgentMessageChunk(session_update="agent_message_chunk", content=text_block(text))]
            case Delta(kind="reasoning", text=text):
                return [AgentThoughtChunk(session_update="agent_thought_chunk", content=text_block(text))]
            case CallSubject():
                return [self._start(event)]
            case ToolStarted(id=call_id):
                return [
                    ToolCallProgress(
                        session_update="tool_call_update", tool_call_id=call_id, status="in_progress"
                    )
                ]
            case MessageSaved() if event.type == "tool":
                return [self._finish(event.message)]
        return []

    def _start(self, event: CallSubject) -> ToolCallStart:
        self.current_call = event.id
        kind = KINDS.get(event.name, "other")
        locations = None
        if kind in PATH_KINDS and event.subject:
            path = self._path(event.subject)
            self._paths[event.id] = path
            locations = [ToolCallLocation(path=path)]
            self._edits[event.id] = kind == "edit"
            if kind == "edit" and os.path.exists(path):
                before = _read_text(path)
                if before is None:
                    self._unreadable.add(event.id)
                else:
                    self._before[event.id] = before
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=event.id,
            title=event.subject or event.name,
            kind=kind,
            status="pending",
            locations=locations,
        )

    def _finish(self, message: Mapping[str, Any]) -> ToolCallProgress:
        call_id = str(message.get("tool_call_id", ""))
        text = str(message.get("content", ""))
        status = _status(text)
        content: list[ToolContent] = [text_content(_clip(text))]
        diff = message.get("diff")
        path = self._paths.pop(call_id, None)
        edited = self._edits.pop(call_id, False)
        before = self._before.pop(call_id, None)
        after = _read_text(path) if path and edited and status == "completed" else None
        if path is not None and after is not None and call_id not in self._unreadable:
            content.append(FileEditToolCallContent(type="diff", path=path, old_text=before, new_text=after))
        elif isinstance(diff, str) and diff:
            content.append(text_content(f"```diff\n{diff}\n```"))
        self._unreadable.discard(call_id)
        return ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call_id, status=status, content=content
        )

    def permission_call(self, question: Question) -> ToolCallUpdate:
        """The call a `session/request_permission` is about, with what uji's question shows."""
        content: list[ToolContent] = []
        if question.body and question.body != question.subject:
            content.append(text_content(question.body))
        if question.preview:
            content.append(text_content(f"```diff\n{question.preview}\n```"))
        return ToolCallUpdate(
            tool_call_id=self.current_call or "",
            title=question.subject or question.title,
            status="pending",
            content=content or None,
            raw_input=question.arguments,
        )

    def replay(self, messages: list[Row]) -> list[Update]:
        """A saved session told again (`session/load`): prompts, answers and their calls."""
        out: list[Update] = []
        for message in messages:
            if message["type"] == "user":
                out.append(
                    UserMessageChunk(
                        session_update="user_message_chunk", content=text_block(str(message.get("text", "")))
                    )
                )
                for image in message.get("images") or []:
                    out.append(
                        UserMessageChunk(
                            session_update="user_message_chunk",
                            content=ImageContentBlock(
                                type="image",
                                data=str(image.get("data", "")),
                                mime_type=str(image.get("media_type", "image/png")),
                            ),
                        )
                    )
            elif message["type"] == "assistant":
                if message.get("reasoning"):
                    out.append(
                        AgentThoughtChunk(
                            session_update="agent_thought_chunk",
                            content=text_block(str(message["reasoning"])),
                        )
                    )
                if message.get("text"):
                    out.append(
                        AgentMessageChunk(
                            session_update="agent_message_chunk", content=text_block(str(message["text"]))
                        )
                    )
            elif message["type"] == "tool":
                name = str(message.get("name", ""))
                subject = str(message.get("subject") or name)
                text = str(message.get("content", ""))
                content: list[ToolContent] = [text_content(_clip(text))]
                if message.get("diff"):
                    content.append(text_content(f"```diff\n{message['diff']}\n```"))
                out.append(
                    ToolCallStart(
                        session_update="tool_call",
                        tool_call_id=str(message.get("tool_call_id", "")),
                        title=subject,
                        kind=KINDS.get(name, "other"),
                        status=_status(text),
                        content=content,
                    )
                )
        return out


def _clip(text: str) -> str:
    return text if len(text) <= RESULT_LIMIT else text[:RESULT_LIMIT] + "\n…"
