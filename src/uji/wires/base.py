"""The request/reply contract every wire speaks (reference docs §3).

A wire turns a provider-neutral `WireRequest` into one streamed model call. It reports
through a `Reply`: `text`/`reasoning` deltas as they arrive, `touch()` on any other
progress (tool-call argument chunks), then exactly one of `done(answer)` or `fail(failure)`.
The agent loop owns retries and the stall watchdog; a wire only reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypedDict, TypeGuard, get_args

from uji.record import Struct, field

FailureKind = Literal["http", "auth", "provider"]
Cache = Literal["off", "short", "long"]  # prompt caching: none, 5 minutes, 1 hour

# The reasoning-effort scale, least to most: what a request's `effort` may say
# (uji.providers.efforts maps the user's level to one the model accepts).
Effort = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]
EFFORTS: tuple[Effort, ...] = get_args(Effort)
RANK: dict[str, int] = {e: i for i, e in enumerate(EFFORTS)}
# Thinking budgets in tokens, shared by Anthropic's budget models and Gemini 2.x.
BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
    "max": 65536,
}


def is_effort(value: object) -> TypeGuard[Effort]:
    return value in RANK


# The messages a wire is sent: the user/assistant/tool rows of a session in their stored
# shape (agent/messages.py `for_model` makes them), each told apart by its `type`.


class Image(TypedDict):
    media_type: str  # image/png, image/jpeg, image/gif or image/webp
    data: str  # base64
    # An attached image keeps where it came from and its size (uji.images): the wires
    # send only the two above; the size estimates its tokens.
    name: NotRequired[str]
    width: NotRequired[int]
    height: NotRequired[int]


class ToolCallItem(TypedDict):
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model sent it
    signature: NotRequired[str]  # Gemini's thought signature of the call


class UserItem(TypedDict):
    type: Literal["user"]
    text: str
    images: NotRequired[list[Image]]


class AssistantItem(TypedDict):
    type: Literal["assistant"]
    text: str
    tool_calls: NotRequired[list[ToolCallItem]]
    reasoning: NotRequired[str]
    # What the wire that wrote it needs back on the next request: {wire, model, ...}
    # (signed thinking, encrypted reasoning, a signature). Other wires leave it out.
    replay: NotRequired[Any]


class ToolItem(TypedDict):
    type: Literal["tool"]
    tool_call_id: str
    name: str
    content: Any  # the result text (a Lua tool may have returned a table)
    images: NotRequired[list[Image]]


Message = UserItem | AssistantItem | ToolItem


class ToolSpec(TypedDict):
    """A tool as offered to the model."""

    name: str
    description: str
    parameters: dict[str, Any]  # a JSON schema of the arguments object


class ProviderInfo(TypedDict):
    id: str
    base_url: str
    compat: NotRequired[dict[str, str | bool]]  # per-provider dialect switches (openai_chat.COMPAT_OPTIONS)


class Auth(TypedDict):
    key: str | None
    oauth: NotRequired[Any]


# Statuses the loop retries; a failure of kind "http" with status None (dropped
# connection, stall, stream closed before its finish) is retried as well.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})
# No progress for this long fails a stream (reference internals §1).
STALL_SECONDS = 120.0


class Usage(Struct):
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    # Counted by uji (characters / 4) because the server sent no usage (llama.cpp's).
    estimated: bool = False

    def as_dict(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
        }

    @property
    def total(self) -> int:
        """Every token the calls took: sent, received, read from and written to the cache."""
        return self.input + self.output + self.cache_read + self.cache_write

    def add(self, other: Usage) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write
        self.estimated = self.estimated or other.estimated


class ToolCall(Struct):
    id: str
    name: str
    arguments: str  # the JSON text exactly as the model sent it
    signature: str | None = None

    def as_dict(self) -> ToolCallItem:
        d: ToolCallItem = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.signature is not None:
            d["signature"] = self.signature
        return d


class Answer(Struct):
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    replay: Any = None
    limited: bool = False  # the output limit cut the answer off (it is kept, with a notice)


class Failure(Struct, Exception):
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


def output_limit(request: WireRequest, floor: int) -> int:
    """The output limit to send: what the call asks for, raised to the wire's `floor`
    (room to think and answer) but never above the model's own limit."""
    wanted = max(request.max_output or 0, floor)
    return min(wanted, request.model_output) if request.model_output else wanted


class WireRequest(Struct):
    """What a wire is asked to send. `messages` hold only user/assistant/tool items in
    the stored message shape (see agent/messages.py)."""

    model: str
    system: str
    messages: list[Message]
    tools: list[ToolSpec]  # sorted by name
    provider: ProviderInfo
    auth: Auth
    effort: Effort | None = None  # None: the model's default
    reasoning: bool = False
    max_output: int = 8192
    cache: Cache = "short"
    session: str = ""
    # What the catalog knows of the model (None: not listed). Not part of the Lua
    # request table: Lua wires read the provider's own settings instead.
    model_cache: bool | None = None  # takes prompt-cache breakpoints (Anthropic)
    images: bool | None = None  # False: text-only, images are left out with a note
    # The model's own output limit (its catalog `output`), None when unknown: a wire's
    # floor for max_tokens never goes above it.
    model_output: int | None = None

    def as_dict(self) -> RequestTable:
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


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class RequestTable(TypedDict):
        """A request as a Lua wire gets it (`WireRequest.as_dict`)."""

        model: str
        system: str
        messages: list[Message]
        tools: list[ToolSpec]
        effort: Effort | None
        reasoning: bool
        max_output: int
        cache: Cache
        session: str
        provider: ProviderInfo
        auth: Auth


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
