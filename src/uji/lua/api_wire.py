"""A provider's `api` object (`uji.api.openai{...}` and the other classes, reference docs
§2 "Provider APIs"), run by uji's own wires.

An object's options become the provider's `compat` (uji.provider.add does that), so an
object that only sets options runs the built-in wire itself: this module is never
imported for it. An object whose class overrides methods gets a `hooked` wire: the
built-in wire's class with each overridden part (`url`, `headers`, `body`, and for
Chat Completions `thinking`, `user`/`assistant`/`tool` and `reasoning`) calling the Lua
method instead. The Lua classes' own methods (what an override reaches as
`uji.api.openai.body(self, request)`) come back here through `default_part` and
`default_item`, made by the same code as the wire's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypedDict, cast

from uji.lua.runtime import ApiError, LuaError
from uji.wires.base import Answer, Failure, Message, WireRequest, is_effort
from uji.wires.common import SSEWire

if TYPE_CHECKING:
    from uji.lua.host import LuaHost
    from uji.wires.base import Reply
    from uji.wires.common import Parser
    from uji.wires.registry import Wires

Part = Literal["url", "headers", "body"]
Role = Literal["user", "assistant", "tool"]
PARTS: tuple[Part, ...] = ("url", "headers", "body")
ROLES: tuple[Role, ...] = ("user", "assistant", "tool")
# The message shapes and the effort an object may override, besides the parts.
BODY_HOOKS = frozenset({"thinking", "user", "assistant", "tool"})


class ApiInfo(TypedDict):
    """What apis.lua `describe` tells of an object."""

    wire: str
    options: dict[str, str | bool]
    overrides: list[str]
    stream: bool
    efforts: bool
    ready: bool


class Hooks:
    """One api object's Lua methods, called where the wire would make that part."""

    def __init__(self, host: LuaHost, obj: Any, overrides: frozenset[str]) -> None:
        self.host = host
        self.obj = obj
        self.overrides = overrides
        self._request: tuple[WireRequest | None, Any] = (None, None)

    def request(self, request: WireRequest) -> Any:
        """The request as a Lua table, made once per request."""
        made, table = self._request
        if made is not request:
            table = self.host.lua.convert.to_lua(request.as_dict(), json_null=False)
            self._request = (request, table)
        return table

    def call(self, method: str, *args: Any) -> Any:
        """`obj:method(...)`'s first result as Python data; a Lua error fails the call."""
        rt = self.host.lua
        try:
            values = rt.call_sync(self.obj[method], self.obj, *args)
        except LuaError as e:
            raise Failure("provider", f"api {method}: {e}") from None
        return rt.convert.to_python(values[0]) if values else None

    def lua(self, value: Any) -> Any:
        return self.host.lua.convert.to_lua(value)


class HookedWire(SSEWire):
    """Mixed in before a built-in wire's class (`hooked`): its parts, overridden."""

    hooks: Hooks

    def url(self, request: WireRequest, base_url: str) -> str:
        if "url" not in self.hooks.overrides:
            return super().url(request, base_url)
        value = self.hooks.call("url", self.hooks.request(request))
        if not isinstance(value, str) or not value:
            raise Failure("provider", "api url: must return the request's URL as a string")
        return value

    def headers(self, request: WireRequest) -> dict[str, str]:
        if "headers" not in self.hooks.overrides:
            return super().headers(request)
        value = self.hooks.call("headers", self.hooks.request(request))
        if isinstance(value, list) and not value:
            value = {}
        if not isinstance(value, dict):
            raise Failure("provider", "api headers: must return a table of header names and values")
        headers = {"Content-Type": "application/json"}
        headers.update({str(k): str(v) for k, v in value.items()})
        return headers

    def body(self, request: WireRequest) -> Mapping[str, object]:
        if "body" in self.hooks.overrides:
            value = self.hooks.call("body", self.hooks.request(request))
            if not isinstance(value, dict):
                raise Failure("provider", "api body: must return the request body as a table")
            return cast("dict[str, object]", value)
        if self.name == "openai-chat" and self.hooks.overrides & BODY_HOOKS:
            return chat_body(request, self.hooks)
        return super().body(request)

    def parser(self, request: WireRequest, reply: Reply, progress: Callable[[], None]) -> Parser:
        parser = super().parser(request, reply, progress)
        if "reasoning" in self.hooks.overrides:
            from uji.wires.openai_chat import ChatStream

            if isinstance(parser, ChatStream):
                hooks = self.hooks

                def reasoning_of(delta: dict[str, Any]) -> str | None:
                    value = hooks.call("reasoning", hooks.lua(delta))
                    return value if isinstance(value, str) else None

                parser.reasoning_of = reasoning_of
        return parser


def hooked(base: SSEWire, hooks: Hooks) -> SSEWire:
    """A wire of `base`'s class whose overridden parts call the api object's methods."""
    cls = type(f"Lua{type(base).__name__}", (HookedWire, type(base)), {})
    wire = cast("HookedWire", cls(base.http, idle=base.idle))
    wire.hooks = hooks
    return wire


