"""The `anthropic` wire: the Messages API, streamed (reference internals §4, §6).

    POST <base_url>/messages    x-api-key, anthropic-version: 2023-06-01

Request: the system prompt as text blocks; tool calls as `tool_use` blocks; tool results
as user messages of `tool_result` blocks, with the tool's images *inside* the result (the
only API that takes them there). Consecutive messages of one role are merged, since a
tool result and a following context line must share one user message.

Prompt caching puts `cache_control` on the last system block, the last tool and the last
block of the last user message: those three breakpoints cover the stable prefix and the
conversation so far, so the next call of the turn reads it all from the cache.

Thinking: models before 4.6 think on a token budget; 4.6 and later think adaptively at an
effort. Signed and redacted thinking blocks come back in `Answer.replay` and are sent back
only to the model that wrote them (a signature is only valid there).

The pure parts (`build_body`, `build_headers`, `MessagesStream`) need no server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from uji.record import Struct, field
from uji.wires.base import BUDGETS

from .base import (
    Answer,
    AssistantItem,
    Failure,
    Image,
    Message,
    Reply,
    ToolCall,
    ToolItem,
    ToolSpec,
    Usage,
    WireRequest,
    output_limit,
)
from .common import (
    NO_PARAMETERS,
    SSEWire,
    as_str,
    finish_answer,
    plan_images,
    reencode_arguments,
    signed_in,
    tool_text,
    with_note,
)

API_VERSION = "2023-06-01"
MIN_OUTPUT = 1024
ANSWER_ROOM = 1024  # tokens a thinking budget must leave for the answer itself
MIN_BUDGET = 1024  # the API's smallest budget; below it the request thinks not at all
ADAPTIVE_FROM = (4, 6)  # the first version that thinks adaptively
THINKING_FROM = (3, 7)  # older models cannot think at all
# Adaptive effort levels: the API has low, medium, high, xhigh (4.7 and later) and max.
ADAPTIVE_EFFORT = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
XHIGH_FROM = (4, 7)  # the first version with `xhigh`; before it, xhigh asks for max
EMPTY_TEXT = "(empty message)"  # the API refuses empty text blocks
# In-stream `error` events that are worth a retry, as the HTTP status they stand for.
RETRY_ERRORS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429}


# --------------------------------------------------------------------------- request


def messages_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/messages"


def build_headers(request: WireRequest) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "anthropic-version": API_VERSION}
    if not signed_in(request, headers):
        key = (request.auth or {}).get("key")
        if key:
            headers["x-api-key"] = key
    return headers


_VERSION = re.compile(r"(?<!\d)(\d)(?:[-.](\d)(?!\d))?(?!\d)")


def claude_version(model: str) -> tuple[int, int] | None:
    """(major, minor) from a model id: claude-opus-4-6 → (4, 6), claude-3-7-sonnet-… →
    (3, 7), claude-sonnet-4-20250514 → (4, 0). The minor is one digit, so a date is
    never read as one. None when the id has no version."""
    name = model.rsplit("/", 1)[-1]
    if "claude" in name:
        name = name[name.index("claude") :]
    m = _VERSION.search(name)
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def caches(request: WireRequest) -> bool:
    """Whether to place cache breakpoints: for every model of the wire (built-in,
    declared in init.lua, or unlisted), unless caching is off or the model says
    `cache = false` (a server that refuses `cache_control`). Without them every request
    pays the full input price for the whole conversation again."""
    return request.cache != "off" and request.model_cache is not False


# The request body (Messages API) -------------------------------------------------------


if TYPE_CHECKING:
    # Types of the JSON sent, for the type checker only: creating a TypedDict costs ~0.2 ms.
    class CacheControl(TypedDict):
        type: Literal["ephemeral"]
        ttl: NotRequired[str]  # "1h"; the default is 5 minutes

    class TextBlock(TypedDict):
        type: Literal["text"]
        text: str
        cache_control: NotRequired[CacheControl]

    class ImageSource(TypedDict):
        type: Literal["base64"]
        media_type: str
        data: str

    class ImageBlock(TypedDict):
        type: Literal["image"]
        source: ImageSource
        cache_control: NotRequired[CacheControl]

    class ToolUseBlock(TypedDict):
        type: Literal["tool_use"]
        id: str
        name: str
        input: object  # the call's arguments object
        cache_control: NotRequired[CacheControl]

    class ToolResultBlock(TypedDict):
        type: Literal["tool_result"]
        tool_use_id: str
        content: str | list[TextBlock | ImageBlock]
        cache_control: NotRequired[CacheControl]

    # The last: signed or redacted thinking as the API sent it, given back unchanged.
    Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | dict[str, Any]

    class MessageParam(TypedDict):
        role: Literal["user", "assistant"]
        content: list[Block]

    class ToolParam(TypedDict):
        name: str
        description: str
        input_schema: dict[str, Any]  # a JSON schema: any JSON
        cache_control: NotRequired[CacheControl]

    class Thinking(TypedDict):
        type: Literal["adaptive", "enabled"]
        budget_tokens: NotRequired[int]

    class OutputConfig(TypedDict):
        effort: str

    class Body(TypedDict):
        model: str
        max_tokens: int
        messages: list[MessageParam]
        stream: bool
        system: NotRequired[list[TextBlock]]
        tools: NotRequired[list[ToolParam]]
        thinking: NotRequired[Thinking]
        output_config: NotRequired[OutputConfig]


def build_body(request: WireRequest) -> Body:
    body: Body = {
        "model": request.model,
        "max_tokens": output_limit(request, MIN_OUTPUT),
        "messages": build_messages(request.messages, request.model, images=request.images is not False),
        "stream": True,
    }
    if request.system:
        body["system"] = [{"type": "text", "text": request.system}]
    signed_in = (request.auth or {}).get("oauth")
    if signed_in and signed_in.get("identity_prompt"):  # a sign-in's identity comes first
        body["system"] = [{"type": "text", "text": signed_in["identity_prompt"]}, *body.get("system", [])]
    if request.tools:
        body["tools"] = [_tool_spec(t) for t in request.tools]
    add_thinking(body, request.effort, request.model)
    if caches(request):
        add_cache_breakpoints(body, request.cache)
    return body


def _tool_spec(tool: ToolSpec) -> ToolParam:
    return {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "input_schema": tool.get("parameters") or NO_PARAMETERS,
    }


def add_thinking(body: Body, effort: str | None, model: str) -> None:
    """`thinking` (and `output_config`) for the effort; off or none means no thinking."""
    if not effort or effort == "off" or effort not in BUDGETS:
        return
    version = claude_version(model)
    if version is not None and version < THINKING_FROM:
        return
    if version is not None and version >= ADAPTIVE_FROM:
        level = ADAPTIVE_EFFORT[effort]
        if level == "xhigh" and version < XHIGH_FROM:
            level = "max"
        body["thinking"] = {"type": "adaptive"}
        body["output_config"] = {"effort": level}
        return
    # The budget counts against max_tokens: shrink it so the answer keeps its room.
    budget = min(BUDGETS[effort], body["max_tokens"] - ANSWER_ROOM)
    if budget >= MIN_BUDGET:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}


def add_cache_breakpoints(body: Body, cache: str) -> None:
    control: CacheControl = {"type": "ephemeral"}
    if cache == "long":
        control["ttl"] = "1h"
    targets: list[Block | ToolParam] = []
    if body.get("system"):
        targets.append(body["system"][-1])
    if body.get("tools"):
        targets.append(body["tools"][-1])
    last_user = next((m for m in reversed(body["messages"]) if m["role"] == "user"), None)
    if last_user is not None and last_user["content"]:
        targets.append(last_user["content"][-1])
    for block in targets:
        block["cache_control"] = control.copy()


def build_messages(messages: Sequence[Message], model: str, *, images: bool = True) -> list[MessageParam]:
    """Stored messages → Messages API messages, images placed and budgeted."""
    plan = plan_images(messages, images=images)
    out: list[MessageParam] = []
    for i, m in enumerate(messages):
        kept, note = plan.get(i, ([], ""))
        if m["type"] == "user":
            blocks: list[Block] = [image_block(img) for img in kept]
            text = with_note(m.get("text") or "", note)
            if text or not blocks:
                blocks.append({"type": "text", "text": text or EMPTY_TEXT})
            _append(out, "user", blocks)
        elif m["type"] == "assistant":
            blocks = _assistant_blocks(m, model)
            if blocks:
                _append(out, "assistant", blocks)
        elif m["type"] == "tool":
            _append(out, "user", [_tool_result(m, kept, note)])
    return out


def _append(out: list[MessageParam], role: Literal["user", "assistant"], blocks: list[Block]) -> None:
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})


def image_block(image: Image) -> ImageBlock:
    source: ImageSource = {
        "type": "base64",
        "media_type": image.get("media_type") or "image/png",
        "data": image.get("data") or "",
    }
    return {"type": "image", "source": source}


def _assistant_blocks(m: AssistantItem, model: str) -> list[Block]:
    text = m.get("text") or ""
    calls = m.get("tool_calls") or []
    if not text.strip() and not calls:
        return []  # thinking alone cannot stand as a message
    blocks = replay_blocks(m.get("replay"), model)
    if text.strip():
        blocks.append({"type": "text", "text": text})
    for c in calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": c.get("id") or "",
                "name": c.get("name") or "",
                "input": json.loads(reencode_arguments(c.get("arguments"))),
            }
        )
    return blocks


def replay_blocks(replay: Any, model: str) -> list[Block]:
    """The signed thinking an assistant message carries, if it was this model's."""
    if not isinstance(replay, Mapping) or replay.get("wire") != "anthropic" or replay.get("model") != model:
        return []
    blocks = replay.get("blocks")
    if not isinstance(blocks, list):
        return []
    return [dict(b) for b in blocks if isinstance(b, Mapping) and b.get("type") in _REPLAYED]


