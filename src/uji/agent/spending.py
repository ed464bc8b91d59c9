"""What a session spends — usage, cost and requests, for this run and as stored for all
its runs — and the running turn against its budgets (`agent/limits.py` says what they
bound)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from uji.agent.limits import Reached, Spend
from uji.events.stream import BudgetReached
from uji.wires.base import Usage

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.agent.services import TurnServices
    from uji.events.stream import Sink

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class UsageReport(TypedDict):
        """`uji.session.usage()`."""

        input: int
        output: int
        cache_read: int
        cache_write: int
        total: int
        last: dict[str, int]  # the last request's input, output, cache_read, cache_write
        requests: int
        cost: NotRequired[float]
        session: dict[str, float]  # the session's totals, all its runs


class Spending:
    def __init__(self, services: TurnServices, session_id: str, emit: Sink) -> None:
        self.services = services
        self.session_id = session_id
        self._emit = emit
        self.usage = Usage()
        self.cost: float | None = None  # dollars, once a request of a priced model counted
        self.last_usage = Usage()
        self.requests = 0
        self._totals: dict[str, float] | None = None  # the session's, as stored
        self.turn: Spend | None = None  # the running turn against its budgets
        self._unpriced_notice = False

    # The turn's budgets ---------------------------------------------------------------

    def start_turn(self) -> float:
        """A turn starts: budgets of its own; returns the event loop's clock."""
        now = asyncio.get_running_loop().time()
        self.turn = Spend(self.services.limits, now)
        self._unpriced_notice = False
        return now

    def restart_turn(self) -> None:
        """Budgets bound what one prompt leads to: a queued one steered in starts afresh."""
        if self.turn is not None:
            self.turn = Spend(self.services.limits, asyncio.get_running_loop().time())

    def end_turn(self) -> None:
        self.turn = None

    def step(self) -> None:
        """A model call of the turn (titles and summaries are none)."""
        if self.turn is not None:
            self.turn.steps += 1

    async def over_budget(self) -> Reached | None:
        """Before a model call: at a budget, the user is asked whether to go on; the
        budget that stops the turn if not."""
        spend = self.turn
        if spend is None:
            return None
        reached = spend.reached(asyncio.get_running_loop().time())
        if reached is None:
            return None
        self._emit(BudgetReached(reached.limit, reached.value, reached.used, reached.text))
        if await self._ask_continue(reached):
            spend.go_on(reached)
            return None
        return reached

    async def _ask_continue(self, reached: Reached) -> bool:
        ask = self.services.ask_continue
        if ask is None:
            return False
        return await ask(
            f"{reached.text[0].upper()}{reached.text[1:]}", f"Continue: {reached.amount(reached.base)} more"
        )

    # Counting -------------------------------------------------------------------------

    def count(self, usage: Usage) -> None:
        """One model request's usage, priced by the current model's list prices."""
        self.last_usage = usage
        self.requests += 1
        models = self.services.models
        provider = models.provider()
        model = provider.model(models.model_id) if provider and models.model_id else None
        prices = model.cost if model is not None else None
        if prices is None and not self._unpriced_notice and self.services.limits.max_cost is not None:
            self._unpriced_notice = True
            self.services.notice(
                f"max_cost is set, but {models.model_id} has no prices: its cost is not counted"
            )
        self._spent(usage, prices.of(usage) if prices is not None else None, requests=1)

    def add(self, usage: Usage, cost: float | None) -> None:
        """Usage spent on the session's behalf outside its own requests (a child session,
        reported by a tool through ctx.usage): it counts toward the session's totals and
        the turn's budgets."""
        self._spent(usage, cost, requests=0)

    def _spent(self, usage: Usage, cost: float | None, requests: int) -> None:
        self.usage.add(usage)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost
        spend = self.turn
        if spend is not None:
            spend.tokens += usage.total
            spend.cost += cost or 0.0
            if requests:  # the turn's own request: the estimate of its next one
                spend.last_tokens, spend.last_cost = usage.total, cost or 0.0
        row: dict[str, float] = {**usage.as_dict(), "requests": requests}
        if usage.estimated:  # requests whose tokens uji counted: the bar says "estimated"
            row["estimated"] = 1
        if cost is not None:
            row["cost"] = cost
        try:
            self._totals = self.services.store.add_usage(self.session_id, row)
        except KeyError:  # the session was deleted meanwhile: nothing to add to
            pass

    # Reporting ------------------------------------------------------------------------

    def totals(self) -> dict[str, float]:
        """What the session has spent in all its runs: `input`, `output`, `cache_read`,
        `cache_write`, `requests`, and `cost` once a priced request counted."""
        if self._totals is None:
            self._totals = self.services.store.usage(self.session_id)
        return self._totals

    def report(self) -> UsageReport:
        """`uji.session.usage()`: this run's usage, its last request's, and the session's."""
        u = self.usage
        session = dict(self.totals())
        session["total"] = sum(session.get(k, 0) for k in ("input", "output", "cache_read", "cache_write"))
        report: UsageReport = {
            "input": u.input,
            "output": u.output,
            "cache_read": u.cache_read,
            "cache_write": u.cache_write,
            "total": u.total,
            "last": self.last_usage.as_dict(),
            "requests": self.requests,
            "session": session,
        }
        if self.cost is not None:
            report["cost"] = self.cost
        return report
