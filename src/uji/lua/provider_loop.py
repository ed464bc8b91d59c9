"""A provider's `loop` class from Lua (`uji.provider.add{ loop = Class }`): uji makes
`Class(agent, turn)` and runs its `run` method as a task; an interrupt cancels it, then
calls its `interrupt` method, if it has one (agent/own_loop.py runs the turn)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import LuaError, Pending
from uji.wires.base import Usage

if TYPE_CHECKING:
    from uji.agent.own_loop import LoopAgent, LoopTurn
    from uji.lua.host import LuaHost
    from uji.store.rows import AssistantRow
    from uji.wires.base import ToolCallItem


class LuaLoop:
    def __init__(self, host: LuaHost, cls: Any, make_agent: Any) -> None:
        self.host = host
        self.cls = cls
        self.make_agent = make_agent  # Lua: (functions) -> the agent table (api/lazy/providers.lua)
        self._running: Any = None  # the loop object of the turn in progress

    async def run(self, agent: LoopAgent, turn: LoopTurn) -> None:
        rt = self.host.lua
        convert = rt.convert

        def data(value: Any) -> Any:
            found = convert.to_python(value)
            return found if isinstance(found, dict) else {}

        async def approve(name: str, args: Any, subject: Any) -> Any:
            found = await agent.approve(str(name), data(args), None if subject is None else str(subject))
            return convert.to_lua(found)

        async def after_tool(name: str, content: Any) -> Any:
            return await agent.after_tool(str(name), "" if content is None else str(content))

        def tool_running(call: Any) -> None:
            found = data(call)
            agent.tool_running(text_of(found.get("id")), text_of(found.get("name")))

        def tool_result(call: Any, content: Any, images: Any) -> None:
            found, shown = data(call), convert.to_python(content)
            pictures = convert.to_python(images) if images is not None else None
            agent.tool_result(
                text_of(found.get("id")),
                text_of(found.get("name")),
                shown if isinstance(shown, str) else str(shown),
                pictures if isinstance(pictures, list) else None,
            )

        def steer() -> Any:
            row = agent.steer()
            return None if row is None else convert.to_lua(dict(row), json_null=False)

        functions = {
            "delta": lambda kind, text: agent.delta(str(kind), "" if text is None else str(text)),
            "assistant_step": lambda message: agent.assistant_step(assistant_row(data(message))),
            "tool_running": tool_running,
            "approve": lambda name, args, subject: Pending(approve(name, args, subject)),
            "after_tool": lambda name, content: Pending(after_tool(name, content)),
            "tool_result": tool_result,
            "usage": lambda spent: agent.usage(usage_of(data(spent))),
            "done": lambda message: agent.done(assistant_row(data(message))),
            "failed": lambda text: agent.failed("" if text is None else str(text)),
            "queued": agent.queued,
            "steer": steer,
        }
        lua_agent = self.make_agent(rt.lua.table_from(functions))
        made = await rt.call(self.cls, lua_agent, convert.to_lua(dict(turn), json_null=False))
        loop: Any = made[0] if made else None
        if rt.type(loop) != "table" or rt.type(loop.run) != "function":
            raise LuaError("the loop class made no object with a run method")
        self._running = loop  # kept through a cancel: `interrupt` is told next
        await rt.call(loop.run, loop)
        self._running = None

    def interrupt(self) -> None:
        loop, self._running = self._running, None
        if loop is None or self.host.lua.type(loop.interrupt) != "function":
            return
        self.host.lua.call_sync(loop.interrupt, loop)


# What a loop's Lua tables say, in uji's own types (the Lua side is untyped).


def text_of(value: Any) -> str:
    return str(value or "")


def usage_of(spent: dict[str, Any]) -> Usage:
    def count(key: str) -> int:
        value = spent.get(key)
        return int(value) if isinstance(value, (int, float)) and value >= 0 else 0

    return Usage(count("input"), count("output"), count("cache_read"), count("cache_write"))


def assistant_row(message: dict[str, Any]) -> AssistantRow:
    """An assistant message from the loop, in the stored shape: its calls with ids."""
    row: AssistantRow = {"type": "assistant", "text": text_of(message.get("text"))}
    calls: list[ToolCallItem] = []
    for c in message.get("tool_calls") or []:
        if not isinstance(c, dict) or not c.get("name"):
            continue
        arguments = c.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if isinstance(arguments, dict) else {})
        call_id = text_of(c.get("id")).strip() or "call_" + os.urandom(8).hex()
        item: ToolCallItem = {"id": call_id, "name": str(c["name"]), "arguments": arguments}
        if isinstance(c.get("signature"), str):
            item["signature"] = c["signature"]
        calls.append(item)
    if calls:
        row["tool_calls"] = calls
    if isinstance(message.get("reasoning"), str) and message["reasoning"]:
        row["reasoning"] = message["reasoning"]
    if message.get("replay") is not None:
        row["replay"] = message["replay"]
    return row
