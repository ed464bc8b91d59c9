"""What a session's turns use: each a service of its own, made and wired by `uji.app`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from uji.agent.limits import Limits
from uji.record import Record, field

if TYPE_CHECKING:
    from uji.agent.checkpointing import TurnCheckpoints
    from uji.agent.contexts import PromptContext
    from uji.agent.mentioned import Mentioned
    from uji.events import Events
    from uji.providers.selection import ModelSelection
    from uji.store.sessions import Store
    from uji.tools.gate import Gate
    from uji.wires.registry import Wires


class TurnServices(Record):
    store: Store  # the session's messages, saved as they come
    gate: Gate  # the tools, the policy, confinement: what a call may do
    models: ModelSelection  # the model a request goes to
    wires: Wires  # the wire that speaks to its provider
    hooks: Events  # notifications, and the hooks that steer a turn
    context: PromptContext  # context providers, caching and compaction settings
    notice: Callable[[str], None]  # a line for the user (a retry, a failed hook)
    # Waits (briefly) for tools still arriving, such as MCP servers still connecting.
    tools_ready: Callable[[], Awaitable[None]] | None = None
    # How this frontend's user picks a model (the end of the no-model error).
    choose_model: str = "pass uji run --model PROVIDER/MODEL"
    limits: Limits = field(default_factory=Limits)  # the budgets of a turn
    # At a budget: asks the user (title, the label of going on) whether the turn goes on;
    # None, or an answer of False, stops it.
    ask_continue: Callable[[str, str], Awaitable[bool]] | None = None
    # The MCP resources a message mentions (`@server:uri`), read; raises MentionFailed.
    resources: Callable[[str], Awaitable[list[Mentioned]]] | None = None
    # Checkpoints of the files before each turn, for /rewind (None: none taken).
    checkpoints: TurnCheckpoints | None = None

    @property
    def cwd(self) -> str:
        return self.gate.cwd
