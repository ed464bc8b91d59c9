"""uji.context: add/remove/list providers of system-prompt text or hidden turn context,
and configure{cache, compaction}."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.lua.runtime import ApiError

if TYPE_CHECKING:
    from uji.agent.contexts import PromptContext
    from uji.lua.host import LuaHost

CACHE_MODES = ("off", "short", "long")
COMPACTION_KEYS = ("enabled", "reserve", "keep_recent")


def install(host: LuaHost, context: PromptContext) -> dict[str, Any]:
    def context_add(name: str, fn: Any, priority: float) -> None:
        context.add(name, fn, priority)

    def context_remove(name: str) -> bool:
        return context.remove(name)

    def context_list() -> Any:
        return host.lua.convert.to_lua([p.name for p in sorted(context.providers(), key=lambda p: p.seq)])

    def context_configure(opts: Any) -> None:
        data = host.lua.convert.to_python(opts)
        unknown = set(data) - {"cache", "compaction"}
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
            context.compaction.update(compaction)

    return {
        "context_add": context_add,
        "context_remove": context_remove,
        "context_list": context_list,
        "context_configure": context_configure,
    }
