"""A policy decision and how it came about: what `uji.tools.policy` decides and
`uji.tools.remembered` may turn into an allow (a module of its own, so that neither of
those two imports the other for it)."""

from __future__ import annotations

from uji.record import Struct


class Verdict(Struct):
    decision: str  # allow | ask | deny
    by: str  # rule | tool-default | declared | default | fallback | unfixed | write-flag | remembered | hook | disabled | confine
    rule: str | None = None
    origin: str | None = None
    subject: str | None = None  # the part of a command line that decided it, in normal form
    note: str | None = None  # why a part is not fixed (by == "unfixed")
    form: str | None = None  # the form of a file path a rule matched, when not as written
    message: str | None = None  # the rule's message: what a deny tells the model, an ask's question

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
        if self.by == "unfixed":
            return f"`{self.subject}` is not a fixed command ({self.note}), so ask"
        if self.by == "remembered":
            return f"the remembered approval of `{self.rule}`{where}"
        if self.by == "mode":
            return f"the {self.rule} mode's `{self.decision}`"
        return f"no rule or default{part}, so ask"
