"""What `uji.context` configures: the providers of system-prompt text or hidden turn
context, the instruction files, prompt caching and compaction; and what each part of
the prompt costs (`uji.context.list`, `/context`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from uji.agent.context_fill import tokens
from uji.agent.instructions import Instructions
from uji.record import Record, Struct

if TYPE_CHECKING:
    from typing import TypedDict

    from uji.wires.base import Cache

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class CompactionSettings(TypedDict):
        """`uji.context.configure{compaction=...}`: whether to compact, the tokens kept free
        for the answer and those kept unfolded (None: the model's own figures)."""

        enabled: bool
        reserve: int | None
        keep_recent: int | None


# Where a context provider's text went: the system prompt, or a hidden message of the turn.
Placement = Literal["system", "turn"]

# Calls a handler the config gave (a Lua or Python function) and returns its first result.
CallFunction = Callable[..., Awaitable[Any]]


class ContextProvider(Struct):
    name: str
    fn: Any
    priority: float
    seq: int
    tokens: int = 0  # what it gave at its last call
    at: Placement | None = None  # where that went


# The parts of a request: the system prompt's (base, instruction files, context providers,
# other text such as --append-prompt), the tools, and the conversation's (agent/window.py).
PartKind = Literal["base", "tools", "instructions", "context", "other", "summary", "conversation", "images"]


class Part(Record):
    """One part of what the model is sent."""

    name: str
    kind: PartKind
    tokens: int
    path: str | None = None  # an instruction file's
    at: Placement | None = None  # a context provider's
    count: int | None = None  # how many: tools, messages, images, messages a summary folded


class PromptContext:
    def __init__(self, call: CallFunction, config_dir: str | None = None) -> None:
        self._call = call
        self._providers: dict[str, ContextProvider] = {}
        self._seq = 0
        # AGENTS.md and friends; the user's own lives in the config directory.
        self.instructions = Instructions(config_dir)
        self.cache: Cache = "short"  # prompt caching: off | short (5 min) | long (1 h)
        self.compaction: CompactionSettings = {"enabled": True, "reserve": None, "keep_recent": None}

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
        value = await self._call(provider.fn)
        if isinstance(value, str):
            provider.tokens, provider.at = tokens(value), "system"
        elif isinstance(value, dict) and value.get("at") == "turn" and isinstance(value.get("text"), str):
            provider.tokens, provider.at = tokens(value["text"]), "turn"
        else:
            provider.tokens, provider.at = 0, None
        return value

    def parts(self, cwd: str, tools: list[Any], notice: Callable[[str], None] | None = None) -> list[Part]:
        """Every part of the prompt and its size in tokens (characters / 4): the base
        prompt, the tools' schemas as sent, each instruction file as it reads now, and
        each context provider (in the order added) with what it gave at the last turn."""
        import json

        from uji.agent import instructions
        from uji.agent.prompt import system_prompt

        parts = [
            Part("base prompt", "base", tokens(system_prompt(cwd))),
            Part("tools", "tools", tokens(json.dumps(tools)), count=len(tools)),
        ]
        files = self.instructions.load(cwd, notice)
        for i, file in enumerate(files):
            text = instructions.block(file) if i else instructions.section([file])
            parts.append(Part(file.label, "instructions", tokens(text), path=file.path))
        for p in sorted(self._providers.values(), key=lambda p: p.seq):
            parts.append(Part(p.name, "context", p.tokens, at=p.at))
        return parts
