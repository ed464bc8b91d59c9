"""The gate's vocabulary, declared once: what a call's verdict can be, what made it, and
who answered a question; `Verdict`, what `Gate.decide` returns (and what
`uji.tools.policy` decides and `uji.tools.remembered` may turn into an allow). The events
(`uji.events.stream`) speak the same words. A module of its own, so that none of those
imports another for it."""

from __future__ import annotations

from typing import Literal

from uji.record import Struct

# A verdict: the call runs, a person (or --on-ask) answers first, or it is refused.
Decision = Literal["allow", "ask", "deny"]
# What a call finally got, once any question was answered.
Resolved = Literal["allow", "deny"]
# What made a verdict: the layers of Gate.decide, in their order (disabled, confine, hook),
# then the policy layer's reasons (a rule, a default, a part that is not fixed text, an
# allowed command carrying a write flag, a remembered approval, the current mode).
Basis = Literal[
    "disabled",
    "confine",
    "hook",
    "rule",
    "tool-default",
    "declared",
    "default",
    "fallback",
    "unfixed",
    "write-flag",
    "redirect",
    "remembered",
    "mode",
]
# Who decided a call, as the `call` event says: the gate's layer, or who answered its
# question (a person, or --on-ask with nobody there).
Layer = Literal["policy", "hook", "disabled", "confine"]
Answerer = Literal["user", "auto"]
DecidedBy = Layer | Answerer


class Verdict(Struct):
    decision: Decision
    by: Basis
    rule: str | None = None
    origin: str | None = None  # where the rule, default or hook was set (file:line)
    subject: str | None = None  # the part of a command line that decided it, in normal form
    note: str | None = None  # why a part is not fixed (by == "unfixed")
    form: str | None = None  # the form of a file path a rule matched, when not as written
    message: str | None = None  # the rule's message: what a deny tells the model, an ask's question
    # Filled in by Gate.decide:
    reason: str | None = None  # deny: what the model reads after "denied: "
    title: str | None = None  # ask: the question's title (a hook's or a rule's), if not the tool's
    remember: str | None = None  # ask: what "allow for the session" / "always allow" would remember
    hook: str | None = None  # by == "hook": the handler's name

    @property
    def layer(self) -> Layer:
        """The layer of the gate that gave this verdict."""
        by = self.by
        if by == "disabled" or by == "confine" or by == "hook":
            return by
        return "policy"

    def explain(self, tool: str) -> str:
        where = f" ({self.origin})" if self.origin else ""
        part = f" for `{self.subject}`" if self.subject else ""
        if self.by == "rule":
            return f"{self.decision} rule `{self.rule}`{where}{part}"
        if self.by == "tool-default":
            return f"{tool}'s default `{self.decision}`{where}{part}"
        if self.by == "declared":
            return f"{tool}'s declared policy `{self.decision}`{part}"
        if self.by == "default":
            return f"the top-level default `{self.decision}`{where}{part}"
        if self.by == "write-flag":
            return f"`{self.rule}` can write files or run programs{where}: `{self.subject}` asks"
        if self.by == "redirect":
            return f"the line writes a file outside the working directory and the roots ({self.note}), so ask"
        if self.by == "unfixed":
            return f"`{self.subject}` is not a fixed command ({self.note}), so ask"
        if self.by == "remembered":
            return f"the remembered approval of `{self.rule}`{where}"
        if self.by == "mode":
            return f"the {self.rule} mode's `{self.decision}`"
        if self.by == "hook":
            return f"the before_tool hook {self.hook or ''}{where}".rstrip()
        if self.by in ("disabled", "confine"):
            return self.reason or self.by
        return f"no rule or default{part}, so ask"
