"""The request/reply contract every wire speaks (reference docs §3).

A wire turns a provider-neutral `WireRequest` into one streamed model call. It reports
through a `Reply`: `text`/`reasoning` deltas as they arrive, `touch()` on any other
progress (tool-call argument chunks), then exactly one of `done(answer)` or `fail(failure)`.
The agent loop owns retries and the stall watchdog; a wire only reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

FailureKind = Literal["http", "auth", "provider"]

# Statuses the loop retries; a failure of kind "http" with status None (dropped
# connection, stall, stream closed before its finish) is retried as well.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
# No progress for this long fails a stream (reference internals §1).
STALL_SECONDS = 120.0


@dataclass
class Usage:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model sent it
    signature: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.signature is not None:
            d["signature"] = self.signature
        return d


@dataclass
class Answer:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    replay: Any = None
    limited: bool = False  # the output limit cut the answer off (it is kept, with a notice)


@dataclass
class Failure(Exception):
    kind: FailureKind
    message: str
    status: int | None = None
    retry_after: float | None = None
    usage: Usage | None = None  # what a call that ended in this failure still consumed

    def __str__(self) -> str:
        return self.message

    @property
    def retryable(self) -> bool:
        if self.kind != "http":
            return False
        return self.status is None or self.status in RETRYABLE_STATUS or 500 <= self.status <= 599


@dataclass
class WireRequest:
    """What a wire is asked to send. `messages` hold only user/assistant/tool items in
    the stored message shape (see agent/messages.py)."""

    model: str
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]  # [{name, description, parameters}], sorted by name
    provider: dict[str, Any]  # {id, base_url, compat}
    auth: dict[str, Any]  # {key, oauth}
    effort: str | None = None
    reasoning: bool = False
    max_output: int = 8192
    cache: str = "short"  # off | short | long
    session: str = ""
    # What the catalog knows of the model (None: not listed). Not part of the Lua
    # request table: Lua wires read the provider's own settings instead.
    model_cache: bool | None = None  # takes prompt-cache breakpoints (Anthropic)
    images: bool | None = None  # False: text-only, images are left out with a note

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "system": self.system,
            "messages": self.messages,
            "tools": self.tools,
            "effort": self.effort,
            "reasoning": self.reasoning,
            "max_output": self.max_output,
            "cache": self.cache,
            "session": self.session,
            "provider": self.provider,
            "auth": self.auth,
        }


class Reply(Protocol):
    def text(self, delta: str) -> None: ...
    def reasoning(self, delta: str) -> None: ...
    def touch(self) -> None: ...
    def done(self, answer: Answer) -> None: ...
    def fail(self, failure: Failure) -> None: ...


class Wire(Protocol):
    """A Python wire. `stream` returns when the call has finished (after calling
    `reply.done` or `reply.fail`); cancelling the task drops the connection."""

    name: str

    async def stream(self, request: WireRequest, reply: Reply) -> None: ...
