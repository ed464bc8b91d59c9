"""The `responses` wire: OpenAI's Responses API, streamed (reference internals §6).

    POST <base_url>/responses    Authorization: Bearer <key>

The default wire of OpenAI's reasoning models (gpt-5*, o3, o4-mini), and the one xAI
serves besides Chat Completions. Request:

- `instructions` holds the system prompt; `input` the conversation as items: user
  messages of `input_text`/`input_image` parts, assistant messages (their text),
  `function_call` items for the calls and `function_call_output` items for the results.
- Images a tool returned go inside its `function_call_output`, which takes a list of
  `input_text`/`input_image` parts. xAI takes only text there, so for it they follow
  the results as one user message, as the Chat wire does.
- `store: false`, and `include: ["reasoning.encrypted_content"]` for reasoning models:
  nothing is kept on the server, so the reasoning items of each answer come back
  encrypted, ride on the saved assistant message (`Answer.replay`) and are sent back
  before that message's text and calls — for the rest of the tool loop and later turns,
  as long as the session keeps them and the model is the same.
- `reasoning: {effort, summary: "auto"}`; uji's "off" is the API's "none".
- `prompt_cache_key` = the session id unless caching is off (the Responses default of
  the original, and xAI routes on it too).
- `max_output_tokens` ≥ 16, or ≥ 1024 for a reasoning model (its reasoning counts).
- An assistant message's `phase` (the codex models) is kept and sent back with it.
- An organisation refused reasoning summaries (a 400 naming them) is asked again at once
  without `summary`, and not asked again for that model while uji runs.

Stream: typed events (`response.output_text.delta`, `response.reasoning_summary_text.delta`,
`response.output_item.added/done`, `response.function_call_arguments.delta/done`,
`response.completed`…); no `[DONE]`, the body ends after the last one. Usage comes in
`response.completed` (or `response.incomplete`). A refusal is the answer's text. Failures:
`error` events and `response.failed`, retried when they stand for a 429 or a 5xx.

The pure parts (`build_body`, `build_input`, `ResponsesStream`) need no server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from uji.record import Struct, field

from .base import (
    STALL_SECONDS,
    Answer,
    AssistantItem,
    Failure,
    Image,
    Message,
    Reply,
    ToolCall,
    ToolSpec,
    Usage,
    WireRequest,
    output_limit,
)
from .common import (
    NO_PARAMETERS,
    TOOL_IMAGES_TEXT,
    SSEWire,
    as_int,
    as_str,
    finish_answer,
    plan_images,
    reencode_arguments,
    tool_text,
    with_note,
)
from .http import Http
from .openai_chat import build_headers, host_of

if TYPE_CHECKING:
    from .transport import Client

MIN_OUTPUT = 16  # the API's smallest `max_output_tokens`
# Reasoning counts against `max_output_tokens`: a reasoning model gets room to think
# before it answers, as the Chat wire's floor gives it (a 64-token title call included).
MIN_REASONING_OUTPUT = 1024
PHASES = ("commentary", "final_answer")  # an assistant message's phase, sent back as it came
INCLUDE = ["reasoning.encrypted_content"]
# uji's effort levels are the API's, except that "off" is called "none".
EFFORT_NAMES = {"off": "none"}
# Hosts whose `function_call_output` takes only a string (matched with subdomains).
TEXT_ONLY_OUTPUT_HOSTS = ("api.x.ai",)
# `error` / `response.failed` codes worth a retry, as the HTTP status they stand for.
RETRY_CODES = {
    "rate_limit_exceeded": 429,
    "server_error": 500,
    "internal_error": 500,
    "server_is_overloaded": 503,
    "slow_down": 503,
}


# --------------------------------------------------------------------------- request


def responses_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/responses"


def outputs_take_images(base_url: str) -> bool:
    host = host_of(base_url)
    return not any(host == h or host.endswith("." + h) for h in TEXT_ONLY_OUTPUT_HOSTS)


# The request body (Responses API) -----------------------------------------------------


if TYPE_CHECKING:
    # Types of the JSON sent, for the type checker only: creating a TypedDict costs ~0.2 ms.
    class InputText(TypedDict):
        type: Literal["input_text"]
        text: str

    class InputImage(TypedDict):
        type: Literal["input_image"]
        image_url: str  # a data: URL
        detail: Literal["auto"]

    class InputMessage(TypedDict):
        type: Literal["message"]
        role: Literal["user"]
        content: list[InputText | InputImage]

    class OutputMessage(TypedDict):
        type: Literal["message"]
        role: Literal["assistant"]
        content: str
        phase: NotRequired[str]

    class FunctionCall(TypedDict):
        type: Literal["function_call"]
        call_id: str
        name: str
        arguments: str  # JSON text

    class FunctionCallOutput(TypedDict):
        type: Literal["function_call_output"]
        call_id: str
        output: str | list[InputText | InputImage]

    class SummaryText(TypedDict):
        type: Literal["summary_text"]
        text: str

    class ReasoningItem(TypedDict):
        type: Literal["reasoning"]
        id: str
        summary: list[SummaryText]
        encrypted_content: str

    Item = InputMessage | OutputMessage | FunctionCall | FunctionCallOutput | ReasoningItem

    class FunctionTool(TypedDict):
        type: Literal["function"]
        name: str
        description: str
        parameters: dict[str, Any]  # a JSON schema: any JSON
        strict: bool

    class Reasoning(TypedDict, total=False):
        effort: str
        summary: Literal["auto"]

    class Body(TypedDict):
        model: str
        input: list[Item]
        stream: bool
        store: bool
        max_output_tokens: int
        instructions: NotRequired[str]
        tools: NotRequired[list[FunctionTool]]
        reasoning: NotRequired[Reasoning]
        include: NotRequired[list[str]]
        prompt_cache_key: NotRequired[str]


def build_body(request: WireRequest, *, summary: bool = True) -> Body:
    """The request body; `summary=False` asks for no reasoning summary (an organisation
    that is not verified for them gets a 400 when it asks)."""
    reasoning = reasoning_of(request, summary=summary)
    floor = MIN_OUTPUT if reasoning is None else MIN_REASONING_OUTPUT
    body: Body = {
        "model": request.model,
        "input": build_input(
            request.messages,
            request.model,
            images=request.images is not False,
            images_in_outputs=outputs_take_images(request.provider.get("base_url") or ""),
        ),
        "stream": True,
        "store": False,
        "max_output_tokens": output_limit(request, floor),
    }
    if request.system:
        body["instructions"] = request.system
    if request.tools:
        body["tools"] = [_tool_spec(t) for t in request.tools]
    if reasoning is not None:
        if reasoning:
            body["reasoning"] = reasoning
        body["include"] = list(INCLUDE)
    if (
        request.cache != "off"
        and request.session
        and request.provider.get("compat", {}).get("cache_key") is not False
    ):
        body["prompt_cache_key"] = request.session  # `uji.api.responses{cache_key = false}` sends none
    return body


def _tool_spec(tool: ToolSpec) -> FunctionTool:
    return {
        "type": "function",
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parameters": tool.get("parameters") or NO_PARAMETERS,
        "strict": False,  # strict mode would demand every property be required
    }


def reasoning_of(request: WireRequest, *, summary: bool = True) -> Reasoning | None:
    """The `reasoning` object (possibly empty), or None for a model not treated as
    reasoning: it gets neither `reasoning` nor the encrypted reasoning it cannot make.

    A model the catalog knows to reason always counts (with its summary, unless
    refused); a model of unknown kind only for a real level, since a model that does
    not reason rejects the field, and "off" asks for nothing there anyway.
    """
    effort = request.effort
    if not request.reasoning and (effort is None or effort == "off"):
        return None
    out: Reasoning = {}
    if effort is not None:
        out["effort"] = EFFORT_NAMES.get(effort, effort)
    if summary:
        out["summary"] = "auto"
    return out


def build_input(
    messages: Sequence[Message],
    model: str,
    *,
    images: bool = True,
    images_in_outputs: bool = True,
) -> list[Item]:
    """Stored messages → input items, images placed and budgeted (internals §4)."""
    plan = plan_images(messages, images=images)
    out: list[Item] = []
    tool_images: list[InputImage] = []  # of the current run of tool messages
    for i, m in enumerate(messages):
        if m["type"] != "tool" and tool_images:
            out.append(_tool_images_message(tool_images))
            tool_images = []
        kept, note = plan.get(i, ([], ""))
        if m["type"] == "user":
            parts: list[InputText | InputImage] = [image_part(img) for img in kept]
            text = with_note(m.get("text") or "", note)
            if text or not parts:
                parts.insert(0, {"type": "input_text", "text": text})
            out.append({"type": "message", "role": "user", "content": parts})
        elif m["type"] == "assistant":
            out += _assistant_items(m, model)
        elif m["type"] == "tool":
            text = with_note(tool_text(m), note)
            output: str | list[InputText | InputImage] = text
            if kept and images_in_outputs:
                output = [{"type": "input_text", "text": text}, *(image_part(img) for img in kept)]
            elif kept:
                tool_images += [image_part(img) for img in kept]
            out.append(
                {"type": "function_call_output", "call_id": m.get("tool_call_id") or "", "output": output}
            )
    if tool_images:
        out.append(_tool_images_message(tool_images))
    return out


def image_part(image: Image) -> InputImage:
    url = f"data:{image.get('media_type') or 'image/png'};base64,{image.get('data') or ''}"
    return {"type": "input_image", "image_url": url, "detail": "auto"}


def _tool_images_message(parts: list[InputImage]) -> InputMessage:
    content: list[InputText | InputImage] = [{"type": "input_text", "text": TOOL_IMAGES_TEXT}, *parts]
    return {"type": "message", "role": "user", "content": content}


def _assistant_items(m: AssistantItem, model: str) -> list[Item]:
    """The saved reasoning items first (they must precede what they led to), then the
    text, then the calls. Assistant text goes as a plain string: the API reads it as
    the model's own output text."""
    text = m.get("text") or ""
    calls = m.get("tool_calls") or []
    if not text and not calls:
        return []  # reasoning alone (an answer the limit cut short) cannot stand: the API
        # refuses a reasoning item without the item it led to
    items: list[Item] = [*replay_items(m.get("replay"), model)]
    if text:
        message: OutputMessage = {"type": "message", "role": "assistant", "content": text}
        phase = _own(m.get("replay"), model).get("phase")
        if phase in PHASES:
            message["phase"] = phase  # the codex models do worse when it is dropped
        items.append(message)
    for c in calls:
        items.append(
            {
                "type": "function_call",
                "call_id": c.get("id") or "",
                "name": c.get("name") or "",
                "arguments": reencode_arguments(c.get("arguments")),
            }
        )
    return items


