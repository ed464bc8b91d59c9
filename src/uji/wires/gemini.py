"""The `gemini` wire: Gemini's streamGenerateContent over SSE (reference internals §4, §6).

    POST <base_url>/models/<model>:streamGenerateContent?alt=sse    x-goog-api-key

Request: `systemInstruction`; `contents` with roles `user` and `model`; calls as
`functionCall` parts, results as `functionResponse{name, response{result}}` parts of a
user turn (as google-genai sends them; the reference's role `function` is refused by
current models), and the tools' images after them in that turn (reference §4).
Gemini pairs a response with its call by name and order, so call ids never go on the
wire: they are uji's own bookkeeping.

A call's `thoughtSignature` is kept on the call (`ToolCall.signature`) and sent back with
it to the model that made it; Gemini 3 refuses a call of the current turn without one, so
a call made by another model gets the documented placeholder instead.

Thinking: 2.5 takes a token budget (0 switches it off), 3.x a named level. Thoughts
stream as parts marked `thought: true` when `includeThoughts` is set.

The pure parts (`build_body`, `build_headers`, `GenerateStream`) need no server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict
from urllib.parse import quote

from uji.wires.base import BUDGETS, RANK

from .base import (
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
    signed_in,
    tool_text,
    with_note,
)
from .openai_chat import stream_error

MIN_OUTPUT = 1024
# The placeholder Google documents for a call whose signature is not this model's own.
SKIP_SIGNATURE = "skip_thought_signature_validator"
# Highest thinking budget each 2.5 family takes (a larger one is a 400), first match wins.
BUDGET_CAPS: list[tuple[str, int]] = [("pro", 32768), ("flash", 24576)]
DEFAULT_BUDGET_CAP = 24576
PRO_MIN_BUDGET = 128  # 2.5 Pro cannot stop thinking: "off" is its smallest budget
# Gemini 3 thinking levels per model family, least to most; first match wins.
LEVELS: list[tuple[str, list[str]]] = [
    ("flash", ["minimal", "low", "medium", "high"]),
    ("gemini-3-pro", ["low", "high"]),
]
DEFAULT_LEVELS = ["low", "high"]
# Finish reasons that mean the answer was withheld, not that the model was done.
WITHHELD = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "LANGUAGE", "IMAGE_SAFETY", "OTHER"}
)


# --------------------------------------------------------------------------- request


def model_name(model: str) -> str:
    return model.removeprefix("models/")


def stream_url(base_url: str, model: str) -> str:
    name = quote(model_name(model), safe="-._~")
    return f"{base_url.rstrip('/')}/models/{name}:streamGenerateContent?alt=sse"


def build_headers(request: WireRequest) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if not signed_in(request, headers):
        key = (request.auth or {}).get("key")
        if key:
            headers["x-goog-api-key"] = key
    return headers


_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")


def gemini_version(model: str) -> tuple[int, int] | None:
    m = _VERSION.search(model_name(model))
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


# The request body (generateContent) ----------------------------------------------------


if TYPE_CHECKING:
    # Types of the JSON sent, for the type checker only: creating a TypedDict costs ~0.2 ms.
    class Blob(TypedDict):
        mimeType: str
        data: str  # base64

    class FunctionCall(TypedDict):
        name: str
        args: object  # the call's arguments object

    class FunctionResult(TypedDict):
        result: str

    class FunctionResponse(TypedDict):
        name: str
        response: FunctionResult

    class Part(TypedDict, total=False):
        """One of text, inlineData, functionCall or functionResponse (and a call's or a
        text's thought signature)."""

        text: str
        inlineData: Blob
        functionCall: FunctionCall
        functionResponse: FunctionResponse
        thoughtSignature: str

    class Content(TypedDict):
        role: Literal["user", "model"]
        parts: list[Part]

    class FunctionDeclaration(TypedDict):
        name: str
        description: str
        parametersJsonSchema: dict[str, Any]  # a JSON schema: any JSON

    class Tool(TypedDict):
        functionDeclarations: list[FunctionDeclaration]

    class ThinkingConfig(TypedDict, total=False):
        includeThoughts: bool
        thinkingLevel: str
        thinkingBudget: int

    class GenerationConfig(TypedDict):
        maxOutputTokens: int
        thinkingConfig: NotRequired[ThinkingConfig]

    class SystemInstruction(TypedDict):
        parts: list[Part]

    class Body(TypedDict):
        contents: list[Content]
        systemInstruction: NotRequired[SystemInstruction]
        tools: NotRequired[list[Tool]]
        generationConfig: NotRequired[GenerationConfig]


def build_body(request: WireRequest) -> Body:
    body: Body = {
        "contents": build_contents(request.messages, request.model, images=request.images is not False),
    }
    if request.system:
        body["systemInstruction"] = {"parts": [{"text": request.system}]}
    if request.tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t) for t in request.tools]}]
    config: GenerationConfig = {"maxOutputTokens": output_limit(request, MIN_OUTPUT)}
    thinking = thinking_config(request.effort, request.model, request.reasoning)
    if thinking:
        config["thinkingConfig"] = thinking
    body["generationConfig"] = config
    return body


