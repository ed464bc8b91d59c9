"""The gate's modes (Shift+Tab in the terminal UI): named policy layers over the rules
as written.

A mode is a policy in `uji.tool.policy`'s form (tool → allow/ask/deny lists and a
default, and a top-level `default`) laid over the user's rules for as long as the mode
is on. It can turn an ask into an allow and anything into a deny; a deny of the rules
as written stays a deny. A tool the mode names nothing for is decided by the rules as
written alone.

Built in, in the order Shift+Tab goes through them:
- `ask`: no layer, the rules as written;
- `accept_edits`: calls of the file tools (edit_file, write_file, read_file) on a path
  inside the working directory or the roots are allowed;
- `plan`: read-only, edit_file and write_file are denied (the plan-mode plugin, once
  set up, replaces it with its own, which also keeps commands to a read-only list).

`uji.mode.add(name, policy, opts)` adds more (or replaces one); `uji.mode.set/get/list`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from uji.record import Struct, field
from uji.tools.policy import STRICTNESS, Policy
from uji.tools.verdict import Decision, Verdict

if TYPE_CHECKING:
    from uji.tools.confine import Sandbox

FILE_TOOLS = ("edit_file", "write_file", "read_file")
EDITING = ("edit_file", "write_file")


class ModeError(ValueError):
    pass


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ModeRow(TypedDict):
        """A mode as `uji.mode.list` gives it."""

        name: str
        desc: str
        current: bool
        policy: dict[str, Any]  # its rules as given, the file tools' own added
        origin: NotRequired[str]


class Mode(Struct):
    name: str
    desc: str = ""
    rules: dict[str, Any] = field(default_factory=dict)  # as given, for list()
    policy: Policy = field(default_factory=Policy)
    # accept_edits: a file tool's path inside the working directory or the roots is allowed.
    files_inside: Decision | None = None
    origin: str | None = None
    on_enter: Any = None  # Lua functions, called when the mode is switched to / away from
    on_leave: Any = None

    @property
    def label(self) -> str:
        return self.name.replace("_", " ")

    def row(self, current: bool) -> ModeRow:
        rules = dict(self.rules)
        if self.files_inside:
            for tool in FILE_TOOLS:
                rules.setdefault(tool, {"inside_roots": self.files_inside})
        out: ModeRow = {"name": self.name, "desc": self.desc, "current": current, "policy": rules}
        if self.origin:
            out["origin"] = self.origin
        return out


def _builtin() -> list[Mode]:
    plan_rules: dict[str, Any] = {t: {"default": "deny"} for t in EDITING}
    plan = Mode("plan", "read-only: edits are denied", plan_rules, origin="built-in")
    plan.policy.set(plan_rules, "the plan mode")
    return [
        Mode("ask", "the rules as written", origin="built-in"),
        Mode(
            "accept_edits", "file tools inside the roots are allowed", files_inside="allow", origin="built-in"
        ),
        plan,
    ]


class Modes:
    def __init__(self) -> None:
        self.modes: dict[str, Mode] = {m.name: m for m in _builtin()}
        self.current = "ask"

    def add(
        self,
        name: str,
        rules: dict[str, Any],
        desc: str = "",
        origin: str | None = None,
        on_enter: Any = None,
        on_leave: Any = None,
    ) -> list[str]:
        """Add (or replace) a mode; returns notices for rules that could not be read."""
        if not name or not isinstance(name, str):
            raise ModeError("a mode's name must be a non-empty string")
        mode = Mode(name, desc, dict(rules), origin=origin, on_enter=on_enter, on_leave=on_leave)
        notices = mode.policy.set(dict(rules), f"the {name} mode" + (f" ({origin})" if origin else ""))
        self.modes[name] = mode
        return notices

    def get(self) -> Mode:
        return self.modes.get(self.current) or self.modes["ask"]

    def check(self, name: Any) -> Mode:
        mode = self.modes.get(name) if isinstance(name, str) else None
        if mode is None:
            raise ModeError(f"no mode {name!r} (modes: {', '.join(self.modes)})")
        return mode

    def switch(self, name: str) -> tuple[Mode, Mode]:
        """Make `name` the current mode; returns (old, new) for the caller's hooks."""
        new = self.check(name)
        old = self.get()
        self.current = new.name
        return old, new

    def next_name(self) -> str:
        names = list(self.modes)
        return names[(names.index(self.get().name) + 1) % len(names)]

    def rows(self) -> list[ModeRow]:
        current = self.get().name
        return [m.row(m.name == current) for m in self.modes.values()]

    def layer(
        self, tool: str, path_tool: bool, subject: str, forms: list[str], verdict: Verdict, sandbox: Sandbox
    ) -> Verdict:
        """The verdict of the rules as written, with the current mode laid over it."""
        mode = self.get()
        if verdict.decision == "deny":
            return verdict
        over: Verdict | None = None
        if mode.files_inside and path_tool and tool in FILE_TOOLS and _inside(sandbox, subject):
            over = Verdict(mode.files_inside, "mode", rule=mode.name, origin=mode.origin)
        elif mode.policy.covers(tool):
            v = mode.policy.match(tool, forms) or mode.policy.fallback(tool, None)
            if v.by != "fallback":
                over = Verdict(v.decision, "mode", rule=mode.name, origin=v.origin or mode.origin)
        if over is None or over.decision == "ask":
            return verdict
        if over.decision == "deny" or STRICTNESS[verdict.decision] > STRICTNESS["allow"]:
            return over
        return verdict


def _inside(sandbox: Sandbox, subject: str) -> bool:
    """Whether a path is under the working directory or a root (confinement on or not)."""
    import os

    from uji.tools.confine import Sandbox

    inside = Sandbox(sandbox.cwd, list(sandbox.roots), True)
    if inside.check(subject) is not None:
        return False
    real = os.path.realpath(inside.abspath(subject))
    bases = [os.path.realpath(d) for d in (inside.cwd, *inside.expanded_roots)]
    return any(real == b or real.startswith(b.rstrip(os.sep) + os.sep) for b in bases)
