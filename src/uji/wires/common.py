"""What every HTTP wire shares: the image budget, the checks at the end of a stream,
scrubbing credentials out of errors, and `SSEWire`, the request → SSE → parser frame
each wire fills in with its own URL, headers, body and parser."""

from __future__ import annotations

import asyncio
import functools
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from .base import STALL_SECONDS, Answer, Failure, Image, Message, Reply, ToolCall, Usage, WireRequest
from .http import Http

if TYPE_CHECKING:
    from .transport import Client
from .sse import DRAIN_SECONDS, objects, open_sse

MAX_IMAGES = 20  # per request, newest first (internals §4)
MAX_IMAGE_BYTES = 16 * 1024 * 1024  # base64 bytes per request, newest first
ImagePlan = dict[int, tuple[list[Image], str]]
REDACTED = "[redacted]"
MIN_SECRET = 4  # shorter "keys" (test stubs, "x") would only garble the message


TOOL_IMAGES_TEXT = "These are the images the tool calls above returned."


NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def plan_images(messages: Sequence[Message], *, images: bool = True) -> ImagePlan:
    """Which images each message may send, counting back from the newest.

    Returns {message index: (kept images in their order, the note for the ones left
    out, or "")}. Once one image does not fit, every older one is left out too: the
    budget keeps the *newest* images, not the most images. With `images=False` (a
    text-only model) every image is left out. Shared by every HTTP wire.
    """
    plan: ImagePlan = {}
    count = total = 0
    full = not images
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m["type"] == "assistant":
            continue
        found = m.get("images") or []
        if not found:
            continue
        kept: list[Image] = []
        for img in reversed(found):
            size = len(img.get("data") or "")
            full = full or count >= MAX_IMAGES or total + size > MAX_IMAGE_BYTES
            if not full:
                kept.append(img)
                count += 1
                total += size
        kept.reverse()
        missing = len(found) - len(kept)
        plan[i] = (kept, left_out_note(missing, text_only=not images) if missing else "")
    return plan


def left_out_note(n: int, *, text_only: bool = False) -> str:
    why = "this model does not take images" if text_only else "only the newest images fit in a request"
    return f"[{n} image(s) left out: {why}]"


def with_note(text: str, note: str) -> str:
    if not note:
        return text
    return f"{text}\n\n{note}" if text else note


def as_int(value: Any) -> int:
    """A count from a server: anything but an int (None, a bool, a string) is 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_str(value: Any) -> str:
    """A string from a server: anything else is ""."""
    return value if isinstance(value, str) else ""


def reencode_arguments(arguments: Any) -> str:
    """The call's arguments as a JSON object text; anything unparsable is sent as `{}`
    (the tool result already told the model what was wrong)."""
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            return "{}"
    if not isinstance(value, dict):
        return "{}"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def tool_text(m: Mapping[str, Any]) -> str:
    """A tool message's content as text (a Lua tool may have stored a table)."""
    content = m.get("content")
    if isinstance(content, str):
        return content
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def finish_answer(
    *,
    text: str,
    reasoning: str,
    calls: list[ToolCall],
    usage: Usage | None,
    finished: bool,
    hit_limit: bool,
    replay: Any = None,
) -> Answer:
    """The checks every wire makes at the end of a stream (reference internals §6): it
    finished, the output limit did not cut a call short, it is not empty. An answer the
    limit cut off is kept (`limited`): the loop says so. A failure carries the usage."""
    if not finished:
        raise Failure("http", "stream ended before the model finished", usage=usage)
    if hit_limit and not all(_is_json(c.arguments) for c in calls):
        raise Failure(
            "provider",
            "the model hit its output limit: tool call arguments were cut off; raise the model's max output",
            usage=usage,
        )
    if not text and not calls and not (hit_limit and reasoning):
        what = "the model hit its output limit before it wrote an answer" if hit_limit else "empty reply"
        raise Failure("provider", what, usage=usage)
    return Answer(
        text=text,
        reasoning=reasoning,
        tool_calls=calls,
        usage=usage or Usage(),
        replay=replay,
        limited=hit_limit and not calls,
    )


async def drain_into(events: AsyncIterator[dict[str, Any]], feed: Callable[[dict[str, Any]], None]) -> None:
    """After the finish event, read what is left of the body for at most DRAIN_SECONDS.

    Servers end the body right after their finish, so this takes no time and hands the
    connection back to the pool; one that holds the stream open costs half a second,
    not a stall timeout. Late events (usage) still count; errors after the finish
    change nothing.
    """
    from .transport import HTTPError

    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for obj in events:
                feed(obj)
    except (TimeoutError, HTTPError, Failure):
        pass


def signed_in(request: WireRequest, headers: dict[str, str]) -> bool:
    """A subscription sign-in (providers/oauth.py) put in `headers`: its token as Bearer,
    its own headers. False when the request has none (a key is sent instead)."""
    session = (request.auth or {}).get("oauth")
    if not session:
        return False
    headers["Authorization"] = f"Bearer {session['token']}"
    headers.update(session.get("headers") or {})
    return True