def _declaration(tool: ToolSpec) -> FunctionDeclaration:
    # `parametersJsonSchema` takes JSON Schema as it is; `parameters` takes only an
    # OpenAPI subset and refuses common keywords such as `additionalProperties`.
    return {
        "name": tool["name"],
        "description": tool.get("description") or "",
        "parametersJsonSchema": tool.get("parameters") or NO_PARAMETERS,
    }


def thinking_config(effort: str | None, model: str, reasoning: bool) -> ThinkingConfig | None:
    version = gemini_version(model)
    if version is None or version < (2, 5):
        return None  # older models do not think, and refuse a thinkingConfig
    if effort is None or effort not in RANK:
        return {"includeThoughts": True} if reasoning else None
    if version >= (3, 0):
        # The enum's own spelling, as google-genai sends it (the API also reads "high").
        return {"thinkingLevel": thinking_level(effort, model).upper(), "includeThoughts": True}
    if effort == "off":
        if "pro" in model:
            return {"thinkingBudget": PRO_MIN_BUDGET, "includeThoughts": True}
        return {"thinkingBudget": 0}
    cap = next((c for family, c in BUDGET_CAPS if family in model), DEFAULT_BUDGET_CAP)
    return {"thinkingBudget": min(BUDGETS[effort], cap), "includeThoughts": True}


def thinking_level(effort: str, model: str) -> str:
    """The highest level at or below the wanted effort; the lowest when all are above
    (Gemini 3 cannot stop thinking)."""
    levels = next((lv for family, lv in LEVELS if family in model), DEFAULT_LEVELS)
    at_or_below = [lv for lv in levels if RANK[lv] <= RANK[effort]]
    return at_or_below[-1] if at_or_below else levels[0]


def build_contents(messages: Sequence[Message], model: str, *, images: bool = True) -> list[Content]:
    """Stored messages → Gemini contents, images placed and budgeted."""
    plan = plan_images(messages, images=images)
    v3 = (gemini_version(model) or (0, 0)) >= (3, 0)
    out: list[Content] = []
    tool_images: list[Part] = []  # of the current run of tool messages
    for i, m in enumerate(messages):
        if m["type"] != "tool" and tool_images:
            _append(out, "user", [{"text": TOOL_IMAGES_TEXT}, *tool_images])
            tool_images = []
        kept, note = plan.get(i, ([], ""))
        if m["type"] == "user":
            parts: list[Part] = [inline_data(img) for img in kept]
            text = with_note(m.get("text") or "", note)
            if text or not parts:
                parts.append({"text": text})
            _append(out, "user", parts)
        elif m["type"] == "assistant":
            parts = _model_parts(m, model, v3)
            if parts:
                _append(out, "model", parts)
        elif m["type"] == "tool":
            # Function responses go in a user turn, as google-genai sends them: current
            # models refuse the old role `function`.
            response: FunctionResponse = {
                "name": m.get("name") or "",
                "response": {"result": with_note(tool_text(m), note)},
            }
            _append(out, "user", [{"functionResponse": response}])
            tool_images += [inline_data(img) for img in kept]
    if tool_images:
        _append(out, "user", [{"text": TOOL_IMAGES_TEXT}, *tool_images])
    return out


def _append(out: list[Content], role: Literal["user", "model"], parts: list[Part]) -> None:
    # All responses to one step's calls must share one content, so a run merges; the
    # responses keep a content of their own, as google-genai sends them.
    if out and out[-1]["role"] == role and _responses(out[-1]["parts"]) == _responses(parts):
        out[-1]["parts"].extend(parts)
    else:
        out.append({"role": role, "parts": parts})


def _responses(parts: list[Part]) -> bool:
    return any("functionResponse" in p for p in parts)


def inline_data(image: Image) -> Part:
    return {
        "inlineData": {"mimeType": image.get("media_type") or "image/png", "data": image.get("data") or ""}
    }


def _model_parts(m: AssistantItem, model: str, v3: bool) -> list[Part]:
    replay = m.get("replay")
    own = isinstance(replay, Mapping) and replay.get("wire") == "gemini" and replay.get("model") == model
    parts: list[Part] = []
    text = m.get("text") or ""
    if text:
        part: Part = {"text": text}
        if own and isinstance(replay, Mapping) and isinstance(replay.get("signature"), str):
            part["thoughtSignature"] = replay["signature"]
        parts.append(part)
    for c in m.get("tool_calls") or []:
        args = json.loads(reencode_arguments(c.get("arguments")))
        part = {"functionCall": {"name": c.get("name") or "", "args": args}}
        signature = c.get("signature") if own else None
        if isinstance(signature, str) and signature:
            part["thoughtSignature"] = signature
        elif v3:
            part["thoughtSignature"] = SKIP_SIGNATURE
        parts.append(part)
    return parts


