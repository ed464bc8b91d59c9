"""A wire written in Lua with `uji.wire.add(name, {stream = function(request, reply) ... end})`.

`stream` gets the request table of reference docs §3 and a `reply` table with
`text(delta)`, `reasoning(delta)`, `done(answer)` and `fail(failure)`. It may return a
cancel function; an interrupt calls it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import LuaError
from uji.wires.base import Answer, Failure, FailureKind, Reply, ToolCall, Usage, WireRequest

if TYPE_CHECKING:
    from uji.lua.host import LuaHost

FAILURE_KINDS: dict[Any, FailureKind] = {"http": "http", "auth": "auth", "provider": "provider"}


def _answer(value: Any) -> Answer:
    if isinstance(value, str):
        return Answer(text=value)
    if not isinstance(value, dict):
        raise Failure("provider", "reply.done expects a table {text=, tool_calls=, usage=}")
    calls = []
    for i, c in enumerate(value.get("tool_calls") or []):
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            raise Failure("provider", f"reply.done: tool call {i + 1} needs a name")
        args = c.get("arguments", "{}")
        if not isinstance(args, str):
            import json

            args = json.dumps(args if args != [] else {})
        calls.append(ToolCall(str(c.get("id") or ""), c["name"], args, c.get("signature")))
    usage = value.get("usage") or {}
    return Answer(
        text=value.get("text") or "",
        reasoning=value.get("reasoning") or "",
        tool_calls=calls,
        usage=Usage(
            input=int(usage.get("input") or 0),
            output=int(usage.get("output") or 0),
            cache_read=int(usage.get("cache_read") or 0),
            cache_write=int(usage.get("cache_write") or 0),
        ),
        replay=value.get("replay"),
    )


def _failure(value: Any) -> Failure:
    if isinstance(value, str):
        return Failure("provider", value)
    if not isinstance(value, dict):
        return Failure("provider", "the wire failed")
    kind = FAILURE_KINDS.get(value.get("kind"), "provider")
    status = value.get("status")
    retry_after = value.get("retry_after")
    message = value.get("message") or (f"http: {status}" if status else kind)
    return Failure(
        kind,
        str(message),
        status if isinstance(status, int) else None,
        float(retry_after) if isinstance(retry_after, (int, float)) else None,
    )


def answer_table(answer: Answer) -> dict[str, Any]:
    """An answer as Lua's `reply.done` takes it (the shape `_answer` reads back)."""
    table: dict[str, Any] = {
        "text": answer.text,
        "tool_calls": [c.as_dict() for c in answer.tool_calls],
        "usage": answer.usage.as_dict(),
    }
    if answer.reasoning:
        table["reasoning"] = answer.reasoning
    if answer.replay is not None:
        table["replay"] = answer.replay
    return table


class LuaWire:
    def __init__(self, host: LuaHost, name: str, stream_fn: Any) -> None:
        self._host = host
        self.name = name
        self._stream = stream_fn

    async def stream(self, request: WireRequest, reply: Reply) -> None:
        rt = self._host.lua
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def text(delta: Any) -> None:
            if not finished.done() and delta:
                reply.text(str(delta))

        def reasoning(delta: Any) -> None:
            if not finished.done() and delta:
                reply.reasoning(str(delta))

        def done(value: Any) -> None:
            if finished.done():
                return
            try:
                reply.done(_answer(rt.convert.to_python(value)))
            except Failure as f:
                reply.fail(f)
            finished.set_result(None)

        def fail(value: Any) -> None:
            if finished.done():
                return
            reply.fail(_failure(rt.convert.to_python(value)))
            finished.set_result(None)

        lua_reply = rt.make_reply(text, reasoning, done, fail)
        lua_request = rt.convert.to_lua(request.as_dict(), json_null=False)
        try:
            values = await rt.call(self._stream, lua_request, lua_reply)
        except LuaError as e:
            fail({"kind": "provider", "message": f"wire {self.name}: {e}"})
            return
        cancel = values[0] if values and rt.type(values[0]) == "function" else None
        try:
            await finished
        except asyncio.CancelledError:
            if cancel is not None:
                try:
                    rt.call_sync(cancel)
                except LuaError as e:
                    self._host.notice(f"wire {self.name}: its cancel function failed: {e}")
            raise
