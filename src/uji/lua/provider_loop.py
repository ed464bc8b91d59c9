"""A provider's `loop` class from Lua (`uji.provider.add{ loop = Class }`): uji makes
`Class(agent, turn)` and runs its `run` method as a task; an interrupt cancels it, then
calls its `interrupt` method, if it has one (agent/own_loop.py runs the turn)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import LuaError, Pending

if TYPE_CHECKING:
    from uji.agent.own_loop import LoopAgent, LoopTurn
    from uji.lua.host import LuaHost


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

        def tool_result(call: Any, content: Any, images: Any) -> None:
            shown = convert.to_python(content)
            found = convert.to_python(images) if images is not None else None
            agent.tool_result(data(call), shown, found if isinstance(found, list) else None)

        def steer() -> Any:
            row = agent.steer()
            return None if row is None else convert.to_lua(dict(row), json_null=False)

        functions = {
            "delta": lambda kind, text: agent.delta(str(kind), "" if text is None else str(text)),
            "assistant_step": lambda message: agent.assistant_step(data(message)),
            "tool_running": lambda call: agent.tool_running(data(call)),
            "approve": lambda name, args, subject: Pending(approve(name, args, subject)),
            "after_tool": lambda name, content: Pending(after_tool(name, content)),
            "tool_result": tool_result,
            "usage": lambda spent: agent.usage(data(spent)),
            "done": lambda message: agent.done(data(message)),
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
