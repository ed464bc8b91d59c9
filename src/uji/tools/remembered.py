"""Remembered approvals: the answers "allow this for the session" and "always allow".

Each is an exact subject for one tool — the normalised part of a command line that
asked, the normalised path of a file tool, or an added tool's subject — never a whole
compound line. The policy consults them after its deny rules, and only to turn an
"ask" into an "allow": a remembered allow never overrides a deny (a rule, a default, an
unreadable rule's floor) and never allows a part whose command word is not fixed text.

"Always" answers are appended to `<data>/rules.lua` as `uji.tool.allow(tool, subject)`
lines, which uji loads after init.lua and plugin/*.lua; the user reads and edits that
file like any other config. Pure logic and one file append; no Lua, no Textual.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from typing import Literal, TypeGuard

from uji.record import Struct
from uji.tools.verdict import Decision, Verdict

# What an "allow" answer remembers: for this session, or always (rules.lua).
Scope = Literal["session", "always"]
SESSION: Scope = "session"
ALWAYS: Scope = "always"
SCOPES: tuple[Scope, ...] = (SESSION, ALWAYS)


def is_scope(value: object) -> TypeGuard[Scope]:
    return value in SCOPES


# The remembered subject of a tool allowed whatever its arguments (Tool.remembers_tool).
ANY_SUBJECT = "*"
RULES_HEADER = (
    '-- Written by uji when you chose "always allow". Delete a line to forget it.\n'
    "-- Each line allows one exact subject: a command (one part of a line), a path, a tool's subject.\n"
)
# A verdict of "ask" from these may be answered by a remembered allow. Anything else
# (a hook, or a reason the policy gives for refusing to allow a part) keeps asking.
RECALLABLE = frozenset(("rule", "tool-default", "declared", "default", "fallback", "write-flag"))


class RememberedAllow(Struct):
    tool: str
    subject: str
    scope: Scope
    origin: str | None = None  # "rules.lua:3", or the file:line of a uji.tool.allow call

    def where(self) -> str:
        return self.origin or ("this session" if self.scope == SESSION else "always")


class RememberedRules:
    """The session layer (in memory) and the always layer (from rules.lua), in the
    order they were added."""

    def __init__(self) -> None:
        self.rules: list[RememberedAllow] = []
        self.paused = False

    @contextlib.contextmanager
    def pause(self) -> Iterator[None]:
        """Decide without the remembered answers (a line that writes through `>`)."""
        was, self.paused = self.paused, True
        try:
            yield
        finally:
            self.paused = was

    def add(self, tool: str, subject: str, scope: Scope, origin: str | None = None) -> None:
        """Remember one exact subject, unless it already is (in either layer)."""
        if scope not in SCOPES:
            raise ValueError(f"scope must be session or always, got {scope!r}")
        if self.find(tool, [subject]) is None:
            self.rules.append(RememberedAllow(tool, subject, scope, origin))

    def find(self, tool: str, subjects: list[str]) -> RememberedAllow | None:
        for rule in self.rules:
            if rule.tool == tool and rule.subject in subjects:
                return rule
        return None

    def forget(self, scope: Scope) -> None:
        self.rules = [r for r in self.rules if r.scope != scope]

    @staticmethod
    def recallable(verdict: Verdict, floor: Decision | None) -> bool:
        return verdict.decision == "ask" and verdict.by in RECALLABLE and floor is None

    def recall(self, tool: str, subjects: list[str], verdict: Verdict, floor: Decision | None) -> Verdict:
        """`verdict`, or an allow when it asks and the user already allowed one of the
        subjects' exact forms. A tool whose rules could not be read (floor) keeps asking."""
        if self.paused or not self.recallable(verdict, floor):
            return verdict
        found = self.find(tool, subjects)
        if found is None:
            return verdict
        return Verdict("allow", "remembered", found.subject, found.where(), verdict.subject)


