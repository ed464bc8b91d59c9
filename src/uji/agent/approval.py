"""Asking about a tool call the gate's verdict is ask for (`Gate.decide`, uji.tools.gate),
and the decision a call ends with: the question, its answer, and the `call` event's form.

Every decision says what made it (`by`, and the rule with its file and line), so the
`call` event and the UI can explain it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from uji.record import Struct, field
from uji.tools.verdict import Answerer, DecidedBy, Verdict

if TYPE_CHECKING:
    from uji.events.stream import Outcome
    from uji.tools.base import Tool

APPROVAL_TIMEOUT = 300.0
TIMEOUT_TEXT = "timed out waiting for confirmation"


def approval_timeout() -> float:
    """How long a question waits for its answer: APPROVAL_TIMEOUT seconds, or what
    UJI_APPROVAL_TIMEOUT says (a number > 0; tests shorten the wait with it)."""
    import os

    raw = os.environ.get("UJI_APPROVAL_TIMEOUT", "")
    try:
        seconds = float(raw)
    except ValueError:
        return APPROVAL_TIMEOUT
    return seconds if 0 < seconds < float("inf") else APPROVAL_TIMEOUT


class Question(Struct):
    """An ask: what the approval dialog shows."""

    tool: str
    title: str
    body: str
    subject: str
    arguments: dict[str, Any]
    preview: str | None = None  # a unified diff for file edits
    # What "allow for the session" / "always allow" would remember (the part or path
    # that asked); None when the question cannot be remembered (a hook asked, say).
    remember: str | None = None
    # The call runs inside the sandbox (a command under the kernel's, a confined file
    # tool): what `uji run` may allow with nobody to answer.
    contained: bool = False


class Answer(Struct):
    allow: bool
    by: Answerer
    reason: str | None = None  # why it was denied (the model sees it)
    remember: str | None = None  # session | always (uji.tools.remembered.Scope): remember Question.remember


Approver = Callable[[Question], Awaitable[Answer]]


class Asked(TypedDict, total=False):
    """What a decision adds to its `call` event: the hook that decided, the question
    asked (its title, body and diff), who asked it, and what the answer remembered."""

    hook: str
    hook_origin: str | None
    question: str
    body: str
    preview: str
    asked_by: Literal["hook"]
    remember: str


class Decision(Struct):
    allow: bool
    by: DecidedBy
    reason: str | None = None  # the text after "denied: "
    verdict: Verdict | None = None  # the gate's
    extra: Asked = field(default_factory=lambda: Asked())

    def outcome(self) -> Outcome:
        """The decision as the `call` event carries it."""
        from uji.events.stream import HookRef, Outcome

        x = self.extra
        v = self.verdict if self.verdict is not None and self.verdict.layer == "policy" else None

        return Outcome(
            decision="allow" if self.allow else "deny",
            by=self.by,
            rule=v.rule if v else None,
            source=v.origin if v else None,
            part=v.subject if v else None,
            unfixed=v.note if v else None,
            remembered=v is not None and v.by == "remembered",
            form=v.form if v else None,
            policy=v.decision if v else None,
            basis=v.by if v else None,
            reason=self.reason,
            hook=HookRef(x["hook"], x.get("hook_origin")) if "hook" in x else None,
            question=x.get("question"),
            body=x.get("body"),
            preview=x.get("preview"),
            asked_by=x.get("asked_by"),
            remember=x.get("remember"),
        )


def default_question(tool: Tool) -> str:
    return tool.question or f"Would you like to run `{tool.name}`?"


def question_body(tool: Tool, subject: str, args: dict[str, Any]) -> str:
    if tool.declares_subject:
        return subject
    return "\n".join(f"{k}: {_short(v)}" for k, v in sorted(args.items()))


def _short(value: Any) -> str:
    import json

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 500 else text[:500] + "…"