def _own(replay: Any, model: str) -> Mapping[str, Any]:
    """The replay data, if this wire and this model wrote it, else nothing."""
    if not isinstance(replay, Mapping) or replay.get("wire") != "responses" or replay.get("model") != model:
        return {}
    return replay


def replay_items(replay: Any, model: str) -> list[ReasoningItem]:
    """The encrypted reasoning items an assistant message carries, if this model wrote
    them (the encrypted content is only valid there)."""
    items = _own(replay, model).get("items")
    if not isinstance(items, list):
        return []
    return [r for r in map(reasoning_item, items) if r is not None]


def reasoning_item(item: Any) -> ReasoningItem | None:
    """A reasoning item as it is sent back, or None when it cannot be: without its
    encrypted content the API would look its id up, and nothing is stored."""
    if not isinstance(item, Mapping) or item.get("type") != "reasoning":
        return None
    if not isinstance(item.get("id"), str) or not isinstance(item.get("encrypted_content"), str):
        return None
    summary = item.get("summary")
    return {
        "type": "reasoning",
        "id": item["id"],
        "summary": [
            {"type": "summary_text", "text": s["text"]}
            for s in (summary if isinstance(summary, list) else [])
            if isinstance(s, Mapping) and isinstance(s.get("text"), str)
        ],
        "encrypted_content": item["encrypted_content"],
    }