def chat_body(request: WireRequest, hooks: Hooks | None) -> dict[str, object]:
    """Chat Completions' body with the object's message shapes and `thinking`."""
    from uji.wires.openai_chat import build_body, dialect_for

    dialect = dialect_for(request.provider.get("base_url") or "", request.provider.get("compat"))
    if hooks is None:
        return build_body(request, dialect)
    overrides = hooks.overrides

    def shape(item: Message, built: dict[str, object]) -> dict[str, object]:
        if item["type"] not in overrides:
            return built
        value = hooks.call(item["type"], hooks.lua(dict(item)), hooks.request(request))
        if not isinstance(value, dict):
            raise Failure("provider", f"api {item['type']}: must return a message table")
        return cast("dict[str, object]", value)

    def thinking(body: dict[str, object]) -> dict[str, object]:
        table = hooks.lua(body)
        hooks.call("thinking", table, hooks.request(request))  # it changes the table it is given
        value = hooks.host.lua.convert.to_python(table)
        return cast("dict[str, object]", value) if isinstance(value, dict) else body

    return build_body(
        request,
        dialect,
        shape=shape if overrides & {"user", "assistant", "tool"} else None,
        thinking=thinking if "thinking" in overrides else None,
    )


# The Lua classes' own methods --------------------------------------------------------


def request_from(data: Any, info: ApiInfo) -> WireRequest:
    """A request table from Lua (as a wire is given it) as a WireRequest, with the api
    object's options as the provider's `compat` (its own `compat` wins)."""
    if not isinstance(data, dict):
        raise ApiError("expects the request table")
    given, secret = data.get("provider"), data.get("auth")
    provider: dict[str, Any] = given if isinstance(given, dict) else {}
    auth: dict[str, Any] = secret if isinstance(secret, dict) else {}
    effort = data.get("effort")
    cache = data.get("cache")
    return WireRequest(
        model=str(data.get("model") or ""),
        system=str(data.get("system") or ""),
        messages=list(data.get("messages") or []),
        tools=list(data.get("tools") or []),
        provider={
            "id": str(provider.get("id") or ""),
            "base_url": str(provider.get("base_url") or ""),
            "compat": {**info["options"], **(provider.get("compat") or {})},
        },
        auth={"key": auth.get("key"), "oauth": auth.get("oauth")},
        effort=effort if is_effort(effort) else None,
        reasoning=bool(data.get("reasoning")),
        max_output=int(data.get("max_output") or 8192),
        cache=cache if cache in ("off", "short", "long") else "short",
        session=str(data.get("session") or ""),
    )


def default_part(host: LuaHost, wires: Wires, part: Part, info: ApiInfo | None, obj: Any, data: Any) -> Any:
    """`uji.api.<name>.url/headers/body(self, request)`: the part as the built-in wire
    makes it, with the object's other overrides (its message shapes) still applied."""
    if info is None:
        raise ApiError(f"uji.api {part}: self is not an api object")
    request = request_from(data, info)
    base = wires.get(info["wire"])
    if not isinstance(base, SSEWire):
        raise ApiError(f"uji.api {part}: the wire {info['wire']} was replaced by one without parts")
    if part == "url":
        return base.url(request, request.provider["base_url"])
    if part == "headers":
        return host.lua.convert.to_lua(base.headers(request))
    overrides = frozenset(info["overrides"]) & BODY_HOOKS
    if info["wire"] == "openai-chat":
        body: Mapping[str, object] = chat_body(request, Hooks(host, obj, overrides) if overrides else None)
    else:
        body = base.body(request)
    return host.lua.convert.to_lua(dict(body))


def default_item(role: Role, info: ApiInfo | None, data: Any) -> dict[str, object]:
    """`uji.api.openai.user/assistant/tool(self, item)`: the message as the wire shapes it."""
    from uji.wires import openai_chat

    if not isinstance(data, dict):
        raise ApiError(f"uji.api.openai:{role} expects a message table")
    options = info["options"] if info is not None else {}
    item = cast("Any", {**data, "type": role})
    if role == "user":
        return openai_chat.user_message(item, list(item.get("images") or []), "")
    if role == "assistant":
        return openai_chat.assistant_message(item)
    return openai_chat.tool_message(item, "", options.get("tool_result_name") is True)


async def stream_once(
    host: LuaHost, wires: Wires, info: ApiInfo | None, obj: Any, data: Any, reply: Any
) -> Any:
    """`api:stream(request, reply)` called from Lua: the object's wire streams one call
    into the Lua `reply` table ({text, reasoning, done, fail}, each optional). Returns
    the answer table; a failure raises (Lua gets nil, the message)."""
    from uji.lua.wire import answer_table

    if info is None:
        raise ApiError("uji.api stream: self is not an api object")
    request = request_from(data, info)
    base = wires.get(info["wire"])
    overrides = frozenset(info["overrides"])
    wire = hooked(base, Hooks(host, obj, overrides)) if overrides and isinstance(base, SSEWire) else base
    rt = host.lua
    outcome: list[Answer | Failure] = []

    def tell(name: str, value: Any) -> None:
        fn = reply[name] if rt.type(reply) == "table" else None
        if fn is None:
            return
        try:
            rt.call_sync(fn, value)
        except LuaError as e:
            host.notice(f"api stream: reply.{name} failed: {e}")

    class LuaReply:
        def text(self, delta: str) -> None:
            tell("text", delta)

        def reasoning(self, delta: str) -> None:
            tell("reasoning", delta)

        def touch(self) -> None:
            pass

        def done(self, answer: Answer) -> None:
            outcome.append(answer)
            tell("done", rt.convert.to_lua(answer_table(answer), json_null=False))

        def fail(self, failure: Failure) -> None:
            outcome.append(failure)
            table = {"kind": failure.kind, "message": failure.message, "status": failure.status}
            tell("fail", rt.convert.to_lua(table, json_null=False))

    await wire.stream(request, LuaReply())
    if not outcome:
        raise ApiError("the stream ended without an answer")
    last = outcome[0]
    if isinstance(last, Failure):
        raise ApiError(last.message)
    return rt.convert.to_lua(answer_table(last), json_null=False)
