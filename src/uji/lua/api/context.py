"""uji.context: add/remove providers of system-prompt text or hidden turn context,
list every part of the prompt with its size, and configure{cache, compaction,
instructions}."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError

if TYPE_CHECKING:
    from collections.abc import Callable

    from uji.agent.contexts import PromptContext
    from uji.agent.loop import Agent
    from uji.lua.host import LuaHost
    from uji.tools.gate import Gate

CACHE_MODES = ("off", "short", "long")
COMPACTION_KEYS = ("enabled", "reserve", "keep_recent")


def instruction_names(value: Any) -> tuple[str, ...] | None:
    """`instructions = {"AGENTS.md", ...}` (file names, first found per directory wins),
    `false` (off) or `true` (the default names)."""
    from uji.agent.instructions import DEFAULT_NAMES

    if value is False:
        return None
    if value is True:
        return DEFAULT_NAMES
    if value == {}:
        return None  # an empty table: no names, nothing to look for
    where = "uji.context.configure: instructions"
    if not isinstance(value, list):
        raise ApiError(f"{where} must be a list of file names, or false, got {type(value).__name__}")
    for name in value:
        if not isinstance(name, str) or not name or name in (".", "..") or "/" in name or "\\" in name:
            raise ApiError(f"{where} must be plain file names such as AGENTS.md, got {name!r}")
    return tuple(value) or None


def install(
    host: LuaHost, context: PromptContext, gate: Gate, agent: Callable[[], Agent | None] | None = None
) -> Api:
    def context_add(name: str, fn: Any, priority: float) -> None:
        context.add(name, fn, priority)

    def context_remove(name: str) -> bool:
        return context.remove(name)

    def context_names() -> Any:
        return host.lua.convert.to_lua([p.name for p in context.providers()])

    def context_list() -> Any:
        """Every part of the next request: the session's (its conversation, calibrated on
        the provider's count) when one is open, else the prompt's parts."""
        from uji.agent.window import window

        opened = agent() if agent is not None else None
        if opened is not None:
            shown = opened.meter.window()  # problems are told at the next turn
        else:
            tools = [t.schema() for t in gate.offered()]
            shown = window(context.parts(gate.cwd, tools), None, None)
        rows = [{k: v for k, v in vars(part).items() if v is not None} for part in shown.parts]
        return host.lua.convert.to_lua(rows)

    def context_configure(opts: Any) -> None:
        data = host.lua.convert.to_python(opts)
        unknown = set(data) - {"cache", "compaction", "instructions"}
        if unknown:
            raise ApiError(f"uji.context.configure: unknown key(s) {', '.join(sorted(unknown))}")
        if "cache" in data:
            if data["cache"] not in CACHE_MODES:
                raise ApiError(
                    f"uji.context.configure: cache must be off, short or long, got {data['cache']!r}"
                )
            context.cache = data["cache"]
        if "compaction" in data:
            compaction = data["compaction"]
            if not isinstance(compaction, dict):
                raise ApiError("uji.context.configure: compaction must be a table")
            bad = set(compaction) - set(COMPACTION_KEYS)
            if bad:
                raise ApiError(f"uji.context.configure: unknown compaction key(s) {', '.join(sorted(bad))}")
            if "enabled" in compaction and not isinstance(compaction["enabled"], bool):
                raise ApiError("uji.context.configure: compaction.enabled must be true or false")
            for key in ("reserve", "keep_recent"):
                value = compaction.get(key)
                if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                    raise ApiError(
                        f"uji.context.configure: compaction.{key} must be a whole number of tokens"
                    )
            settings = context.compaction
            if "enabled" in compaction:
                settings["enabled"] = compaction["enabled"]
            if "reserve" in compaction:
                settings["reserve"] = compaction["reserve"]
            if "keep_recent" in compaction:
                settings["keep_recent"] = compaction["keep_recent"]
        if "instructions" in data:
            context.instructions.names = instruction_names(data["instructions"])

    return {
        "context_names": context_names,
        "context_add": context_add,
        "context_remove": context_remove,
        "context_list": context_list,
        "context_configure": context_configure,
    }