def secrets_of(request: WireRequest) -> list[str]:
    """Every credential a request carries: the key, OAuth strings, a password or query
    values in the base_url. Longest first, so a key containing another goes whole."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk(request.auth or {})
    parts = urlsplit(str(request.provider.get("base_url") or ""))
    if parts.password:
        found.append(parts.password)
    found += [kv.partition("=")[2] for kv in parts.query.split("&")]
    return sorted({s for s in found if len(s) >= MIN_SECRET}, key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


@functools.cache
def overflow_numbers() -> tuple[re.Pattern[str], ...]:
    """How servers say a prompt is larger than their context, each with the prompt's
    tokens (`n`) and the context's (`m`) where it names them. llama.cpp's server (its
    error JSON carries both numbers), llama-cpp-python's, vLLM's and OpenAI's, LM
    Studio's, Anthropic's. Compiled with the first failure (0.6 % of a turn otherwise)."""
    return (
        re.compile(r'"n_prompt_tokens"\s*:\s*(?P<n>\d+).*?"n_ctx"\s*:\s*(?P<m>\d+)', re.S),
        re.compile(r"Requested tokens \((?P<n>\d+)\) exceed context window of (?P<m>\d+)"),
        re.compile(r"maximum context length is (?P<m>\d+) tokens\. However, you requested (?P<n>\d+) tokens"),
        re.compile(r"keep the first (?P<n>\d+) tokens .*? context length of only (?P<m>\d+) tokens", re.S),
        re.compile(r"prompt is too long: (?P<n>\d+) tokens > (?P<m>\d+) maximum"),
    )


OVERFLOW_WORDS = ("exceed_context_size", "exceeds the available context size", "context_length_exceeded")


def context_overflow(failure: Failure) -> Failure | None:
    """The failure as one line saying the prompt does not fit, with both numbers where
    the server gave them; None when it is about something else. Not retried: the same
    prompt would not fit the next time either."""
    text = failure.message
    for pattern in overflow_numbers():
        found = pattern.search(text)
        if found:
            n, m = int(found["n"]), int(found["m"])
            return Failure(
                "provider",
                f"the prompt does not fit: {n} tokens, the server holds {m}"
                " (a smaller prompt, /compact, or a larger context on the server)",
                status=failure.status,
                usage=failure.usage,
            )
    if any(word in text for word in OVERFLOW_WORDS):
        return Failure(
            "provider",
            "the prompt does not fit in the server's context"
            " (a smaller prompt, /compact, or a larger context on the server)",
            status=failure.status,
            usage=failure.usage,
        )
    return None


def scrubbed(failure: Failure, request: WireRequest) -> Failure:
    """The failure with every credential of the request cut out of its message: an
    error body may echo the request back, `Authorization` header and all."""
    failure.message = scrub(failure.message, secrets_of(request))
    return failure


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class Parser(Protocol):
    """A wire's stream parser: events in, one Answer out."""

    def feed(self, obj: dict[str, Any]) -> None: ...

    @property
    def complete(self) -> bool:
        """Nothing more is needed: stop reading (what is left is drained)."""
        ...

    @property
    def finished(self) -> bool:
        """The model finished: a connection lost now loses nothing the turn needs."""
        ...

    def answer(self) -> Answer: ...


def _ignore(obj: dict[str, Any]) -> None:
    pass


async def _then(
    first: Iterator[dict[str, Any]], batches: AsyncIterator[list[str]]
) -> AsyncIterator[dict[str, Any]]:
    """The objects left in `first`, then those of the batches still to come."""
    for obj in first:
        yield obj
    async for datas in batches:
        for obj in objects(datas):
            yield obj


class SSEWire:
    """One streamed call over HTTP + SSE. A subclass gives `url`, `headers`, `body` and
    `parser`; this class runs the request, feeds the parser, and ends with exactly one
    `reply.done` or `reply.fail` unless the task is cancelled (then the connection is
    dropped and neither is called)."""

    name = ""
    late_events = False  # events after `complete` (a usage chunk) still go to the parser

    def __init__(self, http: Http | Client, *, idle: float = STALL_SECONDS) -> None:
        # The client is its maker's to close; a bare client is wrapped, not owned.
        self.http = http if isinstance(http, Http) else Http(http)
        self.idle = idle

    def url(self, request: WireRequest, base_url: str) -> str:
        raise NotImplementedError

    def headers(self, request: WireRequest) -> dict[str, str]:
        raise NotImplementedError

    def body(self, request: WireRequest) -> Mapping[str, object]:
        """The request's JSON body (each wire's own TypedDict)."""
        raise NotImplementedError

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> Parser:
        raise NotImplementedError

    async def stream(self, request: WireRequest, reply: Reply) -> None:
        try:
            answer = await self._call(request, reply)
        except Failure as failure:
            reply.fail(scrubbed(context_overflow(failure) or failure, request))
        except Exception as e:  # a bug or an unforeseen payload must still end the call
            reply.fail(scrubbed(Failure("provider", f"{self.name}: {type(e).__name__}: {e}"), request))
        else:
            reply.done(answer)

    async def _call(self, request: WireRequest, reply: Reply) -> Answer:
        base_url = request.provider.get("base_url") or ""
        if not base_url:
            raise Failure("provider", f"{self.name}: the provider has no base_url")
        client = self.http.client()
        parser: Parser | None = None
        try:
            async with open_sse(
                client,
                self.url(request, base_url),
                headers=self.headers(request),
                body=self.body(request),
                idle=self.idle,
            ) as events:
                parser = self.parser(request, reply, events.progress)
                feed = parser.feed
                batches = aiter(events.batches())
                late: Iterator[dict[str, Any]] = iter(())
                async for datas in batches:
                    objs = objects(datas)
                    for obj in objs:
                        feed(obj)
                        if parser.complete:
                            late = objs
                            break
                    if parser.complete:
                        break
                if parser.complete:
                    await drain_into(_then(late, batches), feed if self.late_events else _ignore)
        except Failure as failure:
            if parser is None or not parser.finished or failure.kind != "http" or failure.status:
                raise
        assert parser is not None
        return parser.answer()


def is_local(url: str) -> bool:
    """Loopback or a private LAN address: 127/8, ::1, 10/8, 172.16/12, 192.168/16,
    localhost, *.local."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if host == "localhost" or host.endswith((".localhost", ".local")):
        return True
    import ipaddress  # not on the start-up path

    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or any(
        address in ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
    )