_REPLAYED = ("thinking", "redacted_thinking")


def _tool_result(m: ToolItem, kept: list[Image], note: str) -> ToolResultBlock:
    text = with_note(tool_text(m), note)
    content: str | list[TextBlock | ImageBlock] = text
    if kept:
        parts: list[TextBlock | ImageBlock] = [{"type": "text", "text": text}] if text else []
        content = parts + [image_block(img) for img in kept]
    return {"type": "tool_result", "tool_use_id": m.get("tool_call_id") or "", "content": content}


# --------------------------------------------------------------------------- response


class _Block(Struct):
    type: str
    text: list[str] = field(default_factory=list)  # text or thinking
    signature: list[str] = field(default_factory=list)
    data: str = ""  # redacted_thinking
    id: str = ""
    name: str = ""
    input: Any = None
    json: list[str] = field(default_factory=list)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class MessagesStream:
    """Folds Messages API stream events into an `Answer`, reporting as it goes.

    `progress` is the reader's stall-deadline push: called for text, thinking, tool
    input and the stop, never for `ping` keep-alives or events without content.
    """

    def __init__(self, reply: Reply, progress: Callable[[], None], model: str) -> None:
        self.reply = reply
        self.progress = progress
        self.model = model
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.stopped = False  # message_stop arrived: nothing more is needed
        self.usage = Usage()
        self._saw_usage = False

    def feed(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "content_block_delta":  # the hot path: one per token or so
            delta = obj.get("delta")
            if isinstance(delta, dict):
                self._delta(obj.get("index"), delta)
        elif kind == "content_block_start":
            self._start(obj.get("index"), obj.get("content_block"))
        elif kind == "message_start":
            message = obj.get("message")
            if isinstance(message, dict):
                self._usage(message.get("usage"))
        elif kind == "message_delta":
            delta = obj.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self.stop_reason = delta["stop_reason"]
                self.progress()
            self._usage(obj.get("usage"))
        elif kind == "message_stop":
            self.stopped = True
            self.progress()
        elif kind == "error":
            raise stream_error(obj.get("error"))

    def _delta(self, index: Any, delta: dict[str, Any]) -> None:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            if text and isinstance(text, str):
                self.text.append(text)
                self.reply.text(text)
                self.progress()
            return
        block = self.blocks.get(index) if isinstance(index, int) else None
        if kind == "thinking_delta":
            thought = delta.get("thinking")
            if thought and isinstance(thought, str):
                self.reasoning.append(thought)
                self.reply.reasoning(thought)
                if block is not None:
                    block.text.append(thought)
                self.progress()
        elif kind == "input_json_delta":
            part = delta.get("partial_json")
            if part and isinstance(part, str) and block is not None:
                block.json.append(part)
                self.reply.touch()
                self.progress()
        elif kind == "signature_delta":
            signature = delta.get("signature")
            if signature and isinstance(signature, str) and block is not None:
                block.signature.append(signature)
                self.progress()

    def _start(self, index: Any, content: Any) -> None:
        if not isinstance(index, int) or not isinstance(content, dict):
            return
        kind = content.get("type")
        if not isinstance(kind, str):
            return
        block = self.blocks[index] = _Block(kind)
        if kind == "tool_use":
            block.id = as_str(content.get("id"))
            block.name = as_str(content.get("name"))
            block.input = content.get("input")
            self.reply.touch()
            self.progress()
        elif kind == "redacted_thinking":
            block.data = as_str(content.get("data"))
            self.progress()
        elif kind == "text" and content.get("text"):  # a start may carry the first text
            self._delta(index, {"type": "text_delta", "text": content["text"]})
        elif kind == "thinking":
            if content.get("thinking"):
                self._delta(index, {"type": "thinking_delta", "thinking": content["thinking"]})
            if content.get("signature"):
                block.signature.append(str(content["signature"]))

    def _usage(self, usage: Any) -> None:
        """message_start holds the input side, message_delta the output (and, on newer
        servers, the input side again); a field present later replaces the earlier."""
        if not isinstance(usage, dict):
            return
        for name, attr in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = _int(usage.get(name))
            if value is not None:
                setattr(self.usage, attr, value)
                self._saw_usage = True

    def calls(self) -> list[ToolCall]:
        calls = []
        for _, b in sorted(self.blocks.items()):
            if b.type != "tool_use":
                continue
            if b.json:
                arguments = "".join(b.json)
            elif isinstance(b.input, dict) and b.input:
                arguments = json.dumps(b.input, ensure_ascii=False)
            else:
                arguments = ""
            calls.append(ToolCall(b.id, b.name, arguments))
        return calls

    def replay(self) -> dict[str, object] | None:
        """Signed and redacted thinking, in order, for the next request to this model."""
        kept: list[dict[str, str]] = []
        for _, b in sorted(self.blocks.items()):
            if b.type == "thinking" and b.signature:
                kept.append(
                    {"type": "thinking", "thinking": "".join(b.text), "signature": "".join(b.signature)}
                )
            elif b.type == "redacted_thinking" and b.data:
                kept.append({"type": "redacted_thinking", "data": b.data})
        return {"wire": "anthropic", "model": self.model, "blocks": kept} if kept else None

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None or self.stopped

    @property
    def complete(self) -> bool:
        return self.stopped  # message_stop: nothing more is needed

    def answer(self) -> Answer:
        """The final answer, or the `Failure` the stream ended in."""
        text = "".join(self.text)
        calls = self.calls()
        usage = self.usage if self._saw_usage else None
        if self.stop_reason == "refusal" and not text and not calls:
            raise Failure("provider", "the model refused to answer (stop_reason: refusal)", usage=usage)
        return finish_answer(
            text=text,
            reasoning="".join(self.reasoning),
            calls=calls,
            usage=usage,
            finished=self.finished,
            hit_limit=self.stop_reason == "max_tokens",
            replay=self.replay(),
        )


def stream_error(error: Any) -> Failure:
    """An `error` event inside a 200 stream. Overload, rate and server errors are
    reported as the HTTP statuses they stand for, so the loop retries them."""
    if not isinstance(error, dict):
        return Failure("provider", f"stream error: {error}")
    kind = as_str(error.get("type")) or "error"
    message = as_str(error.get("message")) or kind
    status = RETRY_ERRORS.get(kind)
    if status is not None:
        return Failure("http", f"http: {status}: {kind}: {message}", status=status)
    return Failure("provider", f"stream error: {kind}: {message}")


# --------------------------------------------------------------------------- the wire


class AnthropicWire(SSEWire):
    name = "anthropic"

    def url(self, request: WireRequest, base_url: str) -> str:
        return messages_url(base_url)

    def headers(self, request: WireRequest) -> dict[str, str]:
        return build_headers(request)

    def body(self, request: WireRequest) -> Body:
        return build_body(request)

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> MessagesStream:
        return MessagesStream(reply, progress, request.model)
