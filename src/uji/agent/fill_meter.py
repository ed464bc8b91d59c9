"""How full the session's context window is, as the turn, the bottom bar and `/context`
ask: the provider's reported input for the last request, plus an estimate of each message
saved after it (reference internals §5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from uji.agent.context_fill import Budget, budget, estimate, tokens
from uji.agent.contexts import Part
from uji.agent.messages import live
from uji.agent.window import Calibration, Window, window

if TYPE_CHECKING:
    from typing import TypedDict

    from uji.agent.services import TurnServices
    from uji.agent.session_log import SessionLog
    from uji.wires.base import Usage

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class Fill(TypedDict):
        """How full the window is (`uji.session.context()`)."""

        used: int  # tokens
        window: int | None


class FillMeter:
    def __init__(self, services: TurnServices, log: SessionLog) -> None:
        self.services = services
        self.log = log
        # The provider's reported input for the request that ended at message seq
        # `_anchor_seq`; messages after it are estimated.
        self._anchor_tokens: int | None = None
        self._anchor_seq = 0
        self._anchor_pending = 0
        # For /context: the provider's count of the last request beside our estimate of
        # it (agent/window.py), and the last system prompt sent.
        self.calibration = Calibration()
        self._last_system: str | None = None

    def budget(self) -> Budget:
        models = self.services.models
        provider = models.provider()
        model = models.model()
        window = (model.context if model else None) or (provider.context_window if provider else None)
        settings = self.services.context.compaction
        return budget(window, model.output if model else None, settings.get("reserve"))

    def context(self) -> Fill:
        """{used, window}: the provider's last reported input plus an estimate of what
        came after it."""
        return {"used": self.used(), "window": self.budget().window}

    def used(self, system: str | None = None) -> int:
        """The tokens the live messages take; with `system`, before any request was
        counted, the system prompt and the tools too."""
        compacted, rest = live(self.log.messages)
        if self._anchor_tokens is not None:
            return self._anchor_tokens + sum(estimate(m) for m in rest if m.get("seq", 0) > self._anchor_seq)
        used = sum(estimate(m) for m in rest)
        if compacted is not None:
            used += estimate({"text": compacted.get("summary", "")})
        if system is not None:
            tools = [t.schema() for t in self.services.gate.offered()]
            used += (len(system) + len(json.dumps(tools))) // 4
        return used

    def window(self, notice: Callable[[str], None] | None = None) -> Window:
        """Every part of the next request and its size, calibrated on the provider's
        count of the last one (`/context`, `uji.context.list`)."""
        services = self.services
        tools = [t.schema() for t in services.gate.offered()]
        prompt = services.context.parts(services.cwd, tools, notice)
        if self._last_system is not None:
            # What the system prompt held beyond the parts (--append-prompt, before_turn).
            known = sum(p.tokens for p in prompt if p.kind in ("base", "instructions") or p.at == "system")
            other = tokens(self._last_system) - known
            if other > len(prompt):  # more than the blank lines between the parts
                prompt.append(Part("other prompt text", "other", other))
        log = self.log
        return window(
            prompt,
            log.messages,
            self.calibration,
            lambda through: log.store.count(log.session_id, before=through + 1),
        )

    def sending(self, system: str) -> None:
        """A turn's request is about to go: what its answer's count will stand for."""
        self._anchor_pending = self.log.last_seq
        self._last_system = system

    def counted(self, usage: Usage, estimated: int) -> None:
        """The provider counted the request we estimated at `estimated` tokens."""
        reported = usage.input + usage.cache_read + usage.cache_write
        if reported > 0 and not usage.estimated:  # only the provider's own count anchors and calibrates
            self._anchor_tokens = reported
            self._anchor_seq = self._anchor_pending
            self.calibration = Calibration(reported, estimated)

    def forget(self) -> None:
        """The messages changed under the last count (a rewind, a compaction): estimate afresh."""
        self._anchor_tokens = None
