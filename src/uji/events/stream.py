"""The events of a session, one frozen record (`uji.record.Record`) each.

The agent emits each event once, into one sink. Adapters derive what each frontend sees
from the same object: the JSON lines of `uji run --json` (`uji.events.jsonl`), the
screen (`uji.tui.app.UjiApp.agent_event`) and the Lua notifications (`Events.publish`,
whose payloads the catalog in `uji.events.catalog` declares).

Hook payloads are records too (`BeforeTurn`, `BeforeTool`, `AfterTool`,
`BeforeStop`); `Events.hook` runs them and folds the handlers' results as the catalog
says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from uji.record import Record
from uji.store.rows import RowType
from uji.tools.base import TaskRow
from uji.tools.verdict import Basis, DecidedBy, Decision, Resolved
from uji.wires.base import Usage

if TYPE_CHECKING:
    from uji.store.rows import Row

DeltaKind = Literal["text", "reasoning"]
State = Literal["working", "idle"]


# What the agent emits during a turn ---------------------------------------------------


class Delta(Record):
    """A piece of the answer (or of its reasoning) as it streams: what one network read
    brought of it, however many deltas the model sent in it."""

    kind: DeltaKind
    text: str


class StreamCleared(Record):
    """A model call failed and is retried: what streamed so far is void."""


class MessageSaved(Record):
    """A message was saved to the session; `message` is its saved form (with `seq`)."""

    message: Row

    @property
    def type(self) -> RowType:
        """The message's type."""
        return self.message["type"]

    @property
    def text(self) -> str:
        """The message's text (a tool message's content)."""
        value = self.message.get("text") or self.message.get("content") or ""
        return value if isinstance(value, str) else ""


class MessageSubmitted(Record):
    """A user message starts a turn or is steered into one."""

    text: str


class QueueChanged(Record):
    """Messages typed during a turn: how many wait."""

    count: int


class StatusChanged(Record):
    """The agent started or stopped working."""

    state: State


class TurnFinished(Record):
    """A turn ended: answered, failed or interrupted."""


class SessionTitled(Record):
    """The session got a title."""

    title: str


class SessionCompacted(Record):
    """Older messages were folded into a summary."""

    count: int


class CallSubject(Record):
    """A tool call's subject is known; it is being decided (maybe asked about)."""

    id: str
    name: str
    subject: str
    verb: str | None


class HookRef(Record):
    """The `before_tool` handler that decided a call."""

    name: str
    origin: str | None


class Outcome(Record):
    """What decided a tool call and how (the policy's verdict, a hook, the user)."""

    decision: Resolved
    by: DecidedBy
    rule: str | None = None  # the rule text that decided it
    source: str | None = None  # the file and line the rule or default was set from
    part: str | None = None  # the part of a command line that decided it, in normal form
    unfixed: str | None = None  # why that part is not a fixed command
    remembered: bool = False  # a remembered approval decided it
    form: str | None = None  # the form of a file path a rule matched, when not as written
    policy: Decision | None = None  # the policy's verdict, when the policy layer decided
    # What in the policy made that verdict: a rule, a default, a part that is not fixed
    # text, a write flag, a redirection writing outside, a remembered answer, the mode.
    basis: Basis | None = None
    reason: str | None = None  # the text after "denied: "
    hook: HookRef | None = None
    question: str | None = None  # the title of the question the user was asked
    body: str | None = None  # and its body, when answered
    preview: str | None = None  # and what it showed of the change (the diff of an edit)
    asked_by: Literal["hook"] | None = None  # a before_tool hook asked for the question
    remember: str | None = None  # the scope of an approval the user asked to remember


class CallDecided(Record):
    """A tool call was decided (allowed or denied)."""

    id: str
    name: str
    subject: str
    verb: str
    outcome: Outcome


class ToolStarted(Record):
    """An allowed call's tool starts to run."""

    id: str
    name: str
    subject: str


class Progress(Record):
    """A running tool's live line (`ctx.progress`)."""

    tool: str
    id: str
    line: str


class Tasks(Record):
    """A running tool's tasks, all of them, each time one changes."""

    tool: str
    id: str
    tasks: tuple[TaskRow, ...]


# A turn's budgets (`uji.session.configure`; uji.agent.limits keeps them).
LimitName = Literal["max_steps", "max_cost", "max_tokens", "max_minutes"]


class BudgetReached(Record):
    """A turn reached one of its budgets (`uji.session.configure`); it goes on only if
    the user says so."""

    limit: LimitName
    value: float  # the budget for this turn
    used: float  # steps, dollars, tokens or minutes used in this turn
    text: str  # one line saying so


AgentEvent = (
    Delta
    | StreamCleared
    | MessageSaved
    | MessageSubmitted
    | QueueChanged
    | StatusChanged
    | TurnFinished
    | SessionTitled
    | SessionCompacted
    | CallSubject
    | CallDecided
    | ToolStarted
    | Progress
    | Tasks
    | BudgetReached
)
Sink = Callable[[AgentEvent], None]


def discard(event: AgentEvent) -> None:
    """A sink that drops everything (side requests: titles, summaries)."""


# What happens around the agent -----------------------------------------------------------


class SessionCreated(Record):
    session_id: str


class SessionResumed(Record):
    session_id: str


class ModelChanged(Record):
    provider: str
    model: str


class ShellStarted(Record):
    command: str


class ShellFinished(Record):
    command: str
    code: int


class BeforeQuit(Record):
    pass


class Notice(Record):
    """A notice for the user (`uji.notify`, a failed handler, a retry)."""

    text: str


class SessionOpened(Record):
    """`uji run`: the session the run is saved in."""

    id: str
    worktree: str | None = None  # the worktree uji made that the run works in (--worktree)
    branch: str | None = None  # that worktree's branch


class Done(Record):
    """`uji run`: the turn ended with an answer or an error."""

    text: str | None
    error: str | None
    usage: Usage
    cost: float | None = None  # dollars, when the model's prices are known
    budget: str | None = None  # the budget that stopped the turn


Event = (
    AgentEvent
    | SessionCreated
    | SessionResumed
    | ModelChanged
    | ShellStarted
    | ShellFinished
    | BeforeQuit
    | Notice
    | SessionOpened
    | Done
)


# Hook payloads ------------------------------------------------------------------------------


class BeforeTurn(Record):
    text: str
    system: str


class BeforeTool(Record):
    name: str
    arguments: Mapping[str, Any]


class AfterTool(Record):
    name: str
    content: str


class BeforeStop(Record):
    text: str
    continued: int


HookPayload = BeforeTurn | BeforeTool | AfterTool | BeforeStop
