"""Which tool calls run, ask first, or are refused (uji.tool.txt, SPEC §3).

Pure logic: rules, matching and precedence; run_command lines are split into the
commands they run by tools/shell.py. Nothing here
touches files or Lua, so every sentence of the contract can be tested directly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from uji.record import Struct, field
from uji.tools.verdict import Decision
from uji.tools.verdict import Verdict as Verdict  # re-exported: callers import it from here

if TYPE_CHECKING:
    from uji.tools.shell import Part

DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}
LISTS: tuple[Decision, ...] = ("deny", "allow", "ask")  # checked in this order; the first match wins


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
        if c == "*":
            piece, i = _glob_star(pattern, i, separator)
            out.append(piece)
        elif c == "?":
            out.append(one)
        elif c == "[":
            piece, i = _glob_class(pattern, i)
            out.append(piece)
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


def _glob_star(pattern: str, i: int, separator: bool) -> tuple[str, int]:
    """The run of `*` that starts at `i` as a regex, and the index of its last `*`."""
    if separator and pattern.startswith("**/", i):
        return "(?:.*/)?", i + 2
    n = len(pattern)
    doubled = i + 1 < n and pattern[i + 1] == "*"
    while i + 1 < n and pattern[i + 1] == "*":
        i += 1
    return (".*" if doubled else ("[^/]" if separator else ".") + "*"), i


def _glob_class(pattern: str, i: int) -> tuple[str, int]:
    """The `[...]` that starts at `i` as a regex class, and the index of its `]`; a `[`
    that no `]` closes is a plain `[`."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] in "!^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    while j < n and pattern[j] != "]":
        j += 1
    if j >= n:
        return re.escape("["), i
    body = pattern[i + 1 : j]
    if body[:1] in ("!", "^"):
        body = "^" + body[1:]
    return "[" + body.replace("\\", "\\\\") + "]", j


def rule_kind(pattern: str) -> str:
    if len(pattern) >= 2 and pattern.startswith("/") and pattern.endswith("/"):
        return "regex"
    if any(c in pattern for c in "*?["):
        return "glob"
    return "exact"


def _rule(item: Any, decision: Decision, origin: str | None, shipped: bool = False) -> Rule:
    """One rule of a list: a pattern, or the original uji's `{ pattern = …, message = … }`.
    `shipped`: one of uji's own (see `compile_matcher`)."""
    message = None
    if isinstance(item, dict):
        unknown = sorted(str(k) for k in item if k not in ("pattern", "message"))
        if unknown:
            raise PolicyError(f"a rule table takes pattern and message, not {', '.join(unknown)}")
        message = item.get("message")
        if message is not None and not isinstance(message, str):
            raise PolicyError(f"the message of rule {item.get('pattern')!r} must be a string")
        item = item.get("pattern")
        if not isinstance(item, str) or not item:
            raise PolicyError(f"a rule table needs a pattern (a non-empty string), got {item!r}")
    if not isinstance(item, str) or not item:
        raise PolicyError(f"{item!r} is not a pattern")
    return Rule(item, decision, compile_matcher(item, lazy=shipped), origin, message or None)


def _expand_home(pattern: str) -> str | None:
    if pattern.startswith("~/"):
        return os.path.join(os.path.expanduser("~"), pattern[2:])
    return None


def compile_matcher(pattern: str, lazy: bool = False) -> Callable[[str], bool]:
    """Compile one rule. Raises PolicyError for an invalid regex or glob. `lazy`: a rule uji
    ships (defaults.lua), whose regular expression is compiled when a subject is first
    matched, not at every start (the forced rm's costs ~0.3 ms; a test checks it compiles)."""
    kind = rule_kind(pattern)
    if kind == "regex" and lazy:
        from uji.tools.write_flags import lazy_search

        return lazy_search(pattern[1:-1])
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

# The rule set uji's shipped rules live in (uji/builtin/defaults.lua). A user's calls go
# to the unnamed set and add to it; a call naming this set replaces the shipped rules of
# the tools it names: the documented way to drop one.
DEFAULTS_SET = "defaults"
UNNAMED = ""  # the set `uji.tool.policy(rules)` sets without a name


class Rule(Struct):
    pattern: str
    decision: Decision
    matches: Callable[[str], bool]
    origin: str | None = None  # file:line of the uji.tool.policy call
    message: str | None = None  # `{ pattern = …, message = … }`: what a deny tells the model


