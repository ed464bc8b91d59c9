"""Every notification and hook `uji.on` knows, declared once.

Each entry names the event, the record its payload is read from (`uji.events.stream`),
the payload's fields (their types come from that record), how the handlers' results
fold, and one line of documentation. `Events.publish` and `Events.hook` build the Lua
payloads from it, and `uji.devtools.gen_docs` generates the reference in `docs/` and the
LuaLS definitions from it.

`uji.on` also takes any other name: a custom event that plugins fire with `uji.emit`.

To add a notification: a `Record` (`uji.record`: a frozen dataclass without its cost) in `uji.events.stream` (in `AgentEvent` if the
agent emits it), emitted once where it happens (`Agent._emit`, or `Events.publish`
outside the agent); a `Spec` here naming the fields Lua sees; mypy then asks the screen
(`UjiApp.agent_event`) and `uji run --json` (`uji.events.jsonl`) what they do with it.
Run `python -m uji.devtools.gen_docs`. A hook is the same with a payload record, a
fold other than "notify", and a call of `Events.hook` where it decides something.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

from uji.events import stream as s
from uji.record import Record, Struct, record_fields

Fold = Literal["notify", "first", "chain", "strict"]

FOLDS: dict[Fold, str] = {
    "notify": "every handler runs; return values are ignored",
    "first": "the first handler to return something other than nil wins",
    "chain": "chained: each handler sees the previous result; a string replaces it, nil keeps it",
    "strict": "the first handler to return something other than nil wins; one that raises denies the call",
}


class Field(Record):
    name: str
    doc: str = ""


class Spec(Record):
    name: str
    source: type  # the record the payload's fields are read from
    fields: tuple[Field, ...]
    fold: Fold
    doc: str
    returns: str | None = None  # hooks: what a handler may return (a LuaLS type)
    chained: str | None = None  # chain: the field that carries the previous result

    @property
    def hook(self) -> bool:
        return self.fold != "notify"

    def payload(self, obj: object) -> dict[str, Any]:
        """The Lua payload of `obj`, an instance of `source` (without `event`, which the
        dispatcher adds)."""
        return {f.name: getattr(obj, f.name) for f in self.fields}

    def lua_type(self, name: str) -> str:
        """The LuaLS type of one payload field, from the Python type of `source`'s attribute."""
        return lua_type(python_type(self.source, name))


def _f(*names: str | tuple[str, str]) -> tuple[Field, ...]:
    return tuple(Field(n) if isinstance(n, str) else Field(*n) for n in names)


NOTIFICATIONS: tuple[Spec, ...] = (
    Spec("session_created", s.SessionCreated, _f("session_id"), "notify", "A new session was opened."),
    Spec("session_resumed", s.SessionResumed, _f("session_id"), "notify", "An earlier session was opened."),
    Spec("session_titled", s.SessionTitled, _f("title"), "notify", "The session got a title."),
    Spec(
        "session_compacted",
        s.SessionCompacted,
        _f(("count", "how many messages were folded")),
        "notify",
        "Older messages were folded into a summary.",
    ),
    Spec(
        "message_submitted",
        s.MessageSubmitted,
        _f("text"),
        "notify",
        "A user message starts a turn or is steered into one.",
    ),
    Spec(
        "message_appended",
        s.MessageSaved,
        _f(
            "type",
            ("text", "the text, or a tool message's content"),
        ),
        "notify",
        "A message was saved to the session.",
    ),
    Spec(
        "queue_changed",
        s.QueueChanged,
        _f(("count", "messages waiting")),
        "notify",
        "A message typed during a turn was queued, or a queued one was sent.",
    ),
    Spec("shell_started", s.ShellStarted, _f("command"), "notify", "A `!` command started."),
    Spec(
        "shell_finished",
        s.ShellFinished,
        _f("command", ("code", "its exit code; 130 if interrupted")),
        "notify",
        "A `!` command ended.",
    ),
    Spec("tool_started", s.ToolStarted, _f("name"), "notify", "An allowed tool call starts to run."),
    Spec("turn_finished", s.TurnFinished, (), "notify", "A turn ended: answered, failed or interrupted."),
    Spec("model_changed", s.ModelChanged, _f("provider", "model"), "notify", "Another model was chosen."),
    Spec(
        "status_changed",
        s.StatusChanged,
        _f("state"),
        "notify",
        "The agent started or stopped working (plugins emit it too, as a redraw trigger).",
    ),
    Spec(
        "budget_reached",
        s.BudgetReached,
        _f(
            ("limit", "the budget reached"),
            ("value", "the budget for this turn"),
            ("used", "steps, dollars, tokens or minutes used in this turn"),
            ("text", "one line saying so"),
        ),
        "notify",
        "A turn reached a budget (`uji.session.configure`); the user is asked whether it goes on "
        "(`uji run` stops).",
    ),
    Spec("before_quit", s.BeforeQuit, (), "notify", "uji is about to quit (handlers get 5 seconds)."),
)

