"""Which tool calls run, ask first, or are refused (uji.tool.txt, SPEC §3).

Pure logic: rules, matching and precedence; run_command lines are split into the
commands they run by tools/shell.py. Nothing here
touches files or Lua, so every sentence of the contract can be tested directly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from uji.record import Struct, field
from uji.tools.verdict import Verdict as Verdict  # re-exported: callers import it from here

DECISIONS = ("allow", "ask", "deny")
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
LISTS = ("deny", "allow", "ask")  # checked in this order; the first match wins


class PolicyError(ValueError):
    pass


# Matching ---------------------------------------------------------------------


def glob_to_regex(pattern: str, separator: bool = False) -> str:
    """A glob anchored to the whole subject, where `*` (and `**`) match any characters
    including `/` and spaces, `?` one character, `[...]` a class and `{a,b}` either.
    With `separator` (uji.glob's option), `*` and `?` do not match `/`, and `**/` matches
    any number of folders."""
    one = "[^/]" if separator else "."
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        c = pattern[i]
        if c == "*" and separator and pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 2
        elif c == "*":
            doubled = i + 1 < n and pattern[i + 1] == "*"
            while i + 1 < n and pattern[i + 1] == "*":
                i += 1
            out.append(".*" if doubled else one + "*")
        elif c == "?":
            out.append(one)
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise PolicyError(f"unclosed '{{' in glob {pattern!r}")
    return "(?s:" + "".join(out) + r")\Z"


def rule_kind(pattern: str) -> str:
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        return "regex"
    if any(c in pattern for c in "*?["):
        return "glob"
    return "exact"


def _expand_home(pattern: str) -> str | None:
    if pattern.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), pattern[2:])
    return None


def compile_matcher(pattern: str) -> Callable[[str], bool]:
    """Compile one rule. Raises PolicyError for an invalid regex or glob."""
    kind = rule_kind(pattern)
    if kind == "regex":
        try:
            rx = re.compile(pattern[1:-1])
        except re.error as e:
            raise PolicyError(f"invalid regular expression {pattern}: {e}") from None
        return lambda s: rx.search(s) is not None
    forms = [pattern]
    expanded = _expand_home(pattern)
    if expanded is not None:
        forms.append(expanded)
    if kind == "glob":
        try:
            regexes = [re.compile(glob_to_regex(f)) for f in forms]
        except (re.error, PolicyError) as e:
            raise PolicyError(f"invalid glob {pattern!r}: {e}") from None
        return lambda s: any(rx.match(s) for rx in regexes)
    exact = frozenset(forms)
    return lambda s: s in exact


# Rules ------------------------------------------------------------------------


class Rule(Struct):
    pattern: str
    decision: str
    matches: Callable[[str], bool]
    origin: str | None = None  # file:line of the uji.tool.policy call


class ToolRules(Struct):
    rules: list[Rule] = field(default_factory=list)  # deny first, then allow, then ask
    default: str | None = None
    origin: str | None = None
    # An unreadable rule or default raises the default to at least ask.
    floor: str | None = None


def _strictest(verdicts: Iterable[Verdict]) -> Verdict:
    best: Verdict | None = None
    for v in verdicts:
        if best is None or STRICTNESS[v.decision] > STRICTNESS[best.decision]:
            best = v
    assert best is not None
    return best


class Policy:
    def __init__(self) -> None:
        self.tools: dict[str, ToolRules] = {}
        self.default: str | None = None
        self.default_origin: str | None = None
        from uji.tools.remembered import RememberedRules

        self.remembered = RememberedRules()  # "allow for the session" / "always allow"
        from uji.tools.write_flags import WriteFlags

        self.write_flags = WriteFlags()  # flags that make an allowed command ask (uji.tool.write_flags)

    def set(self, rules: dict[str, Any], origin: str | None = None) -> list[str]:
        """Apply one uji.tool.policy call: the tools it names are replaced, the others
        kept. Returns notices for rules that could not be read."""
        notices: list[str] = []
        where = f" ({origin})" if origin else ""
        for name, spec in rules.items():
            if name == "default":
                if spec in DECISIONS:
                    self.default, self.default_origin = spec, origin
                else:
                    notices.append(
                        f"policy: the top-level default must be allow, ask or deny, got {spec!r}; using ask{where}"
                    )
                    self.default, self.default_origin = "ask", origin
                continue
            if not isinstance(spec, dict):
                notices.append(f"policy: rules for {name} must be a table{where}")
                continue
            self.tools[name] = self._tool_rules(name, spec, origin, notices)
        return notices

    def _tool_rules(
        self, name: str, spec: dict[str, Any], origin: str | None, notices: list[str]
    ) -> ToolRules:
        where = f" ({origin})" if origin else ""
        out = ToolRules(origin=origin)
        for key in spec:
            if key not in (*LISTS, "default"):
                notices.append(
                    f"policy: {name}: unknown key {key!r} (expected allow, ask, deny, default){where}"
                )
        default = spec.get("default")
        if default is not None:
            if default in DECISIONS:
                out.default = default
            else:
                notices.append(
                    f"policy: {name}: default must be allow, ask or deny, got {default!r}; using ask{where}"
                )
                out.floor = "ask"
        for decision in LISTS:
            patterns = spec.get(decision)
            if patterns is None:
                continue
            if isinstance(patterns, str):
                patterns = [patterns]
            if isinstance(patterns, dict) and not patterns:
                patterns = []
            if not isinstance(patterns, list):
                notices.append(f"policy: {name}.{decision} must be a list of patterns{where}")
                out.floor = "ask"
                continue
            for pattern in patterns:
                if not isinstance(pattern, str) or not pattern:
                    notices.append(
                        f"policy: {name}.{decision}: {pattern!r} is not a pattern; {name} now asks{where}"
                    )
                    out.floor = "ask"
                    continue
                try:
                    out.rules.append(Rule(pattern, decision, compile_matcher(pattern), origin))
                except PolicyError as e:
                    notices.append(f"policy: {name}.{decision}: {e}; {name} now asks{where}")
                    out.floor = "ask"
        return out

    def match(self, tool: str, subjects: list[str]) -> Verdict | None:
        """The first rule (deny, then allow, then ask) matching any form of the subject."""
        rules = self.tools.get(tool)
        if rules is None:
            return None
        for rule in rules.rules:  # already in deny, allow, ask order
            if any(rule.matches(s) for s in subjects):
                return Verdict(rule.decision, "rule", rule.pattern, rule.origin)
        return None

    def fallback(self, tool: str, declared: str | None) -> Verdict:
        """No rule matched: the tool's default, its declared policy, the top-level
        default, then ask."""
        rules = self.tools.get(tool)
        if rules is not None and rules.default is not None:
            verdict = Verdict(rules.default, "tool-default", origin=rules.origin)
        elif declared is not None:
            verdict = Verdict(declared, "declared")
        elif self.default is not None:
            verdict = Verdict(self.default, "default", origin=self.default_origin)
        else:
            verdict = Verdict("ask", "fallback")
        floor = rules.floor if rules is not None else None
        if floor and STRICTNESS[floor] > STRICTNESS[verdict.decision]:
            verdict = Verdict(floor, "fallback")
        return verdict

    def decide(
        self, tool: str, subjects: list[str], declared: str | None, whole_tool: bool = False
    ) -> Verdict:
        """`whole_tool`: a remembered allow of the tool itself (ANY_SUBJECT) answers too;
        the rules are matched against the subjects only."""
        verdict = self.match(tool, subjects) or self.fallback(tool, declared)
        if whole_tool:
            from uji.tools.remembered import ANY_SUBJECT

            return self.recall(tool, [*subjects, ANY_SUBJECT], verdict)
        return self.recall(tool, subjects, verdict)

    def recall(self, tool: str, subjects: list[str], verdict: Verdict) -> Verdict:
        """The remembered-approvals layer: an ask the user already allowed is an allow."""
        rules = self.tools.get(tool)
        return self.remembered.recall(tool, subjects, verdict, rules.floor if rules else None)

    def can_remember(self, tool: str, verdict: Verdict) -> bool:
        """Whether a remembered allow could answer this verdict (an ask of the policy)."""
        rules = self.tools.get(tool)
        return self.remembered.recallable(verdict, rules.floor if rules else None)

    def decide_command(self, tool: str, line: str, declared: str | None) -> Verdict:
        """run_command: the strictest of each part's full evaluation (see tools/shell.py)
        and of the rule matching the raw line, if one does. A part whose command word is
        not fixed text is never allowed: at best it asks; nor is one carrying a write flag
        (tools/write_flags.py), unless that exact part was remembered. A line with no part
        (only an assignment or a comment) gets the fallback."""
        from uji.tools.shell import parse_command

        verdicts: list[Verdict] = []
        for part in parse_command(line):
            v = self.decide(tool, [part.text, *part.forms], declared)
            if not part.fixed and v.decision == "allow":
                v = Verdict("ask", "unfixed", note=part.why)
            elif v.decision == "allow" and v.by == "rule":
                # `git diff --output=x` under `allow = {"git diff*"}`: a flag that writes or
                # runs a program asks, unless this exact part was allowed when it asked. (A
                # default of allow is the user's choice for every command: it stays.)
                flag = self.write_flags.find(part.words)
                if flag is not None:
                    v = self.recall(tool, [part.text], Verdict("ask", "write-flag", flag.rule, flag.origin))
            v.subject = part.text
            verdicts.append(v)
        whole = self.match(tool, [line])
        if whole is not None:  # an ask rule on a line that is exactly a remembered part is answered
            verdicts.append(self.recall(tool, [line], whole))
        if not verdicts:
            verdicts.append(self.fallback(tool, declared))
        return _strictest(verdicts)
