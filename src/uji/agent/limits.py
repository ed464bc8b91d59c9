"""Budgets of a turn and what a session spends.

`Limits` holds the budgets `uji.session.configure{max_steps, max_cost, max_tokens,
max_minutes}` and `uji run --max-steps/--max-cost` set. Each bounds one turn (all that
one prompt leads to: its model calls, the tool calls between them, and the usage tool
results add, such as a child session's): `max_steps` model calls (100 unless set),
`max_cost` dollars, `max_tokens` tokens (input, output and cache, all counted), and
`max_minutes` minutes (checked from the second model call on). A prompt queued during a turn and steered into it starts budgets
of its own. Budgets are checked before each model call, so a running tool is
never cut short by one; `max_cost` and `max_tokens` with the next request's estimated
share (what the turn's last request cost: each sends the conversation again, so the next
costs at least about as much), so a turn stops before a request that would pass them. At a budget the frontend asks whether to go on; going on raises
that budget, for this turn, by its configured amount again.

`Spend` follows one turn against its budgets.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from uji.events.stream import LimitName
from uji.record import Record, Struct, field

LIMITS: tuple[LimitName, ...] = ("max_steps", "max_cost", "max_tokens", "max_minutes")
DEFAULT_MAX_STEPS = 100


class LimitError(ValueError):
    pass


class Limits(Struct):
    max_steps: int = DEFAULT_MAX_STEPS
    max_cost: float | None = None
    max_tokens: int | None = None
    max_minutes: float | None = None

    def get(self, name: LimitName) -> float | None:
        value: float | None = getattr(self, name)
        return value

    def configure(self, opts: Mapping[str, Any], where: str) -> None:
        """Set the budgets given in `opts`, checked first (nothing changes on an error)."""
        unknown = set(opts) - set(LIMITS)
        if unknown:
            raise LimitError(
                f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))} (known: {', '.join(LIMITS)})"
            )
        checked: dict[str, float] = {}
        for name, value in opts.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not number or not value > 0 or value == float("inf"):
                raise LimitError(f"{where}: {name} must be a number > 0, got {value!r}")
            if name in ("max_steps", "max_tokens"):
                if value != int(value):
                    raise LimitError(f"{where}: {name} must be a whole number, got {value!r}")
                value = int(value)
            checked[name] = value
        for name, value in checked.items():
            setattr(self, name, value)


class Reached(Record):
    """A budget a turn reached: which, its value for this turn, and what was used."""

    limit: LimitName
    value: float
    used: float
    base: float  # the configured amount, which going on adds again
    next: float = 0.0  # the next request's estimate, when it is what would pass the budget

    def amount(self, n: float) -> str:
        match self.limit:
            case "max_steps":
                return "1 step" if int(n) == 1 else f"{int(n)} steps"
            case "max_cost":
                return dollars(n)
            case "max_tokens":
                return f"{int(n):,} tokens"
            case "max_minutes":
                return f"{n:g} minutes"

    @property
    def text(self) -> str:
        """One line: "budget reached: 100 of 100 steps this turn (max_steps)"."""
        match self.limit:
            case "max_cost":
                used = dollars(self.used)
            case "max_minutes":
                used = f"{round(self.used, 1):g}"
            case _:
                used = f"{int(self.used):,}"
        text = f"budget reached: {used} of {self.amount(self.value)} this turn ({self.limit})"
        if self.used < self.value:
            text += f"; the next request (about {self.amount(self.next)}) would pass it"
        return text


def dollars(cost: float) -> str:
    """$0.0123 under a dollar, $1.23 above."""
    return f"${cost:.2f}" if cost >= 1 else f"${cost:.4f}"


class Spend(Struct):
    """One turn against its budgets (raised when the user goes on at one)."""

    limits: Limits
    started: float  # the event loop's clock at the start of the turn
    steps: int = 0
    tokens: int = 0
    cost: float = 0.0
    # The last request's own tokens and dollars: the estimate of the next one's.
    last_tokens: int = 0
    last_cost: float = 0.0
    raised: dict[str, float] = field(default_factory=dict)  # name -> added by going on

    def reached(self, now: float) -> Reached | None:
        used: dict[LimitName, float] = {
            "max_steps": self.steps,
            "max_cost": self.cost,
            "max_tokens": self.tokens,
            "max_minutes": (now - self.started) / 60,
        }
        for name in LIMITS:
            base = self.limits.get(name)
            if base is None or (name == "max_minutes" and self.steps == 0):
                # A turn always gets its first model call: the time spent before it (hooks,
                # context providers, MCP servers connecting) is no step the budget can weigh.
                continue
            value = base + self.raised.get(name, 0)
            if used[name] >= value:
                return Reached(name, value, used[name], base)
            estimate = {"max_cost": self.last_cost, "max_tokens": self.last_tokens}.get(name, 0)
            if estimate and used[name] + estimate > value:
                return Reached(name, value, used[name], base, estimate)
        return None

    def go_on(self, reached: Reached) -> None:
        """The user chose to go on: this turn gets the budget's amount once more (past
        what was used, so a turn far over a lowered budget still gets a full amount)."""
        already = self.raised.get(reached.limit, 0)
        over = max(reached.used - reached.value, 0)
        self.raised[reached.limit] = already + reached.base + over
