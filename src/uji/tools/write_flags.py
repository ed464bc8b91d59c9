"""Flags that make a command write files or run programs (issue 22).

An allow rule written for a read command (`git diff*`, `find *`, `rg *`) also matches
`git diff --output=~/.bashrc`, `find . -delete` and `rg --pre ./evil x`. A run_command part
carrying one of these flags asks instead of being allowed (policy.py `decide_command`).
The list is data: `uji.tool.write_flags` sets it (uji/builtin/defaults.lua ships one,
commented), a table from a command name, or a name and a subcommand (`"git rebase"`), to
what makes it write or run:

- `--long`: the option, `--long=value`, and any abbreviation (`--out` for `--output`: git
  and getopt accept unambiguous prefixes);
- `-x`: the one-letter option, also in a cluster or with its value attached (`-ni`,
  `-ofile`);
- `-word`: a single-dash word, exactly (find's `-delete`);
- `word`: a word anywhere in the arguments (`git bisect run`);
- `/re/`: a regular expression searched in the part's normal form (sed's `w file`);
- `true` instead of a list: any use of the command (`tee` writes every file it names).

Over-matching only asks: `git grep -c` asks because `git -c` sets any configuration.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from uji.record import Record

# Read as a table's value: any use of the command.
ANY_USE = "(any use)"


class WriteFlagError(ValueError):
    pass


class WriteFlag(Record):
    """One entry: `rule` is how the call event names it (`git --output`)."""

    command: str  # the command's name (its basename)
    subcommand: str | None
    spelling: str  # as written in the table, or ANY_USE
    matches: Callable[[tuple[str, ...], bool], bool]  # (words, loose)
    origin: str | None = None

    @property
    def rule(self) -> str:
        head = self.command if self.subcommand is None else f"{self.command} {self.subcommand}"
        return head if self.spelling == ANY_USE else f"{head} {self.spelling}"


class WriteFlags:
    def __init__(self) -> None:
        self.table: dict[str, list[str] | bool] = {}
        # command -> (key, subcommand, spelling) of each of its entries, whose WriteFlag is
        # made when a part running that command is first looked at (a run looks at a few
        # of the ~160 shipped).
        self._spellings: dict[str, list[tuple[str, str | None, str]]] = {}
        self._entries: dict[str, list[WriteFlag]] = {}
        self._origin: str | None = None
        self._shipped = False

    def set(self, table: dict[str, Any], origin: str | None, *, shipped: bool = False) -> None:
        """Replace the list. Raises WriteFlagError for what cannot be read. `shipped`: the
        list uji ships (defaults.lua), whose regular expressions are compiled when first
        needed, not on every start (a test compiles them all)."""
        spellings_of: dict[str, list[tuple[str, str | None, str]]] = {}
        kept: dict[str, list[str] | bool] = {}
        for key, value in table.items():
            words = key.split() if isinstance(key, str) else []
            if not 1 <= len(words) <= 2:
                raise WriteFlagError(f"a key must be a command name or a name and a subcommand, got {key!r}")
            command, sub = words[0], (words[1] if len(words) > 1 else None)
            if value is True:
                spellings = [ANY_USE]
                kept[key] = True
            elif isinstance(value, list) and all(isinstance(v, str) and v for v in value):
                spellings = value
                kept[key] = list(value)
            else:
                raise WriteFlagError(f"{key}: expected a list of flags or true, got {value!r}")
            for spelling in spellings:
                if not shipped:
                    _matcher(key, spelling)  # a regular expression that does not compile raises now
                spellings_of.setdefault(command, []).append((key, sub, spelling))
        self.table, self._spellings, self._entries = kept, spellings_of, {}
        self._origin, self._shipped = origin, shipped

    def _of(self, command: str) -> list[WriteFlag]:
        """The entries for `command`, made on its first look."""
        found = self._entries.get(command)
        if found is None:
            found = [
                WriteFlag(command, sub, spelling, _matcher(key, spelling, self._shipped), self._origin)
                for key, sub, spelling in self._spellings.get(command, ())
            ]
            self._entries[command] = found
        return found

    def find(self, words: tuple[str, ...]) -> WriteFlag | None:
        """The first entry the words of one part carry, or None."""
        if not words:
            return None
        args = words[1:]
        entries = [
            e for e in self._of(words[0].rsplit("/", 1)[-1]) if e.subcommand is None or e.subcommand in args
        ]
        # An option as written wins over one it could abbreviate or hide in a cluster:
        # `--exec=x` is --exec, not --exec-path; `-Ocmd` is -O, not -c.
        for loose in (False, True):
            for entry in entries:
                if entry.matches(words, loose):
                    return entry
        return None


def _matcher(key: str, spelling: str, lazy: bool = False) -> Callable[[tuple[str, ...], bool], bool]:
    if spelling == ANY_USE:
        return lambda words, loose: True
    if len(spelling) >= 2 and spelling.startswith("/") and spelling.endswith("/") and lazy:
        search = lazy_search(spelling[1:-1])
        return lambda words, loose: search(" ".join(words))
    if len(spelling) >= 2 and spelling.startswith("/") and spelling.endswith("/"):
        try:
            rx = re.compile(spelling[1:-1])
        except re.error as e:
            raise WriteFlagError(f"{key}: invalid regular expression {spelling}: {e}") from None
        return lambda words, loose: rx.search(" ".join(words)) is not None
    if spelling.startswith("--") and len(spelling) > 2:
        return lambda words, loose: any(_long(arg, spelling, loose) for arg in words[1:])
    if spelling.startswith("-") and len(spelling) == 2:
        return lambda words, loose: any(_short(arg, spelling, loose) for arg in words[1:])
    return lambda words, loose: spelling in words[1:]


def lazy_search(regex: str) -> Callable[[str], bool]:
    """Whether `regex` is found in a text, compiled on the first search: for the patterns uji
    ships, which start-up need not compile (a test compiles each). Also the policy's."""
    compiled: list[re.Pattern[str]] = []

    def search(text: str) -> bool:
        if not compiled:
            compiled.append(re.compile(regex))
        return compiled[0].search(text) is not None

    return search


def _long(arg: str, option: str, loose: bool) -> bool:
    """`--output`, `--output=x`, or (loose) an abbreviation of it (`--outp=x`)."""
    if not arg.startswith("--") or len(arg) <= 2:
        return False
    name = arg.split("=", 1)[0]
    return name == option or (loose and option.startswith(name))


def _short(arg: str, option: str, loose: bool) -> bool:
    """`-o`, `-ofile`, or (loose) `-o` anywhere in a cluster (`-nro`)."""
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    return arg.startswith(option) or (loose and option[1] in arg[1:])
