"""Pieces of `Gate.decide` (uji.tools.gate) that need none of the gate's state: reading a
before_tool hook's result, which form of a path a rule matched, whether a symlink makes
a path another file, and the text a denied call gives the model. Nothing here runs Lua
or asks anyone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from uji.record import Struct
from uji.tools.verdict import Decision, Verdict

if TYPE_CHECKING:
    from uji.tools.confine import Sandbox


class HookVerdict(Struct):
    """What a before_tool handler said of a call: its decision, the deny's reason or the
    ask's title, and which handler (its name and where it was set)."""

    decision: Decision
    text: str | None = None
    name: str | None = None
    origin: str | None = None


# Runs the before_tool hooks for (tool name, arguments): what the first handler that
# decided said, or None when none did. The agent gives it (the hooks are Lua); a hook
# that fails gives a deny (fail closed).
BeforeTool = Callable[[str, dict[str, Any]], Awaitable[HookVerdict | None]]


def _truthy(value: Any) -> bool:
    """Lua truthiness: everything but nil and false is true, so "" and 0 are."""
    return value is not None and value is not False


def read_hook(result: Any, handler_label: str) -> tuple[Decision, str | None] | None:
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


def matched_form(rule: str, forms: list[str]) -> str | None:
    """The first form of a path `rule` matches, None when that is the path as written."""
    from uji.tools.policy import compile_matcher

    matches = compile_matcher(rule)
    found = next((f for f in forms if matches(f)), None)
    return None if found == forms[0] else found


def through_symlink(sandbox: Sandbox, path: str) -> bool:
    """Whether a symlink (in the path or the file itself) makes it another file."""
    import os

    from uji.tools.confine import expand_user

    try:
        # Resolved from the unfolded path: `link/../x` climbs from where `link` points.
        return os.path.realpath(os.path.join(sandbox.cwd, expand_user(path))) != sandbox.abspath(path)
    except (OSError, ValueError, RuntimeError):
        return True


def deny_text(verdict: Verdict, tool: str) -> str:
    """What the model reads after "denied: " for a deny of the policy layer."""
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
