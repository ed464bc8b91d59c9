"""The `openai-chat` wire: OpenAI Chat Completions, streamed (reference internals §6).

Also the wire of every OpenAI-compatible provider (OpenRouter, Groq, DeepSeek, Ollama…).
The differences between them that matter here are few and keyed by the base_url host in
`DIALECTS`; `request.provider["compat"]` (a dict of `Dialect` field names, set with
`uji.provider.add{compat = {...}}` and checked by `check_compat`) overrides them.

The pure parts (`build_body`, `build_messages`, `dialect_for`, `ChatStream`) are separate
from the I/O, which `common.SSEWire` runs for all three HTTP wires, so golden tests need
no server. What the wires share (the image budget, the end-of-stream checks, scrubbing
credentials out of errors) lives in `common`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict
from urllib.parse import urlsplit

from uji.record import Record, Struct, field, record_types, replace

from .base import (
    STALL_SECONDS,
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
    UserItem,
    WireRequest,
    output_limit,
)
from .common import (
    NO_PARAMETERS,
    TOOL_IMAGES_TEXT,
    SSEWire,
    as_int,
    drain_into,
    finish_answer,
    is_local,
    left_out_note,
    plan_images,
    reencode_arguments,
    scrub,
    scrubbed,
    secrets_of,
    signed_in,
    tool_text,
    with_note,
)

__all__ = [  # the shared helpers stay importable from here
    "NO_PARAMETERS",
    "STALL_SECONDS",
    "TOOL_IMAGES_TEXT",
    "drain_into",
    "finish_answer",
    "left_out_note",
    "plan_images",
    "reencode_arguments",
    "scrub",
    "scrubbed",
    "secrets_of",
    "tool_text",
    "with_note",
]

MIN_OUTPUT = 1024
# Mistral refuses a user message right after tool messages: an assistant line goes between.
BRIDGE_TEXT = "The tool calls returned images; they follow."
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
# Words in a textual in-stream error code that mean "try again" (a dropped upstream).
TRANSIENT_CODES = ("server_error", "overloaded", "unavailable", "timeout", "rate_limit")


# --------------------------------------------------------------------------- dialects


class Dialect(Record):
    """How one OpenAI-compatible endpoint differs from the common case."""

    max_tokens_field: str | None = "max_tokens"  # None: no output limit is sent
    cache_key: bool = False  # send the session id as `prompt_cache_key`
    effort: str | None = "reasoning_effort"  # how the level is sent: see `add_effort`
    finish_reason: bool = True  # a stream that ends without one is a failure
    tool_result_name: bool = False  # tool messages carry the tool's `name`
    bridge_tool_images: bool = False  # an assistant line before the tool-images message
    stream_options: bool = True  # ask for the usage chunk (`stream_options.include_usage`)
    # `tool_choice: "auto"` beside the tools: llama.cpp's servers leave the tools out of the
    # prompt without one (the model never sees them). False for a server that refuses it.
    tool_choice: bool = True
    # The assistant-message field that carries the model's reasoning back (DeepSeek's
    # thinking mode with tools refuses an assistant message without `reasoning_content`).
    # Every assistant message then has it: its own reasoning, or "" when it had none.
    reasoning_field: str | None = None
    # An assistant message of tool calls alone says `content: null`, as the API reference
    # has it. llama-cpp-python's server refuses null (500, "Input should be a valid
    # string") and takes "": local servers get "" by default (`dialect_for`).
    content_null: bool = True


# What `compat` may set, and the type each option takes (`None`: a string, or false).
COMPAT_OPTIONS: dict[str, str] = {
    "max_tokens_field": "a field name, or false to send no output limit",
    "cache_key": "true or false",
    "effort": "a style (reasoning_effort, reasoning, thinking, thinking_only, enable_thinking), "
    "a field name, or false to send no effort",
    "finish_reason": "true or false",
    "tool_result_name": "true or false",
    "bridge_tool_images": "true or false",
    "stream_options": "true or false",
    "tool_choice": "true or false",
    "reasoning_field": "a field name (reasoning_content, reasoning), or false",
    "content_null": "true or false",
}


def check_compat(compat: Any) -> dict[str, str | bool]:
    """`compat` as given to `uji.provider.add`, checked: a table of known option names,
    each of its type. Raises ValueError saying which option is wrong and why."""
    if isinstance(compat, list) and not compat:
        return {}  # an empty Lua table
    if not isinstance(compat, Mapping):
        raise ValueError("`compat` must be a table of openai-chat options")
    known = record_types(Dialect)
    out: dict[str, str | bool] = {}
    for name, value in compat.items():
        if name not in known:
            raise ValueError(f"unknown compat option {name!r} (known: {', '.join(sorted(COMPAT_OPTIONS))})")
        flag = known[name] in ("bool", bool)
        ok = isinstance(value, bool) if flag else (value is False or (isinstance(value, str) and value))
        if not ok:
            raise ValueError(f"compat option {name!r} must be {COMPAT_OPTIONS[name]}, got {value!r}")
        out[name] = value
    return out


# Matched on the host and its subdomains. Everything else gets `Dialect()`.
DIALECTS: dict[str, Dialect] = {
    "api.openai.com": Dialect(max_tokens_field="max_completion_tokens", cache_key=True),
    "openrouter.ai": Dialect(effort="reasoning"),
    "api.deepseek.com": Dialect(effort="thinking", reasoning_field="reasoning_content"),
    # Kimi's thinking models want their reasoning back within a tool loop.
    "api.moonshot.ai": Dialect(reasoning_field="reasoning_content"),
    "api.moonshot.cn": Dialect(reasoning_field="reasoning_content"),
    "api.z.ai": Dialect(effort="thinking_only"),
    "open.bigmodel.cn": Dialect(effort="thinking_only"),
    "dashscope.aliyuncs.com": Dialect(effort="enable_thinking"),
    "dashscope-intl.aliyuncs.com": Dialect(effort="enable_thinking"),
    # Mistral answers 422 to any body field it does not know (`stream_options` among them);
    # it sends usage in its last chunk unasked.
    "api.mistral.ai": Dialect(stream_options=False, bridge_tool_images=True),
}


def host_of(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "").lower()


def dialect_for(base_url: str, compat: Any = None) -> Dialect:
    host = host_of(base_url)
    dialect = next(
        (d for h, d in DIALECTS.items() if host == h or host.endswith("." + h)),
        Dialect(content_null=not is_local(base_url)),
    )
    if isinstance(compat, Mapping):
        known = {name: kind in ("bool", bool) for name, kind in record_types(Dialect).items()}
        # Lua configs say `max_tokens_field = false` to omit the limit.
        changes: dict[str, object] = {
            k: (None if v is False and not known[k] else v) for k, v in compat.items() if k in known
        }
        dialect = replace(dialect, **changes)
    return dialect


def chat_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/chat/completions"


# --------------------------------------------------------------------------- request


def build_headers(request: WireRequest) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if not signed_in(request, headers):  # a subscription sign-in wins over a key
        key = (request.auth or {}).get("key")
        if key:
            headers["Authorization"] = f"Bearer {key}"
    return headers


# The request body: its field names are the dialect's (the output limit's, the effort's,
# the reasoning's), so a body and its messages are JSON objects with values to write,
# and the parts that have fixed shapes are typed.


if TYPE_CHECKING:
    # Types of the JSON sent, for the type checker only: creating a TypedDict costs ~0.2 ms.
    class FunctionDef(TypedDict):
        name: str
        description: str
        parameters: dict[str, Any]  # a JSON schema: any JSON

    class ToolDef(TypedDict):
        type: Literal["function"]
        function: FunctionDef

    class TextPart(TypedDict):
        type: Literal["text"]
        text: str

    class ImageURL(TypedDict):
        url: str  # a data: URL

    class ImagePart(TypedDict):
        type: Literal["image_url"]
        image_url: ImageURL

    class CalledFunction(TypedDict):
        name: str
        arguments: str  # JSON text

    class CallParam(TypedDict):
        id: str
        type: Literal["function"]
        function: CalledFunction


# A provider's api object (lua/api_wire.py) may reshape each message and set the effort.
# String aliases: built at run time they cost every start.
Shape: TypeAlias = "Callable[[Message, dict[str, object]], dict[str, object]]"
Thinking: TypeAlias = "Callable[[dict[str, object]], dict[str, object]]"


def build_body(
    request: WireRequest,
    dialect: Dialect | None = None,
    *,
    shape: Shape | None = None,
    thinking: Thinking | None = None,
) -> dict[str, object]:
    if dialect is None:
        dialect = dialect_for(request.provider.get("base_url") or "", request.provider.get("compat"))
    body: dict[str, object] = {
        "model": request.model,
        "messages": build_messages(
            request.system,
            request.messages,
            tool_result_name=dialect.tool_result_name,
            images=request.images is not False,
            bridge=dialect.bridge_tool_images,
            reasoning_field=dialect.reasoning_field,
            shape=shape,
            content_null=dialect.content_null,
        ),
        "stream": True,
    }
    if dialect.stream_options:
        body["stream_options"] = {"include_usage": True}
    if request.tools:
        body["tools"] = [_tool_spec(t) for t in request.tools]
        if dialect.tool_choice:
            body["tool_choice"] = "auto"
    if dialect.max_tokens_field:
        body[dialect.max_tokens_field] = output_limit(request, MIN_OUTPUT)
    if thinking is None:
        add_effort(body, request.effort, dialect.effort)
    elif request.reasoning:
        body = thinking(body)
    if dialect.cache_key and request.cache != "off" and request.session:
        body["prompt_cache_key"] = request.session
    return body


def _tool_spec(tool: ToolSpec) -> ToolDef:
    function: FunctionDef = {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parameters": tool.get("parameters") or NO_PARAMETERS,
    }
    return {"type": "function", "function": function}


def add_effort(body: dict[str, object], effort: str | None, style: str | None) -> None:
    """Put the effort level where this server reads it (reference internals §6).

    `reasoning_effort` (OpenAI and most others) and `reasoning` (OpenRouter's
    `{effort}`) send no level for "off"; the thinking switches say "off" explicitly:
    `thinking` (DeepSeek: `thinking.type` plus the level), `thinking_only` (z.ai: the
    switch alone) and `enable_thinking` (Qwen: a boolean plus the level). Any other
    style is taken as the name of a top-level field for the level.
    """
    if not effort or style is None:
        return  # the provider's default
    off = effort == "off"
    if style in ("thinking", "thinking_only"):
        body["thinking"] = {"type": "disabled" if off else "enabled"}
        if style == "thinking" and not off:
            body["reasoning_effort"] = effort
        return
    if style == "enable_thinking":
        body["enable_thinking"] = not off
        if not off:
            body["reasoning_effort"] = effort
        return
    if off:
        return
    if style == "reasoning":
        body["reasoning"] = {"effort": effort}
    else:
        body[style] = effort


def build_messages(
    system: str,
    messages: Sequence[Message],
    *,
    tool_result_name: bool = False,
    images: bool = True,
    bridge: bool = False,
    reasoning_field: str | None = None,
    shape: Shape | None = None,
    content_null: bool = True,
) -> list[dict[str, object]]:
    """Stored messages → Chat messages, images placed and budgeted (internals §4).
    `images=False` (a text-only model) leaves every image out with a note; with a
    `reasoning_field`, every assistant message carries its reasoning in that field."""
    plan = plan_images(messages, images=images)
    out: list[dict[str, object]] = [{"role": "system", "content": system}] if system else []
    tool_images: list[ImagePart] = []  # of the current run of tool messages
    for i, m in enumerate(messages):
        if m["type"] != "tool" and tool_images:
            out += _tool_images_messages(tool_images, bridge)
            tool_images = []
        kept, left_out = plan.get(i, ([], ""))
        if m["type"] == "user":
            built = user_message(m, kept, left_out)
        elif m["type"] == "assistant" and (m.get("text") or m.get("tool_calls")):
            # One that only thought (cut off at the output limit) has nothing to send.
            built = assistant_message(m, reasoning_field, content_null)
        elif m["type"] == "tool":
            built = tool_message(m, left_out, tool_result_name)
            tool_images += [_image_part(img) for img in kept]
        else:
            continue
        out.append(built if shape is None else shape(m, built))
    if tool_images:
        out += _tool_images_messages(tool_images, bridge)
    return out


def _image_part(image: Image) -> ImagePart:
    url = f"data:{image.get('media_type') or 'image/png'};base64,{image.get('data') or ''}"
    return {"type": "image_url", "image_url": {"url": url}}


def user_message(m: UserItem, kept: list[Image], left_out: str) -> dict[str, object]:
    text = with_note(m.get("text") or "", left_out)
    if not kept:
        return {"role": "user", "content": text}
    parts: list[TextPart | ImagePart] = [{"type": "text", "text": text}] if text else []
    return {"role": "user", "content": parts + [_image_part(img) for img in kept]}


def assistant_message(
    m: AssistantItem, reasoning_field: str | None = None, content_null: bool = True
) -> dict[str, object]:
    # Reasoning goes back only in the dialect's field: Chat Completions has none for it
    # that every compatible server accepts.
    msg: dict[str, object] = {"role": "assistant", "content": m.get("text") or (None if content_null else "")}
    if reasoning_field:
        reasoning = m.get("reasoning")
        msg[reasoning_field] = reasoning if isinstance(reasoning, str) else ""
    calls = m.get("tool_calls") or []
    if calls:
        params: list[CallParam] = [
            {
                "id": c.get("id") or "",
                "type": "function",
                "function": {
                    "name": c.get("name") or "",
                    "arguments": reencode_arguments(c.get("arguments")),
                },
            }
            for c in calls
        ]
        msg["tool_calls"] = params
    return msg


def tool_message(m: ToolItem, left_out: str, with_name: bool) -> dict[str, object]:
    msg: dict[str, object] = {
        "role": "tool",
        "tool_call_id": m.get("tool_call_id") or "",
        "content": with_note(tool_text(m), left_out),
    }
    if with_name:
        msg["name"] = m.get("name") or ""
    return msg


def _tool_images_messages(parts: list[ImagePart], bridge: bool) -> list[dict[str, object]]:
    content: list[TextPart | ImagePart] = [{"type": "text", "text": TOOL_IMAGES_TEXT}, *parts]
    images: dict[str, object] = {"role": "user", "content": content}
    return [{"role": "assistant", "content": BRIDGE_TEXT}, images] if bridge else [images]


# --------------------------------------------------------------------------- response


class _CallParts(Struct):
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChatStream:
    """Folds `chat.completion.chunk` objects into an `Answer`, reporting as it goes.

    `progress` is the reader's stall-deadline push: called for text, reasoning, call
    chunks and the finish, never for keep-alives, role-only or empty deltas.
    """

    def __init__(self, reply: Reply, progress: Callable[[], None], *, need_finish: bool = True) -> None:
        self.reply = reply
        self.progress = progress
        self.need_finish = need_finish
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, _CallParts] = {}
        self.finish: str | None = None
        self.usage: Usage | None = None
        # A provider's api object reads the reasoning of a delta itself (lua/api_wire.py).
        self.reasoning_of: Callable[[dict[str, Any]], str | None] | None = None

    def feed(self, obj: dict[str, Any]) -> None:
        error = obj.get("error")
        if error:
            raise stream_error(error)
        usage = obj.get("usage")
        if usage and isinstance(usage, dict):
            self.usage = usage_from(usage)
        choices = obj.get("choices")
        if not choices or not isinstance(choices, list):
            return
        choice = choices[0]
        if not isinstance(choice, dict):
            return
        delta = choice.get("delta")
        if delta and isinstance(delta, dict):
            content = delta.get("content")
            if len(delta) == 1 and content and isinstance(content, str):  # the common text delta
                self.text.append(content)
                self.reply.text(content)
                self.progress()
            else:
                self._delta(delta)
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self.finish = finish
            self.progress()

    def _delta(self, delta: dict[str, Any]) -> None:
        content = delta.get("content")
        if content and isinstance(content, str):
            self.text.append(content)
            self.reply.text(content)
            self.progress()
        elif content and isinstance(content, list):
            self._parts(content)
        refusal = delta.get("refusal")
        self._text(refusal)  # a refusal is shown as the answer: it is what the model said
        # Servers that fill two of these fields send the same text: the first counts.
        # A provider's api object may read it itself.
        keys = REASONING_FIELDS if self.reasoning_of is None else ()
        for key in keys:
            thought = delta.get(key)
            if thought and isinstance(thought, str):
                self.reasoning.append(thought)
                self.reply.reasoning(thought)
                self.progress()
                break
        if self.reasoning_of is not None:
            thought = self.reasoning_of(delta)
            if thought:
                self.reasoning.append(thought)
                self.reply.reasoning(thought)
                self.progress()
        calls = delta.get("tool_calls")
        if calls and isinstance(calls, list):
            self._calls(calls)

    def _parts(self, parts: list[Any]) -> None:
        """`content` as typed parts (Mistral's Magistral): `text` parts are the answer,
        `thinking` parts (their text nested in `thinking`) the reasoning."""
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                self._text(part.get("text"))
            elif kind == "thinking":
                nested = part.get("thinking")
                for inner in nested if isinstance(nested, list) else [{"text": nested}]:
                    thought = inner.get("text") if isinstance(inner, dict) else None
                    if thought and isinstance(thought, str):
                        self.reasoning.append(thought)
                        self.reply.reasoning(thought)
                        self.progress()

    def _text(self, text: Any) -> None:
        if text and isinstance(text, str):
            self.text.append(text)
            self.reply.text(text)
            self.progress()

    def _calls(self, chunks: list[Any]) -> None:
        for pos, tc in enumerate(chunks):
            if not isinstance(tc, dict):
                continue
            index = tc.get("index")
            parts = self.calls.setdefault(index if isinstance(index, int) else pos, _CallParts())
            if tc.get("id") and isinstance(tc["id"], str):
                parts.id = tc["id"]
            function = tc.get("function") or {}
            if not isinstance(function, dict):
                continue
            name = function.get("name")
            if name and isinstance(name, str):
                parts.name = name  # set, not appended: some servers repeat it per chunk
            args = function.get("arguments")
            if args:
                parts.arguments.append(args if isinstance(args, str) else json.dumps(args))
        self.reply.touch()
        self.progress()

    @property
    def complete(self) -> bool:
        return False  # read on to [DONE]: the usage chunk comes after the finish

    @property
    def finished(self) -> bool:
        return self.finish is not None

    def answer(self) -> Answer:
        """The final answer, or the `Failure` the stream ended in."""
        calls = [ToolCall(p.id, p.name, "".join(p.arguments)) for _, p in sorted(self.calls.items())]
        if self.finish == "content_filter" and not self.text and not calls:
            raise Failure("provider", "the answer was stopped by the content filter", usage=self.usage)
        return finish_answer(
            text="".join(self.text),
            reasoning="".join(self.reasoning),
            calls=calls,
            usage=self.usage,
            finished=self.finish is not None or not self.need_finish,
            hit_limit=self.finish == "length",
        )


# --------------------------------------------------------------------------- secrets


def usage_from(usage: Mapping[str, Any]) -> Usage:
    """OpenAI-style usage → ours. Providers name cached tokens differently (OpenAI
    `prompt_tokens_details.cached_tokens`, DeepSeek `prompt_cache_hit_tokens`, others
    `cached_tokens`); the largest wins. `input` is what was neither read nor written."""
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = max(
        as_int(details.get("cached_tokens")),
        as_int(usage.get("prompt_cache_hit_tokens")),
        as_int(usage.get("cached_tokens")),
    )
    cache_write = max(as_int(usage.get("cache_write_tokens")), as_int(details.get("cache_write_tokens")))
    prompt = as_int(usage.get("prompt_tokens"))
    return Usage(
        input=max(prompt - cache_read - cache_write, 0),
        output=as_int(usage.get("completion_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
    )


def stream_error(error: Any) -> Failure:
    """An `{"error": …}` object inside a 200 stream (OpenRouter and proxies send these)."""
    if not isinstance(error, dict):
        return Failure("provider", f"stream error: {error}")
    message = error.get("message") or json.dumps(error, ensure_ascii=False)
    code = error.get("code")
    if isinstance(code, int) and 400 <= code <= 599:
        if code in (401, 403):
            return Failure(
                "auth", f"authentication rejected ({code}) - check the api key for this provider", code
            )
        return Failure("http", f"http: {code}: {message}", status=code)
    if isinstance(code, str) and any(word in code for word in TRANSIENT_CODES):
        # OpenRouter's "server_error" when the upstream provider drops: worth a retry.
        return Failure("http", f"stream error: {code}: {message}")
    return Failure("provider", f"stream error: {message}")


# --------------------------------------------------------------------------- the wire


class OpenAIChatWire(SSEWire):
    name = "openai-chat"

    def url(self, request: WireRequest, base_url: str) -> str:
        return chat_url(base_url)

    def headers(self, request: WireRequest) -> dict[str, str]:
        return build_headers(request)

    def body(self, request: WireRequest) -> dict[str, object]:
        return build_body(request, _dialect(request))

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> ChatStream:
        return ChatStream(reply, progress, need_finish=_dialect(request).finish_reason)


def _dialect(request: WireRequest) -> Dialect:
    return dialect_for(request.provider.get("base_url") or "", request.provider.get("compat"))