# --------------------------------------------------------------------------- response


class _Call(Struct):
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    final: str | None = None  # the whole arguments, once `.done` says them


def usage_from(usage: Mapping[str, Any]) -> Usage:
    """Responses usage → ours: `input` is what was neither read from nor written to the
    cache; reasoning tokens are part of `output_tokens` already."""
    details = usage.get("input_tokens_details")
    details = details if isinstance(details, dict) else {}
    cache_read = as_int(details.get("cached_tokens"))
    cache_write = as_int(details.get("cache_write_tokens"))
    return Usage(
        input=max(as_int(usage.get("input_tokens")) - cache_read - cache_write, 0),
        output=as_int(usage.get("output_tokens")),
        cache_read=cache_read,
        cache_write=cache_write,
    )


class ResponsesStream:
    """Folds Responses stream events into an `Answer`, reporting as it goes.

    `progress` is the reader's stall-deadline push: every typed event is real progress
    (the API sends no empty keep-alive events; SSE comments never reach here).
    """

    def __init__(self, reply: Reply, progress: Callable[[], None], model: str) -> None:
        self.reply = reply
        self.progress = progress
        self.model = model
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.streamed: set[Any] = set()  # message items whose text came as deltas
        self.reasoning: list[str] = []
        self._thought_at: tuple[Any, ...] | None = None  # where the last reasoning delta went
        self.calls: dict[Any, _Call] = {}  # by output_index
        self.call_index: dict[str, Any] = {}  # item id → output_index
        self.reasoning_items: dict[Any, dict[str, Any]] = {}  # by output_index
        self.usage: Usage | None = None
        self.phase: str | None = None  # of the last message item that had one
        self.status: Literal["completed", "incomplete"] | None = None
        self.incomplete_reason = ""

    def feed(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if not isinstance(kind, str):
            return
        self.progress()
        if kind == "response.output_text.delta":  # the hot path
            delta = obj.get("delta")
            if delta and isinstance(delta, str):
                self.text.append(delta)
                self.reply.text(delta)
                self.streamed.add(obj.get("item_id"))
        else:
            self._event(kind, obj)

    def _event(self, kind: str, obj: dict[str, Any]) -> None:
        """Every event but a text delta."""
        if kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            where = (kind, obj.get("item_id"), obj.get("summary_index"), obj.get("content_index"))
            self._thought(obj.get("delta"), where)
        elif kind == "response.function_call_arguments.delta":
            call = self._call_of(obj)
            delta = obj.get("delta")
            if call is not None and delta and isinstance(delta, str):
                call.arguments.append(delta)
                self.reply.touch()
        elif kind == "response.function_call_arguments.done":
            call = self._call_of(obj)
            if call is not None and isinstance(obj.get("arguments"), str):
                call.final = obj["arguments"]
        elif kind in ("response.output_item.added", "response.output_item.done"):
            self._item(obj.get("output_index"), obj.get("item"), done=kind.endswith("done"))
        elif kind == "response.refusal.delta":
            delta = obj.get("delta")
            if delta and isinstance(delta, str):
                self.refusal.append(delta)
                self.reply.text(delta)
                self.streamed.add(obj.get("item_id"))
        elif kind in ("response.completed", "response.incomplete"):
            self._end(obj.get("response"))
        elif kind == "response.failed":
            response = obj.get("response")
            error = response.get("error") if isinstance(response, dict) else None
            raise stream_error(error or {"message": "the response failed"})
        elif kind == "error":
            raise stream_error(obj.get("error") if isinstance(obj.get("error"), dict) else obj)

    def _thought(self, delta: Any, where: tuple[Any, ...]) -> None:
        if not delta or not isinstance(delta, str):
            return
        if self.reasoning and where != self._thought_at:
            self.reasoning.append("\n\n")  # a new summary part or reasoning item
            self.reply.reasoning("\n\n")
        self._thought_at = where
        self.reasoning.append(delta)
        self.reply.reasoning(delta)

    def _call_of(self, obj: dict[str, Any]) -> _Call | None:
        index = obj.get("output_index")
        if index not in self.calls:
            index = self.call_index.get(as_str(obj.get("item_id")), index)
        return self.calls.get(index)

    def _item(self, index: Any, item: Any, *, done: bool) -> None:
        if not isinstance(item, dict):
            return
        kind = item.get("type")
        if kind == "function_call":
            call = self.calls.setdefault(index, _Call())
            if isinstance(item.get("id"), str):
                self.call_index[item["id"]] = index
            call.call_id = as_str(item.get("call_id")) or call.call_id
            call.name = as_str(item.get("name")) or call.name
            if done and isinstance(item.get("arguments"), str):
                call.final = item["arguments"]
            self.reply.touch()
        elif kind == "reasoning" and done:
            # The item as finished: its encrypted content differs from the one `added`
            # showed, and only the final one is valid.
            self.reasoning_items[index] = item
        elif kind == "message" and done:
            if item.get("phase") in PHASES:
                self.phase = item["phase"]
            if item.get("id") not in self.streamed:
                self._whole_message(item)

    def _whole_message(self, item: dict[str, Any]) -> None:
        """A message whose text came whole in its `done` item, with no deltas before."""
        for part in item.get("content") or []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "output_text" and as_str(part.get("text")):
                self.text.append(part["text"])
                self.reply.text(part["text"])
            elif part.get("type") == "refusal" and as_str(part.get("refusal")):
                self.refusal.append(part["refusal"])
                self.reply.text(part["refusal"])

    def _end(self, response: Any) -> None:
        if not isinstance(response, dict):
            response = {}
        status = response.get("status")
        self.status = "incomplete" if status == "incomplete" else "completed"
        details = response.get("incomplete_details")
        if isinstance(details, dict):
            self.incomplete_reason = as_str(details.get("reason"))
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.usage = usage_from(usage)
        output = response.get("output")
        for index, item in enumerate(output if isinstance(output, list) else []):
            # The finished response's reasoning items are the final word (the API
            # encrypts each copy afresh); the SDK keeps these too.
            if isinstance(item, dict) and item.get("type") == "reasoning":
                self.reasoning_items[index] = item

    def tool_calls(self) -> list[ToolCall]:
        return [
            ToolCall(c.call_id, c.name, c.final if c.final is not None else "".join(c.arguments))
            for _, c in sorted(self.calls.items(), key=lambda kv: as_int(kv[0]))
        ]

    def replay(self) -> dict[str, object] | None:
        """The encrypted reasoning items, in output order, and the message's phase, for
        the next request."""
        ordered = sorted(self.reasoning_items.items(), key=lambda kv: as_int(kv[0]))
        items = [r for r in (reasoning_item(item) for _, item in ordered) if r is not None]
        if not items and self.phase is None:
            return None
        replay: dict[str, object] = {"wire": "responses", "model": self.model, "items": items}
        if self.phase is not None:
            replay["phase"] = self.phase
        return replay

    @property
    def finished(self) -> bool:
        return self.status is not None

    @property
    def complete(self) -> bool:
        return self.status is not None

    def answer(self) -> Answer:
        """The final answer, or the `Failure` the stream ended in."""
        if self.status == "incomplete" and self.incomplete_reason == "content_filter":
            raise Failure("provider", "the response was stopped by the content filter", usage=self.usage)
        text = "".join(self.text) + "".join(self.refusal)  # as it was streamed
        return finish_answer(
            text=text,
            reasoning="".join(self.reasoning),
            calls=self.tool_calls(),
            usage=self.usage,
            finished=self.finished,
            hit_limit=self.status == "incomplete",
            replay=self.replay(),
        )


def stream_error(error: Any) -> Failure:
    """An `error` event or a failed response's `error`. Rate limits and server errors
    are reported as the HTTP statuses they stand for, so the loop retries them."""
    if not isinstance(error, dict):
        return Failure("provider", f"stream error: {error}")
    code = as_str(error.get("code")) or as_str(error.get("type"))
    message = as_str(error.get("message")) or code or json.dumps(error, ensure_ascii=False)
    status = RETRY_CODES.get(code)
    label = f"{code}: {message}" if code and code not in message else message
    if status is not None:
        return Failure("http", f"http: {status}: {label}", status=status)
    return Failure("provider", f"stream error: {label}")


# --------------------------------------------------------------------------- the wire


def refuses_summary(failure: Failure) -> bool:
    """A 400 saying this organisation may not have reasoning summaries."""
    text = failure.message.lower()
    return failure.status == 400 and "summar" in text and ("verif" in text or "reasoning.summary" in text)


class ResponsesWire(SSEWire):
    """One wire per app. A model whose organisation is refused reasoning summaries is
    asked again at once without one, and never asks for one again in this process: its
    reasoning still works and still carries across the tool loop, it is just not shown."""

    name = "responses"

    def __init__(self, http: Http | Client, *, idle: float = STALL_SECONDS) -> None:
        super().__init__(http, idle=idle)
        self.no_summary: set[tuple[str, str]] = set()  # (base_url, model)

    async def _call(self, request: WireRequest, reply: Reply) -> Answer:
        try:
            return await super()._call(request, reply)
        except Failure as failure:
            where = (request.provider.get("base_url") or "", request.model)
            if where in self.no_summary or not refuses_summary(failure):
                raise
            self.no_summary.add(where)
            return await super()._call(request, reply)

    def url(self, request: WireRequest, base_url: str) -> str:
        return responses_url(base_url)

    def headers(self, request: WireRequest) -> dict[str, str]:
        return build_headers(request)

    def body(self, request: WireRequest) -> Body:
        where = (request.provider.get("base_url") or "", request.model)
        return build_body(request, summary=where not in self.no_summary)

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> ResponsesStream:
        return ResponsesStream(reply, progress, request.model)