HOOKS: tuple[Spec, ...] = (
    Spec(
        "before_turn",
        s.BeforeTurn,
        _f(("text", "the user's message"), ("system", "the system prompt so far")),
        "chain",
        "Before a turn's first model call: return a string to replace the system prompt.",
        returns="string?",
        chained="system",
    ),
    Spec(
        "before_tool",
        s.BeforeTool,
        _f("name", ("arguments", "the call's arguments")),
        "strict",
        "Before a tool call is decided: a decision here skips the policy "
        "({allow=true}, {deny=reason}, {ask=true} or {ask=title}).",
        returns="uji.ToolDecision?",
    ),
    Spec(
        "after_tool",
        s.AfterTool,
        _f("name", ("content", "the result text, secrets cut out")),
        "chain",
        "After a tool ran: return a string to replace the result the model sees.",
        returns="string?",
        chained="content",
    ),
    Spec(
        "before_stop",
        s.BeforeStop,
        _f(("text", "the answer"), ("continued", "how many times the turn was continued so far")),
        "first",
        "The model answered without tool calls and nothing is queued: "
        "return a string to send it as a hidden message and go on.",
        returns="string?",
    ),
)

CATALOG: tuple[Spec, ...] = NOTIFICATIONS + HOOKS
BY_NAME: Mapping[str, Spec] = {spec.name: spec for spec in CATALOG}
BY_SOURCE: Mapping[type, Spec] = {spec.source: spec for spec in CATALOG}


def python_type(cls: type, name: str) -> Any:
    """The annotated type of a record's field or a property of `cls`."""
    names = record_fields(cls) if issubclass(cls, (Record, Struct)) else ()
    if name in names:
        return typing.get_type_hints(cls)[name]
    prop = getattr(cls, name, None)
    if isinstance(prop, property) and prop.fget is not None:
        return typing.get_type_hints(prop.fget)["return"]
    raise LookupError(f"{cls.__name__} has no field or property {name!r}")


def lua_type(t: Any) -> str:
    """A LuaLS type for a Python annotation."""
    origin = typing.get_origin(t)
    if t is str:
        return "string"
    if t is bool:
        return "boolean"
    if t is int:
        return "integer"
    if t is float:
        return "number"
    if t is Any:
        return "any"
    if origin is Literal:
        return "|".join(f'"{v}"' if isinstance(v, str) else str(v).lower() for v in typing.get_args(t))
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(t) if a is not type(None)]
        inner = "|".join(lua_type(a) for a in args)
        return f"({inner})?" if len(args) > 1 else f"{inner}?"
    if origin in (dict, Mapping) or t in (dict, Mapping):
        key, value = typing.get_args(t) or (str, Any)
        return f"table<{lua_type(key)}, {lua_type(value)}>"
    raise TypeError(f"no Lua type for {t!r}")