# --------------------------------------------------------------------------- response


def usage_from(meta: Mapping[str, Any]) -> Usage:
    """input = prompt − cached, cache_read = cached, output = candidates + thoughts."""
    cached = as_int(meta.get("cachedContentTokenCount"))
    return Usage(
        input=max(as_int(meta.get("promptTokenCount")) - cached, 0),
        output=as_int(meta.get("candidatesTokenCount")) + as_int(meta.get("thoughtsTokenCount")),
        cache_read=cached,
    )


class GenerateStream:
    """Folds GenerateContentResponse chunks into an `Answer`, reporting as it goes.

    `progress` is the reader's stall-deadline push: called for text, thoughts, calls
    and the finish, never for chunks without content (usage only, empty text).
    """

    def __init__(self, reply: Reply, progress: Callable[[], None], model: str) -> None:
        self.reply = reply
        self.progress = progress
        self.model = model
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[ToolCall] = []
        self.finish: str | None = None
        self.meta: dict[str, Any] | None = None  # the latest usageMetadata (cumulative)
        self.signature: str | None = None  # the last one on a part that is not a call

    def feed(self, obj: dict[str, Any]) -> None:
        candidates = obj.get("candidates")
        if candidates and isinstance(candidates, list) and isinstance(candidates[0], dict):
            candidate = candidates[0]
            content = candidate.get("content")
            if content and isinstance(content, dict):
                parts = content.get("parts")
                if parts and isinstance(parts, list):
                    self._parts(parts)
            finish = candidate.get("finishReason")
            if finish and isinstance(finish, str):
                self.finish = finish
                self.progress()
        meta = obj.get("usageMetadata")
        if meta and isinstance(meta, dict):
            self.meta = meta  # read once at the end: every chunk repeats it
        if "error" in obj:
            raise stream_error(obj["error"])
        feedback = obj.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            raise Failure("provider", f"the prompt was blocked ({feedback['blockReason']})")

    def _parts(self, parts: list[Any]) -> None:
        for part in parts:
            if not isinstance(part, dict):
                continue
            text = part.get("text")
            if len(part) == 1 and text and isinstance(text, str):  # the common plain delta
                self.text.append(text)
                self.reply.text(text)
                self.progress()
                continue
            if text and isinstance(text, str):
                if part.get("thought") is True:
                    self.reasoning.append(text)
                    self.reply.reasoning(text)
                else:
                    self.text.append(text)
                    self.reply.text(text)
                self.progress()
            call = part.get("functionCall")
            signature = part.get("thoughtSignature")
            signature = signature if isinstance(signature, str) and signature else None
            if isinstance(call, dict):
                self._call(call, signature)
            elif signature is not None:
                self.signature = signature

    def _call(self, call: dict[str, Any], signature: str | None) -> None:
        # An id only when Gemini gave one; otherwise the loop makes a unique one (a
        # name would not do: a session pairs results with calls by id).
        call_id = as_str(call.get("id"))
        name = as_str(call.get("name"))
        args = call.get("args")
        arguments = json.dumps(args, ensure_ascii=False) if isinstance(args, dict) else ""
        self.calls.append(ToolCall(call_id, name, arguments, signature))
        self.reply.touch()
        self.progress()

    def replay(self) -> dict[str, object] | None:
        """Which model signed this answer, so its signatures go back only to it."""
        if self.signature is None and not any(c.signature for c in self.calls):
            return None
        replay: dict[str, object] = {"wire": "gemini", "model": self.model}
        if self.signature is not None:
            replay["signature"] = self.signature
        return replay

    @property
    def complete(self) -> bool:
        return self.finish is not None

    @property
    def finished(self) -> bool:
        return self.finish is not None

    def answer(self) -> Answer:
        """The final answer, or the `Failure` the stream ended in."""
        text = "".join(self.text)
        usage = usage_from(self.meta) if self.meta is not None else None
        if self.finish in WITHHELD and not text and not self.calls:
            raise Failure(
                "provider", f"the model stopped without an answer (finishReason {self.finish})", usage=usage
            )
        if self.finish == "MALFORMED_FUNCTION_CALL" and not self.calls:
            raise Failure("provider", "the model sent a malformed function call", usage=usage)
        return finish_answer(
            text=text,
            reasoning="".join(self.reasoning),
            calls=self.calls,
            usage=usage,
            finished=self.finish is not None,
            hit_limit=self.finish == "MAX_TOKENS",
            replay=self.replay(),
        )


# --------------------------------------------------------------------------- the wire


class GeminiWire(SSEWire):
    name = "gemini"
    late_events = True  # a usage-only chunk may follow the finish

    def url(self, request: WireRequest, base_url: str) -> str:
        return stream_url(base_url, request.model)

    def headers(self, request: WireRequest) -> dict[str, str]:
        return build_headers(request)

    def body(self, request: WireRequest) -> Body:
        return build_body(request)

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> GenerateStream:
        return GenerateStream(reply, progress, request.model)
