"""Deciding one tool call: disabled → confinement → before_tool hook → policy → ask.

Every decision says what made it (`by`, and the rule with its file and line), so the
`call` event and the UI can explain it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from uji.record import Struct, field
from uji.tools.verdict import Verdict

if TYPE_CHECKING:
    from uji.events.stream import DecidedBy, Outcome, PolicyVerdict
    from uji.tools.base import Tool
    from uji.tools.confine import Sandbox
    from uji.tools.gate import Gate

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
    by: str  # user | auto
    reason: str | None = None  # why it was denied (the model sees it)
    remember: str | None = None  # session | always: remember Question.remember


Approver = Callable[[Question], Awaitable[Answer]]


class Decision(Struct):
    allow: bool
    by: str  # policy | hook | disabled | confine | user | auto
    reason: str | None = None  # the text after "denied: "
    verdict: Verdict | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def outcome(self) -> Outcome:
        """The decision as the `call` event carries it."""
        from uji.events.stream import HookRef, Outcome

        v, x = self.verdict, self.extra

        def text(key: str) -> str | None:
            value = x.get(key)
            return value if isinstance(value, str) else None

        return Outcome(
            decision="allow" if self.allow else "deny",
            by=cast("DecidedBy", self.by),
            rule=v.rule if v else None,
            source=v.origin if v else None,
            part=v.subject if v else None,
            unfixed=v.note if v else None,
            remembered=v is not None and v.by == "remembered",
            form=v.form if v else None,
            policy=cast("PolicyVerdict", v.decision) if v else None,
            reason=self.reason,
            hook=HookRef(str(x["hook"]), text("hook_origin")) if "hook" in x else None,
            question=text("question"),
            body=text("body"),
            preview=text("preview"),
            asked_by="hook" if x.get("asked_by") == "hook" else None,
            remember=text("remember"),
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


def policy_verdict(gate: Gate, tool: Tool, subject: str, args: dict[str, Any]) -> Verdict:
    """The rules as written, with the current mode (Shift+Tab, `uji.mode`) laid over them."""
    verdict = _written_verdict(gate, tool, subject)
    if tool.path_subject:
        from uji.tools.paths import path_forms

        forms = path_forms(gate.sandbox(), subject)
    else:
        forms = [subject]
    return gate.modes.layer(tool.name, tool.path_subject, subject, forms, verdict, gate.sandbox())


def _written_verdict(gate: Gate, tool: Tool, subject: str) -> Verdict:
    if tool.command_subject:
        from uji.tools.remembered import writes_through_redirect

        if writes_through_redirect(subject):
            with gate.policy.remembered.pause():
                return gate.policy.decide_command(tool.name, subject, tool.policy)
        return gate.policy.decide_command(tool.name, subject, tool.policy)
    if not tool.path_subject:
        return gate.policy.decide(tool.name, [subject], tool.policy, tool.remembers_tool)
    from uji.tools.paths import path_forms

    sandbox = gate.sandbox()
    forms = path_forms(sandbox, subject)
    if _through_symlink(sandbox, subject):
        # A remembered file is the file that was asked about: no symlink may redirect it.
        with gate.policy.remembered.pause():
            verdict = gate.policy.decide(tool.name, forms, tool.policy)
    else:
        verdict = gate.policy.decide(tool.name, forms, tool.policy)
    if verdict.rule is not None:
        verdict.form = matched_form(verdict.rule, forms)
    return verdict


def matched_form(rule: str, forms: list[str]) -> str | None:
    """The first form of a path `rule` matches, None when that is the path as written."""
    from uji.tools.policy import compile_matcher

    matches = compile_matcher(rule)
    found = next((f for f in forms if matches(f)), None)
    return None if found == forms[0] else found


def path_guard(gate: Gate, tool: Tool) -> Callable[[str], str | None]:
    """The check a file tool's opens make: the real file reached is matched again against
    the tool's deny rules, so a symlink swapped in after the decision is still refused."""
    from uji.tools.paths import real_forms

    sandbox = gate.sandbox()

    def guard(real: str) -> str | None:
        verdict = gate.policy.match(tool.name, real_forms(sandbox, real))
        if verdict is None or verdict.decision != "deny":
            return None
        return verdict.message or f"{real} is denied by the policy rule `{verdict.rule}`"

    return guard


def remember_scope(gate: Gate, tool: Tool, subject: str, verdict: Verdict) -> str | None:
    """What an "allow for the session" / "always allow" answer to this ask remembers:
    the part of a command line that asked, a file tool's absolute normalised path, or
    the subject. None when remembering could not turn this ask into an allow."""
    if not gate.policy.can_remember(tool.name, verdict):
        return None
    if tool.command_subject:
        from uji.tools.remembered import writes_through_redirect

        if writes_through_redirect(subject):
            return None  # its part's normal form would not say where it writes
        scope = verdict.subject  # the part; None when the whole line's rule asked
    elif tool.path_subject:
        sandbox = gate.sandbox()
        if _through_symlink(sandbox, subject):
            return None
        scope = sandbox.abspath(subject)
    elif tool.remembers_tool:
        from uji.tools.remembered import ANY_SUBJECT

        scope = ANY_SUBJECT
    else:
        scope = subject
    return scope or None


def _truthy(value: Any) -> bool:
    """Lua truthiness: everything but nil and false is true, so "" and 0 are."""
    return value is not None and value is not False


def _through_symlink(sandbox: Sandbox, path: str) -> bool:
    """Whether a symlink (in the path or the file itself) makes it another file."""
    import os

    from uji.tools.confine import expand_user

    try:
        # Resolved from the unfolded path: `link/../x` climbs from where `link` points.
        return os.path.realpath(os.path.join(sandbox.cwd, expand_user(path))) != sandbox.abspath(path)
    except (OSError, ValueError, RuntimeError):
        return True


def hook_decision(result: Any, handler_label: str) -> tuple[str, str | None] | None:
    """A before_tool result: {allow=true} | {deny="reason"} | {ask=true} | {ask="title"},
    read with Lua truthiness. Several at once: the strictest wins (deny, ask, allow)."""
    if not isinstance(result, dict):
        return None
    if _truthy(result.get("deny")):
        reason = result["deny"]
        return "deny", reason if isinstance(reason, str) and reason else f"denied by {handler_label}"
    if _truthy(result.get("ask")):
        title = result["ask"]
        return "ask", title if isinstance(title, str) and title else None
    if _truthy(result.get("allow")):
        return "allow", None
    return None


def deny_text(verdict: Verdict, tool: str) -> str:
    if verdict.by == "mode":
        return f"blocked by the {verdict.rule} mode (Shift+Tab or uji.mode.set changes the mode)"
    if verdict.by == "rule":
        if verdict.message:  # the rule's own words, as the original uji gives them
            return verdict.message
        part = f" (in `{verdict.subject}`)" if verdict.subject else ""
        if verdict.form:
            part = f" (the file is `{verdict.form}`)"
        return f"blocked by the policy rule `{verdict.rule}`{part}"
    return f"blocked by policy ({verdict.explain(tool)})"