# A command part's normal form drops its redirections, so `echo x > ~/.bashrc` and
# `echo x` are one part. A remembered `echo x` must not allow the write: a line with an
# output redirection other than to /dev/null or another descriptor is decided without
# the remembered answers, and is never remembered. (Over-approximate: a `>` inside
# quotes counts too; that only means such a line keeps asking.)
# (Text: re compiles it with its first use.)
_HARMLESS_REDIRECT = r"(?:\d*>&(?:\d+|-)|&>>?\s*/dev/null|\d*>>?\|?\s*/dev/null)(?![^\s;&|)])"


def writes_through_redirect(line: str) -> bool:
    # Without a `>` there is no redirection to look at (nor a regex to compile).
    return ">" in line and ">" in re.sub(_HARMLESS_REDIRECT, " ", line)


# rules.lua ----------------------------------------------------------------------


def lua_string(text: str) -> str:
    """A Lua string literal that reads back as exactly `text` (any bytes of UTF-8)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 32 or code == 127:
            out.append(f"\\{code:03d}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def rule_line(tool: str, subject: str) -> str:
    return f"uji.tool.allow({lua_string(tool)}, {lua_string(subject)})\n"


def append_rule(path: str, tool: str, subject: str) -> int:
    """Append one `uji.tool.allow` line to rules.lua (created with its header); returns
    the line's number. One write in append mode, so two uji processes do not lose lines."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    line = rule_line(tool, subject)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        size = os.fstat(f.fileno()).st_size
        text = (RULES_HEADER if size == 0 else "") + line
        if size > 0 and not _ends_with_newline(path, size):
            text = "\n" + text
        f.write(text)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for number in range(len(lines), 0, -1):
        if lines[number - 1] + "\n" == line:
            return number
    return len(lines)


def _ends_with_newline(path: str, size: int) -> bool:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1) == b"\n"


def remember(rules: RememberedRules, rules_path: str, tool: str, subject: str, scope: Scope) -> str | None:
    """Remember an answer: in memory, and for "always" also in rules.lua. Returns a
    notice for the user when the rule could not be saved (it then holds for the session)."""
    saved = any(r.scope == ALWAYS and r.tool == tool and r.subject == subject for r in rules.rules)
    if scope == ALWAYS and not saved:
        try:
            number = append_rule(rules_path, tool, subject)
        except (OSError, UnicodeError) as e:
            rules.add(tool, subject, SESSION)
            return f"could not save the rule to {rules_path} ({e}); it holds for this session only"
        rules.rules = [r for r in rules.rules if not (r.tool == tool and r.subject == subject)]
        rules.add(tool, subject, ALWAYS, f"{rules_path}:{number}")
        return None
    rules.add(tool, subject, SESSION)  # nothing new when it is already remembered
    return None


def forget(rules: RememberedRules, rules_path: str, rule: RememberedAllow) -> str:
    """Forget one remembered approval (and its line in rules.lua); returns what was done."""
    rules.rules = [r for r in rules.rules if r is not rule]
    if rule.scope == SESSION:
        return f"forgot `{rule.subject}` for {rule.tool}"
    if rule.origin is None or not rule.origin.startswith(rules_path + ":"):
        return (
            f"forgot `{rule.subject}` for {rule.tool} until the config loads again; "
            f"it comes from {rule.where()}, delete it there"
        )
    try:
        with open(rules_path, encoding="utf-8") as f:
            lines = f.readlines()
        kept = [
            line for line in lines if line.rstrip("\n") != rule_line(rule.tool, rule.subject).rstrip("\n")
        ]
        tmp = f"{rules_path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(kept)
        os.replace(tmp, rules_path)
    except OSError as e:
        return f"forgot `{rule.subject}` for now, but could not edit {rules_path} ({e.strerror})"
    return f"forgot `{rule.subject}` for {rule.tool}; its line is gone from {rules_path}"