class ToolRules(Struct):
    rules: list[Rule] = field(default_factory=list)  # deny first, then allow, then ask
    default: Decision | None = None
    origin: str | None = None
    # An unreadable rule or default raises the default to at least ask.
    floor: Decision | None = None


class RuleSet(Struct):
    """One set of rules: what the calls of one name (or of none) set. Each call replaces
    the tools it names in its own set and keeps the rest."""

    tools: dict[str, ToolRules] = field(default_factory=dict)
    default: Decision | None = None
    default_origin: str | None = None


def _strictest(verdicts: Iterable[Verdict]) -> Verdict:
    best: Verdict | None = None
    for v in verdicts:
        if best is None or STRICTNESS[v.decision] > STRICTNESS[best.decision]:
            best = v
    assert best is not None
    return best


def _strictest_of(decisions: Iterable[Decision | None]) -> Decision | None:
    best: Decision | None = None
    for d in decisions:
        if d is not None and (best is None or STRICTNESS[d] > STRICTNESS[best]):
            best = d
    return best


class Policy:
    """Every rule set: the unnamed one a user's `uji.tool.policy(rules)` calls set, the
    shipped one (`defaults`) and any other a call names (`opts.name`). They add up: every
    set's deny rules are checked first, then every set's allow rules, then ask; where
    sets give a tool (or every tool) a default, the strictest wins."""

    def __init__(self) -> None:
        self.sets: dict[str, RuleSet] = {}
        from uji.tools.remembered import RememberedRules

        self.remembered = RememberedRules()  # "allow for the session" / "always allow"
        from uji.tools.write_flags import WriteFlags

        self.write_flags = WriteFlags()  # flags that make an allowed command ask (uji.tool.write_flags)

    def set(
        self, rules: dict[str, Any], origin: str | None = None, name: str = UNNAMED, shipped: bool = False
    ) -> list[str]:
        """Apply one uji.tool.policy call to the set `name`: the tools it names are
        replaced there, the others kept. Returns notices for rules that could not be read.
        `shipped`: the call is uji's own (defaults.lua)."""
        notices: list[str] = []
        where = f" ({origin})" if origin else ""
        ruleset = self.sets.setdefault(name, RuleSet())
        for tool, spec in rules.items():
            if tool == "default":
                if spec in DECISIONS:
                    ruleset.default, ruleset.default_origin = spec, origin
                else:
                    notices.append(
                        f"policy: the top-level default must be allow, ask or deny, got {spec!r}; using ask{where}"
                    )
                    ruleset.default, ruleset.default_origin = "ask", origin
                continue
            if not isinstance(spec, dict):
                notices.append(f"policy: rules for {tool} must be a table{where}")
                continue
            ruleset.tools[tool] = self._tool_rules(tool, spec, origin, notices, shipped)
        return notices

    def _tool_rules(
        self, name: str, spec: dict[str, Any], origin: str | None, notices: list[str], shipped: bool
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
            if isinstance(patterns, str) or (isinstance(patterns, dict) and patterns):
                patterns = [patterns]  # one rule, or one `{ pattern = …, message = … }`
            if isinstance(patterns, dict):
                patterns = []  # an empty Lua table
            if not isinstance(patterns, list):
                notices.append(f"policy: {name}.{decision} must be a list of patterns{where}")
                out.floor = "ask"
                continue
            for item in patterns:
                try:
                    out.rules.append(_rule(item, decision, origin, shipped))
                except PolicyError as e:
                    notices.append(f"policy: {name}.{decision}: {e}; {name} now asks{where}")
                    out.floor = "ask"
        return out

    def _rules_of(self, tool: str) -> list[ToolRules]:
        """`tool`'s rules in every set, your own (unnamed) set first: where one of your
        rules and a set's both match, the call names yours (and gives its message)."""
        sets = sorted(self.sets.items(), key=lambda item: item[0] != UNNAMED)
        return [s.tools[tool] for _, s in sets if tool in s.tools]

    def covers(self, tool: str) -> bool:
        """Whether any set has rules for `tool` or a default for every tool."""
        return any(tool in s.tools or s.default is not None for s in self.sets.values())

    def floor(self, tool: str) -> Decision | None:
        """The least `tool` may be decided (ask, when one of its rules could not be read)."""
        return _strictest_of(r.floor for r in self._rules_of(tool))

    def match(self, tool: str, subjects: list[str]) -> Verdict | None:
        """The first rule (deny, then allow, then ask; each list across every set)
        matching any form of the subject."""
        rules = self._rules_of(tool)
        for decision in LISTS:
            for tool_rules in rules:
                for rule in tool_rules.rules:
                    if rule.decision == decision and any(rule.matches(s) for s in subjects):
                        return Verdict(rule.decision, "rule", rule.pattern, rule.origin, message=rule.message)
        return None

    def fallback(self, tool: str, declared: Decision | None) -> Verdict:
        """No rule matched: the tool's default, its declared policy, the top-level
        default, then ask (the strictest where several sets give one)."""
        rules = [r for r in self._rules_of(tool) if r.default is not None]
        tops = [s for s in self.sets.values() if s.default is not None]
        if rules:
            chosen = max(rules, key=lambda r: STRICTNESS[r.default or "allow"])
            verdict = Verdict(chosen.default or "ask", "tool-default", origin=chosen.origin)
        elif declared is not None:
            verdict = Verdict(declared, "declared")
        elif tops:
            top = max(tops, key=lambda s: STRICTNESS[s.default or "allow"])
            verdict = Verdict(top.default or "ask", "default", origin=top.default_origin)
        else:
            verdict = Verdict("ask", "fallback")
        floor = self.floor(tool)
        if floor and STRICTNESS[floor] > STRICTNESS[verdict.decision]:
            verdict = Verdict(floor, "fallback")
        return verdict

    def decide(
        self, tool: str, subjects: list[str], declared: Decision | None, whole_tool: bool = False
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
        return self.remembered.recall(tool, subjects, verdict, self.floor(tool))

    def can_remember(self, tool: str, verdict: Verdict) -> bool:
        """Whether a remembered allow could answer this verdict (an ask of the policy)."""
        return self.remembered.recallable(verdict, self.floor(tool))

    def decide_command(
        self,
        tool: str,
        line: str,
        declared: Decision | None,
        refuse_write: Callable[[str], str | None] | None = None,
    ) -> Verdict:
        """run_command: the strictest of each part's full evaluation (see tools/shell.py)
        and of the rule matching the raw line, if one does. A part whose command word is
        not fixed text is never allowed: at best it asks; nor is one carrying a write flag
        (tools/write_flags.py), unless that exact part was remembered. A line that rules
        allow but whose redirections write a file `refuse_write` refuses (confinement: a
        file outside the working directory and the roots), or a file whose name is not
        fixed text, asks. A line with no part (only an assignment or a comment) gets the
        fallback."""
        from uji.tools.shell import parse_line

        verdicts: list[Verdict] = []
        parts, writes = parse_line(line)
        for part in parts:
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
        verdict = _strictest(verdicts)
        if verdict.decision == "allow" and refuse_write is not None and any(v.by == "rule" for v in verdicts):
            # `echo *` allows echo, not `echo x > ~/.bashrc`. (A default of allow stays the
            # user's choice; a remembered answer never meets a writing redirection.)
            why = _outside_write(writes, parts, refuse_write)
            if why is not None:
                return Verdict("ask", "redirect", note=why, subject=line)
        return verdict


# Places every program may write: the terminal and the descriptors it already holds
# (`/dev/fd/N` exactly: /dev/fd is /proc/self/fd, whose `..` climbs to /).
_HARMLESS_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
_DESCRIPTOR = r"/dev/fd/[0-9]+"  # compiled by re with its first use
_MOVES = frozenset({"cd", "pushd", "popd"})


def _outside_write(
    writes: list[str | None], parts: list[Part], refuse_write: Callable[[str], str | None]
) -> str | None:
    """Why a line's redirections write outside confinement, or None when they do not.
    After a change of directory to anywhere but a fixed place inside (`cd sub`), a relative
    target's place is unknown, so it counts as outside. (From inside, a relative target
    that stays inside the working directory also stays inside.)"""
    moved = any(p.words and p.words[0] in _MOVES and not _moves_inside(p, refuse_write) for p in parts)
    for target in writes:
        if target is None:
            return "a redirection to a file whose name is not fixed text"
        if target in _HARMLESS_TARGETS or re.fullmatch(_DESCRIPTOR, target):
            continue
        if moved and not target.startswith(("/", "~")):
            return f"`{target}` after a change of directory"
        refusal = refuse_write(target)
        if refusal is not None:
            return f"`{target}`"
    return None


def _moves_inside(part: Part, refuse_write: Callable[[str], str | None]) -> bool:
    """`cd DIR` with DIR fixed text inside confinement (not `cd`, `cd -`, pushd or popd)."""
    words = part.words
    return (
        part.fixed
        and words[0] == "cd"
        and len(words) == 2
        and words[1] != "-"
        and refuse_write(words[1]) is None
    )
