"""What `uji.context` configures: the providers of system-prompt text or hidden turn
context, prompt caching and compaction."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.wires.base import Cache

# Calls a handler the config gave (a Lua or Python function) and returns its first result.
CallFunction = Callable[..., Awaitable[Any]]


@dataclass
class ContextProvider:
    name: str
    fn: Any
    priority: float
    seq: int


class PromptContext:
    def __init__(self, call: CallFunction) -> None:
        self._call = call
        self._providers: dict[str, ContextProvider] = {}
        self._seq = 0
        self.cache: Cache = "short"  # prompt caching: off | short (5 min) | long (1 h)
        self.compaction: dict[str, Any] = {"enabled": True, "reserve": None, "keep_recent": None}

    def add(self, name: str, fn: Any, priority: float = 50) -> None:
        """Add a provider, or replace the one of that name (it keeps its place among equals)."""
        old = self._providers.get(name)
        if old is None:
            self._seq += 1
        self._providers[name] = ContextProvider(name, fn, priority, old.seq if old else self._seq)

    def remove(self, name: str) -> bool:
        return self._providers.pop(name, None) is not None

    def providers(self) -> list[ContextProvider]:
        """In the order they run: by priority, then in the order they were added."""
        return sorted(self._providers.values(), key=lambda p: (p.priority, p.seq))

    async def call(self, provider: ContextProvider) -> Any:
        return await self._call(provider.fn)
