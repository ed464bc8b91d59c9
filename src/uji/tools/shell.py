"""What a run_command line would run, read with bash's grammar (SPEC §3).

`parse_command(line)` returns every simple command the line could run, as a `Part` in
normal form (leading assignments and redirections dropped, quotes and escapes removed,
continuations joined, brace expansion of fixed text done as bash does it, words separated
by one space), with `fixed` telling whether all of it is literal text. The line is parsed
with tree-sitter-bash, the grammar of the shell run_command runs it in, so what is decided
is what runs; where the grammar misreads bash (`coproc { …; }`, `time { …; }`,
`! { …; }`, `{rm,-rf,x}` in command position) the line is reshaped, keeping its byte
offsets, and parsed again.

Parts come from lists, pipelines, subshells, brace groups, function bodies, if/for/while/
until/case bodies, `[[ ]]` and `(( ))`, command and process substitutions, unquoted heredoc
bodies, the string of `sh -c` (and bash, dash, zsh, ksh, `su -c`, `script -c`, `watch`, `env -S`, `eval`,
`trap`), the command of `find -exec`, and the command wrapped by env, command, exec, nohup,
time, nice, timeout, xargs, sudo, doas, setsid, stdbuf, ionice, builtin, coproc, pkexec,
chroot, flock, taskset, busybox, unbuffer, runuser, sg, chrt, strace and the others in
WRAPPERS.

A part is not fixed when a word of it is not literal text (`$X`, `$(…)`, `$((…))`, `$"…"`;
its `forms` then hold bash's likely words, which deny rules see too), when its command word
is a glob or a brace expansion, when it is `eval`, `source`, `.`, `alias`, `trap` or
another of NOT_FIXED, `exec` with no command, a shell reading its commands from stdin, the
command of xargs (which adds words from its input), a prefix assignment to a variable that
changes what runs (PATH, LD_PRELOAD, BASH_ENV, …), or when anything is past the limits
below. Text bash evaluates as code although the line shows only a variable's name
(arithmetic, array subscripts, `${!x}`, `${x@P}`) is a not-fixed part of its own. A line
the parser cannot read is one not-fixed part for the whole line, plus whatever parts could
still be read from it (also not fixed).

Pure: nothing here runs anything. tree-sitter is imported on the first call only.
"""

from __future__ import annotations

import contextvars
import functools
import re
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from uji.record import Record, Struct

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_CHARS = 256 * 1024  # a longer line is not parsed: one not-fixed part
MAX_NESTING = 4  # sh -c "sh -c '…'" and the like, each level parsed again
MAX_DEPTH = 400  # syntax tree depth walked
MAX_PARTS = 2000

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "posh", "yash"})
NOT_FIXED = {
    "eval": "eval runs text as a command",
    "source": "source runs a file's commands",
    ".": ". runs a file's commands",
    "alias": "an alias changes what a later command runs",
    "trap": "trap runs text as a command",
    "let": "let evaluates the text of variables as code",
    "compgen": "compgen -C and -F run commands",
    "fc": "fc runs commands from the history",
    "enable": "enable -f loads a shared library into the shell",
    "hash": "hash -p makes a name run another program",
    "at": "at runs the commands of its input later",
    "batch": "batch runs the commands of its input later",
    "crontab": "crontab installs commands that run later",
}
# Prefix assignments that change which program runs or what a shell does first.
RISKY_VARS = frozenset(
    {
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "CDPATH",
        "GLOBIGNORE",
        "PERL5OPT",
        "PERL5LIB",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "RUBYOPT",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_EXTERNAL_DIFF",
        "GIT_EDITOR",
        "GIT_ASKPASS",
        "GIT_PROXY_COMMAND",
        "GIT_EXEC_PATH",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG",
        "EDITOR",
        "VISUAL",
        "PAGER",
        "GIT_PAGER",
        "MANPAGER",
        "SYSTEMD_PAGER",
        # Where a program reads configuration or options that can run programs or write
        # files: git's repository and config (core.pager, core.fsmonitor), less's input
        # filters, tar's and rg's default options, gawk's libraries.
        "HOME",
        "XDG_CONFIG_HOME",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_TEMPLATE_DIR",
        "GIT_SEQUENCE_EDITOR",
        "LESSOPEN",
        "LESSCLOSE",
        "LESSKEY",
        "LESSKEYIN",
        "LESSEDIT",
        "MANOPT",
        "BROWSER",
        "SHELL",
        "TAR_OPTIONS",
        "RIPGREP_CONFIG_PATH",
        "AWKPATH",
        "AWKLIBPATH",
        "CURL_HOME",
        "WGETRC",
        "GCONV_PATH",
        "TEXTDOMAIN",  # which catalogue translates $"…"
        "TEXTDOMAINDIR",
    }
)
RISKY_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_", "GIT_TRACE")
HARMLESS_PAGERS = frozenset({"", "cat", "less", "more", "true", "less -R", "less -FRX"})


class Part(Record):
    """One simple command the line could run, in normal form."""

    text: str
    fixed: bool = True
    why: str | None = None  # why it is not fixed
    # Other spellings rules also match: bash's likely words when some are not fixed text
    # (`rm -rf${IFS}v` is also `rm -rf v`), so a deny rule still meets them.
    forms: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # the words of `text`, for the write-flag checks


def _unfixed(part: Part, why: str) -> Part:
    return Part(part.text, False, why, part.forms, part.words)


def parse_command(line: str, *, grammar: bool = False) -> list[Part]:
    """Every simple command `line` could run, in the order they appear. `grammar`: parse
    with tree-sitter even a line of plain words (to compare the two ways)."""
    return parse_line(line, grammar=grammar)[0]


def parse_line(line: str, *, grammar: bool = False) -> tuple[list[Part], list[str | None]]:
    """The parts of `line` (parse_command) and the files its redirections write to, in
    order: each target's text, or None where it is not fixed text (`> $HOME/x`). A copy
    to another descriptor (`2>&1`, `>&-`) writes no file. (A line of plain words has no
    redirection.)"""
    walker = _Walker(plain=not grammar)
    walker.line(line, 0)
    return walker.result(), walker.writes


# A line of plain words: characters bash takes as literal text wherever they stand (no
# quote, escape, expansion, glob, brace, tilde, comment, assignment, redirection or
# operator), separated by blanks. Such a line is one simple command whose words are its
# blank-separated fields, so tree-sitter (and its import, about 10 % of a short `uji run`)
# is not needed to read it; its words go through the same rules as parsed ones
# (`_Walker.simple`). A test compares both ways over a corpus of such lines.
_PLAIN_LINE = re.compile(r"[ \t]*[A-Za-z0-9_./:%+,-]+(?:[ \t]+[A-Za-z0-9_./:%+,-]+)*[ \t]*")
# First words the grammar reads as something else than a command name: reserved words,
# and the declaration commands it has nodes of their own for.
_NOT_COMMAND_NAMES = frozenset(
    {
        *("if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until"),
        *("do", "done", "in", "function", "time", "coproc"),
        *("declare", "typeset", "export", "readonly", "local", "unset"),
    }
)


def _plain_words(line: str) -> list[str] | None:
    """The words of a line of plain words (see _PLAIN_LINE), or None for any other line."""
    if not _PLAIN_LINE.fullmatch(line):
        return None
    words = line.split()
    return None if words[0] in _NOT_COMMAND_NAMES else words


def normal_form(line: str) -> str:
    """The parts of a line joined with `; `, for display and tests."""
    return "; ".join(p.text for p in parse_command(line))


@functools.cache
def shell_path() -> str:
    """The shell run_command runs lines in: bash, whose grammar is parsed here, else sh."""
    import os
    import shutil

    for path in (shutil.which("bash"), "/bin/bash"):
        if path and os.access(path, os.X_OK):
            return path
    return "/bin/sh" if os.path.exists("/bin/sh") else "sh"


def _is_bash() -> bool:
    return shell_path().rsplit("/", 1)[-1] == "bash"


@functools.cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def load() -> None:
    """Load the grammar now (for benchmarks and warm-up)."""
    _parser()


# -- words ---------------------------------------------------------------------------------


class Word(Struct):
    text: str  # quotes and escapes removed; expansions kept as written
    literal: bool  # no expansion or substitution
    pattern: bool = False  # an unquoted glob or brace expansion
    # Bash's likely value when the word is not literal: variables the line does not set
    # are empty, `$IFS` splits (a space), `${x:-w}` is w. Deny rules also see it.
    alt: str | None = None
    why: str | None = None  # what bash expands in it after parsing


SegKind = Literal["plain", "quoted", "expansion"]


class _Seg(Record):
    """A run of one word's characters: unquoted text, quoted (or escaped) text, or an
    expansion, with its likely value (`Word.alt`)."""

    text: str
    kind: SegKind
    alt: str
    why: str | None = None


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b"}
_ANSI.update({"E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"})


def _ansi_c(body: str) -> str:
    """The value of $'…' (without the quotes)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        i += 2
        if d in _ANSI:
            out.append(_ANSI[d])
        elif d in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[d]
            m = re.match(f"[0-9a-fA-F]{{1,{size}}}", body[i:])
            if m:
                out.append(chr(min(int(m.group(), 16), 0x10FFFF)))
                i += m.end()
            else:
                out.append("\\" + d)
        elif d in "01234567":
            m = re.match(r"[0-7]{0,2}", body[i:])
            digits = d + (m.group() if m else "")
            out.append(chr(int(digits, 8) & 0xFF))
            i += len(digits) - 1
        elif d == "c" and i < n:
            out.append(chr(ord(body[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + d)
    return "".join(out)


def _unquoted(raw: str, segs: list[_Seg]) -> None:
    """Unquoted text: escaped characters become quoted runs (no glob or brace meaning)."""
    for plain, escaped in re.findall(r"([^\\]+)|\\(.?)", raw, re.S):
        if plain:
            segs.append(_Seg(plain, "plain", plain))
        elif escaped and escaped != "\n":
            segs.append(_Seg(escaped, "quoted", escaped))


def _unescape_double(raw: str) -> str:
    """Text inside "…": a backslash escapes only $ ` " \\ and a newline."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n and raw[i + 1] in '$`"\\\n':
            if raw[i + 1] != "\n":
                out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


# Patterns as text, compiled by re (and kept in its cache) when a command first needs
# them, not with the module: most commands are plain words (_PLAIN_LINE).
_GLOB = r"(?s)[*?]|\[.*\]|\{[^{}]*(,|\.\.)[^{}]*\}"
_BRACE = r"(?s)\{[^{}]*(,|\.\.)[^{}]*\}"
MAX_BRACE_WORDS = 256  # a brace expansion into more words is not read: not fixed

# While a line is parsed with a `{` replaced (see `_Walker.line`), the bytes standing for it.
_BRACE_MARK = "\x01"
_MARKED: contextvars.ContextVar[bool] = contextvars.ContextVar("uji_shell_marked", default=False)
# Variables the line being read sets to fixed text (`X=rm; $X -rf v`), for `Word.alt`.
_KNOWN: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "uji_shell_known", default=MappingProxyType({})
)


def _text(node: Node) -> str:
    text = (node.text or b"").decode("utf-8", "replace")
    if _MARKED.get() and _BRACE_MARK in text:
        text = text.replace(_BRACE_MARK, "{")
    return text


def _segments(nodes: list[Node]) -> list[_Seg]:
    segs: list[_Seg] = []
    for node in nodes:
        _piece(node, segs, quoted=False)
    return segs


def _word(nodes: list[Node]) -> Word:
    """One shell word made of adjacent nodes (several when a continuation split it), as
    the text it is written as: no brace expansion (an assignment's value, a here-string)."""
    return _joined(_segments(nodes))


def _joined(segs: list[_Seg]) -> Word:
    text = "".join(s.text for s in segs)
    literal = all(s.kind != "expansion" and s.why is None for s in segs)
    shape = "".join(s.text if s.kind == "plain" else "_" * len(s.text) for s in segs)
    alt = None if all(s.alt == s.text for s in segs) else "".join(s.alt for s in segs)
    why = next((s.why for s in segs if s.why), None)
    if why is None and not literal:
        why = f"`{text}` is not fixed text"
    return Word(text, literal, bool(re.search(_GLOB, shape)), alt, why)


def _words(nodes: list[Node]) -> list[Word]:
    """One word of a command as bash gives it to the command: brace expansion (`-r{f,}`
    is `-rf -r`) applied where bash applies it, nothing else."""
    segs = _segments(nodes)
    shape = "".join(s.text if s.kind == "plain" else "_" * len(s.text) for s in segs)
    if not re.search(_BRACE, shape) or not _is_bash():
        return [_joined(segs)]
    import bracex

    def pattern(value: str) -> str:
        out: list[str] = []
        for s in segs:
            v = s.text if value == "text" else s.alt
            out.append(v if s.kind == "plain" else re.sub(r"([^\w])", r"\\\1", v))
        return "".join(out)

    word = _joined(segs)
    try:
        texts = bracex.expand(pattern("text"), limit=MAX_BRACE_WORDS)
        alts = bracex.expand(pattern("alt"), limit=MAX_BRACE_WORDS) if word.alt is not None else texts
    except (bracex.ExpansionLimitException, ValueError, RecursionError):
        return [Word(word.text, False, True, word.alt, "a brace expansion into too many words")]
    if len(alts) != len(texts):
        alts = texts
    pattern_left = bool(re.search(_GLOB, re.sub(_BRACE, "", shape)))
    return [
        Word(t, word.literal, pattern_left or word.pattern, None if word.alt is None else a, word.why)
        for t, a in zip(texts, alts, strict=True)
        if t or not word.literal
    ]


def _piece(node: Node, segs: list[_Seg], quoted: bool) -> None:
    kind = node.type
    raw = _text(node)
    if kind in ("word", "number", "brace_expression"):
        _unquoted(raw, segs)
    elif kind == "raw_string":
        segs.append(_Seg(raw[1:-1], "quoted", raw[1:-1]))
    elif kind == "ansi_c_string":
        value = _ansi_c(raw[2:-1])
        segs.append(_Seg(value, "quoted", value))
    elif kind == "translated_string":
        # $"…" is looked up in the locale's message catalogue: its text is what a
        # catalogue (TEXTDOMAIN, TEXTDOMAINDIR) says, most often itself.
        inner: list[_Seg] = []
        for child in node.named_children:
            _piece(child, inner, quoted)
        value = "".join(s.text for s in inner)
        segs.append(_Seg(value, "quoted", value, '`$"…"` is translated by the locale'))
    elif kind == "string":
        _string(node, segs)
    elif kind == "simple_expansion" and raw in _NUMERIC_PARAMETERS:
        # `$$`, `$?`, `$#`, `$!`: a number the shell sets, never text the line chose.
        segs.append(_Seg(raw, "quoted", _SPECIAL[raw[1:]]))
    elif kind == "process_substitution":
        # A file name (/dev/fd/63): its commands are parts of their own.
        segs.append(_Seg(raw, "quoted", "/dev/fd/63"))
    elif kind == "concatenation":
        for child in node.children:
            if child.is_named:
                _piece(child, segs, quoted)
            else:  # an anonymous token inside a word, such as a `$` before "…"
                _dollar_token(_text(child), segs)
    elif kind == "$":
        _dollar_token(raw, segs)
    else:
        # An expansion, substitution or anything else: kept as written, not literal.
        text = raw.replace("\\\n", "") if "\\\n" in raw else raw
        segs.append(_Seg(text, "expansion", _likely(node, text, quoted), _expansion_why(node, text)))


def _dollar_token(raw: str, segs: list[_Seg]) -> None:
    """The grammar reads `-r$"f"` as a `-r$` token and a string: the `$` makes the
    string a translated one, and what precedes it is unquoted text of the same word."""
    if raw.endswith("$"):
        _unquoted(raw[:-1], segs)
        segs.append(_Seg("", "quoted", "", '`$"…"` is translated by the locale'))
    else:
        _unquoted(raw, segs)


def _string(node: Node, segs: list[_Seg]) -> None:
    base = node.start_byte
    data = node.text or b""
    pos = 1

    def between(a: int, b: int) -> None:
        chunk = data[a:b].decode("utf-8", "replace")
        if _MARKED.get():
            chunk = chunk.replace(_BRACE_MARK, "{")
        value = _unescape_double(chunk)
        if value:
            segs.append(_Seg(value, "quoted", value))

    for child in node.named_children:
        start, end = child.start_byte - base, child.end_byte - base
        between(pos, start)
        if child.type == "string_content":
            between(start, end)
        else:
            text = re.sub(r"\\\n", "", _text(child))
            segs.append(_Seg(text, "expansion", _likely(child, text, True), _expansion_why(child, text)))
        pos = end
    between(pos, max(pos, len(data) - 1))


# Positional and special parameters in a `bash -c` line: none are set but these.
_SPECIAL = {"#": "0", "?": "0", "$": "1", "!": "", "-": "hB", "0": "bash", "@": "", "*": ""}
_SPECIAL.update({"SHELL": "bash", "BASH": "bash"})  # a shell, whichever
_NUMERIC_PARAMETERS = frozenset({"$$", "$?", "$#", "$!"})


def _likely(node: Node, text: str, quoted: bool) -> str:
    """Bash's likely value of an expansion when the line sets no variable: deny rules
    see it too, so `rm -r${x}f` or `rm -rf${IFS}v` still meet a rule for `rm -rf`."""
    kind = node.type
    if kind == "simple_expansion":
        name = text[1:]
    elif kind == "expansion":
        m = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*|[0-9#?$!@*-])(?:(:?[-=])(.*))?\}", text, re.S)
        if m is None:
            return ""
        name = m.group(1)
        if m.group(2):  # ${x:-word}: x is unset, so the word
            words = [c for c in node.named_children if c.type != "variable_name"]
            return "".join(_likely_word(c) for c in words) if words else m.group(3)
    else:
        return ""
    known = _KNOWN.get()
    if name in known:
        return known[name]
    if name == "IFS":
        return " " if not quoted else " \t\n"
    return _SPECIAL.get(name, "")


def _likely_word(node: Node) -> str:
    segs: list[_Seg] = []
    _piece(node, segs, quoted=False)
    return "".join(s.alt for s in segs)


def _expansion_why(node: Node, text: str) -> str | None:
    if node.type in ("simple_expansion", "expansion") and re.fullmatch(r"\$\{?IFS\}?", text):
        return "`$IFS` splits the word where bash reads it"
    return None


# -- the walk ------------------------------------------------------------------------------

_COMMAND_NODES = frozenset({"command", "declaration_command", "unset_command", "test_command"})
# Leaves whose text is data, never commands.
_DATA_LEAVES = frozenset({"raw_string", "ansi_c_string", "comment", "heredoc_start", "heredoc_end"})
_WS = r"\s+"


def _collapse(text: str) -> str:
    return re.sub(_WS, " ", text.replace("\\\n", "")).strip()


def _unescaped(text: str, token: str) -> bool:
    i = 0
    while True:
        j = text.find(token, i)
        if j < 0:
            return False
        k = j
        while k > 0 and text[k - 1] == "\\":
            k -= 1
        if (j - k) % 2 == 0:
            return True
        i = j + 1


def _command_words(node: Node, src: bytes) -> tuple[list[Word], str | None]:
    """A command node's words as the shell splits them, and the risk of an assignment
    before them (None: none)."""
    risk: str | None = None
    pieces: list[Node] = []
    redirects = list(node.children)
    parent = node.parent
    if (
        parent is not None
        and parent.type == "redirected_statement"
        and parent.child_by_field_name("body") == node
    ):
        redirects += parent.children
    descriptors = _descriptor_ends(redirects)
    for child in node.children:
        ctype = child.type
        if ctype == "variable_assignment":
            risk = risk or _risky_assignment(child)
        elif ctype == "command_name":
            pieces.extend(c for c in child.named_children[:1] if not _is_descriptor(c, descriptors))
        elif ctype == "$" or (
            child.is_named and not ctype.endswith("_redirect") and not _is_descriptor(child, descriptors)
        ):
            pieces.append(child)  # (a `$` token: the grammar's reading of `-r$"f"`)
    for child in redirects:
        if child.type == "file_redirect":
            # The grammar puts words after a redirect's target into the redirect; the
            # shell gives them to the command (`true &>/dev/null rm -rf x`).
            pieces.extend(child.children_by_field_name("destination")[1:])
    return [w for g in _word_groups(pieces, src) for w in _words(g)], risk


def _word_groups(pieces: list[Node], src: bytes) -> list[list[Node]]:
    r"""The pieces in source order, those with nothing (or a line continuation) between
    them together: `r\⏎m` is one word to the shell, so is `-r$"f"`."""
    pieces = sorted(pieces, key=lambda n: n.start_byte)
    groups: list[list[Node]] = []
    last_end = -1
    for piece in pieces:
        gap = src[last_end : piece.start_byte]
        if groups and (not gap or _is_continuation(gap)):
            groups[-1].append(piece)
        else:
            groups.append([piece])
        last_end = piece.end_byte
    return groups


class _Walker:
    def __init__(self, plain: bool = True) -> None:
        self.plain = plain  # read a line of plain words without the grammar
        self.parts: list[Part] = []
        self.writes: list[str | None] = []  # the files output redirections write to
        self.full = False

    def result(self) -> list[Part]:
        seen: dict[str, int] = {}
        out: list[Part] = []
        for part in self.parts:
            i = seen.get(part.text)
            if i is None:
                seen[part.text] = len(out)
                out.append(part)
            elif part.fixed is False and out[i].fixed:
                out[i] = part
        return out

    def add(
        self,
        text: str,
        fixed: bool = True,
        why: str | None = None,
        forms: tuple[str, ...] = (),
        words: tuple[str, ...] = (),
    ) -> None:
        if self.full:
            return
        if len(self.parts) >= MAX_PARTS:
            self.full = True
            self.parts.append(Part(f"(more than {MAX_PARTS} commands)", False, "too many commands"))
            return
        forms = tuple(f for f in forms if f != text)
        self.parts.append(Part(text, fixed, why if not fixed else None, forms, words))

    # A whole line (also the string of sh -c, eval, a heredoc fed to a shell…).
    def line(self, line: str, nesting: int) -> None:
        if nesting > MAX_NESTING:
            self.add(_collapse(line)[:500], False, "commands nested too deeply")
            return
        if len(line) > MAX_CHARS:
            self.add(_collapse(line[:500]) + " …", False, f"longer than {MAX_CHARS // 1024} KB")
            return
        plain = _plain_words(line) if self.plain else None
        if plain is not None:
            self.simple([Word(w, True) for w in plain], nesting, [])
            return
        src, marked = _reshape(line.encode("utf-8", "surrogatepass"))
        token = _MARKED.set(marked)
        root = _parser().parse(src).root_node
        known = _KNOWN.set({**_KNOWN.get(), **_assigned(root)})
        try:
            if root.has_error:
                start = len(self.parts)
                self.walk(root, src, nesting)
                # What could be read still counts for deny rules, but nothing here is fixed.
                self.parts[start:] = [
                    _unfixed(p, "the shell cannot parse the line") for p in self.parts[start:]
                ]
                self.parts.insert(start, Part(_collapse(line), False, "the shell cannot parse the line"))
                return
            self.walk(root, src, nesting)
        finally:
            _KNOWN.reset(known)
            _MARKED.reset(token)

    def walk(self, root: Node, src: bytes, nesting: int) -> None:
        stack: list[tuple[Node, int]] = [(root, 0)]
        stdin_scripts: dict[int, list[str]] = {}
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                self.add(_snippet(src, node), False, "nested too deeply")
                continue
            children = self.visit(node, src, nesting, stdin_scripts)
            stack.extend((c, depth + 1) for c in reversed(children))

    def visit(self, node: Node, src: bytes, nesting: int, stdin_scripts: dict[int, list[str]]) -> list[Node]:
        """One node of the tree: the parts it makes, then the children to walk into."""
        kind = node.type
        evaluates = _evaluates(node)
        if evaluates:
            self.add(_short(evaluates[0]), False, evaluates[1])
        if kind == "file_redirect" and _writes_a_file(node):
            target = _word(node.children_by_field_name("destination")[:1])
            self.writes.append(target.text if target.literal and not target.pattern else None)
        if kind == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is not None and body.type == "command":
                stdin_scripts[body.id] = _stdin_scripts(node)
        elif kind in _COMMAND_NODES:
            self.command_node(node, src, nesting, stdin_scripts.get(node.id, []))
        elif kind in ("variable_assignment", "file_redirect"):
            self.assignment_or_redirect(node, kind)
        elif kind == "heredoc_redirect":
            start = node.child_by_field_name("start") or _first_of(node, "heredoc_start")
            if start is not None and re.search(r"['\"\\]", _text(start)):
                # A quoted delimiter: the body is data, nothing in it runs.
                return [c for c in node.children if c.type != "heredoc_body"]
        if node.child_count == 0:
            if node.is_named and kind not in _DATA_LEAVES:
                self.leaf(node, nesting)
            return []
        return list(node.children)

    def assignment_or_redirect(self, node: Node, kind: str) -> None:
        """An assignment outside a command (`X=1; …`), or `&>` where sh reads it otherwise."""
        if kind == "variable_assignment":
            if node.parent is not None and node.parent.type not in ("command", "declaration_command"):
                risk = _risky_assignment(node)
                if risk:
                    self.add(_collapse(_text(node)), False, risk)
        elif not _is_bash() and any(c.type in ("&>", "&>>") for c in node.children):
            # Without bash, sh reads `&>` as `&` then `>`: what runs is not what was parsed.
            self.add(_collapse(_text(node.parent or node)), False, "`&>` means something else to sh")

    def leaf(self, node: Node, nesting: int) -> None:
        """A safety net: backticks or `$(` the grammar left inside a word still run."""
        text = _text(node)
        ticks = "`" in text and _unescaped(text, "`")
        dollar = "$(" in text and _unescaped(text, "$(")
        if not (ticks or dollar):
            return
        start = len(self.parts)
        for inner in re.findall(r"`((?:\\.|[^`\\])*)`", text, re.S) if ticks else []:
            self.line(inner.replace("\\`", "`"), nesting + 1)
        if dollar:
            self.line(text, nesting + 1)  # read the text again as commands
        if text.count("`") % 2:
            self.add(_collapse(text)[:500], False, "a substitution the parser did not read")
        self.parts[start:] = [_unfixed(p, "a substitution inside a word") for p in self.parts[start:]]

    # One command node.
    def command_node(self, node: Node, src: bytes, nesting: int, stdin: list[str]) -> None:
        kind = node.type
        if kind == "test_command":
            why = _test_evaluates(node)
            self.add(_collapse(_text(node)), why is None, why)
            return
        if kind in ("declaration_command", "unset_command"):
            self.declaration(node, kind)
            return
        stdin = [*stdin, *_stdin_scripts(node)]
        words, risk = _command_words(node, src)
        if not words:
            if risk:
                self.add(_collapse(_text(node)), False, risk)
            return
        self.simple(words, nesting, stdin, risk)

    def declaration(self, node: Node, kind: str) -> None:
        """`declare`/`export`/`local`/`readonly`/`unset` and the names they set."""
        names = [
            _assignment(c) if c.type == "variable_assignment" else _word([c]).text for c in _word_nodes(node)
        ]
        keyword = node.children[0].type if node.children else kind
        risks = [
            r for c in node.named_children if c.type == "variable_assignment" and (r := _risky_assignment(c))
        ]
        risks.append(_names_risk(keyword, names) or "")
        risks = [r for r in risks if r]
        if risks:
            self.add(" ".join([keyword, *names]), False, risks[0])
        else:
            self.add(" ".join([keyword, *names]))

    def simple(self, words: list[Word], nesting: int, stdin: list[str], risk: str | None = None) -> None:
        """A simple command as words: its part, then what it wraps or runs."""
        head = words[0]
        text = " ".join(w.text for w in words)
        forms = _forms(words)
        spelled = tuple(w.text for w in words)
        if not head.literal or head.pattern:
            self.add(text, False, head.why or "the command word is not fixed text", forms, spelled)
            if not head.literal and forms:
                # What bash likely runs, read again: `${IFS}sudo rm -rf v` meets a rule for rm.
                self.guess(_likely_line(words), nesting)
            return
        name = head.text.rsplit("/", 1)[-1]
        args = words[1:]
        why = risk or NOT_FIXED.get(head.text) or _builtin_risk(name, args)
        if why is None:
            why = next((w.why for w in args if not w.literal), None)
        fixed = why is None
        if head.text in ("eval", "trap") and args and name not in SHELLS:
            script_words = args if head.text == "eval" else args[:1]
            if self.evaluated(script_words, nesting, lambda: self.add(text, fixed, why, forms, spelled)):
                return
        else:
            fixed, why = self.runs_more(head, name, args, nesting, stdin, fixed, why)
        self.add(text, fixed, why, forms, spelled)
        self.wrapped(name, args, nesting, stdin)

    def evaluated(self, script_words: list[Word], nesting: int, add_own: Callable[[], None]) -> bool:
        """What `eval` or `trap` runs: read (after the command's own part, `add_own`; True)
        when it is fixed text, else guessed at (False: the caller adds its part after)."""
        if all(w.literal for w in script_words):
            add_own()
            self.line(" ".join(w.text for w in script_words), nesting + 1)
            return True
        self.guess(" ".join(w.text if w.literal else w.alt or "" for w in script_words), nesting)
        return False

    def runs_more(
        self,
        head: Word,
        name: str,
        args: list[Word],
        nesting: int,
        stdin: list[str],
        fixed: bool,
        why: str | None,
    ) -> tuple[bool, str | None]:
        """What a shell, exec, `.`/source or alias also runs (read, or guessed at), and
        the command's own (fixed, why) after it."""
        if name in SHELLS:
            reads_stdin = self.shell(args, nesting)
            if reads_stdin:
                fixed, why = False, why or "a shell reading commands from its input"
                for script in stdin:
                    self.line(script, nesting + 1)
        elif name == "exec" and not [w for w in args if not w.text.startswith("-")]:
            fixed, why = False, why or "exec with no command replaces the shell"
        elif head.text in (".", "source") and args and args[0].text in _STDIN_FILES:
            for script in stdin:  # `. /dev/stdin <<< '…'` runs the here-string
                self.guess(script, nesting)
        elif head.text == "alias":
            for w in args:  # what a later use of the alias would run, for deny rules
                self.guess(w.text.partition("=")[2], nesting)
        return fixed, why

    def wrapped(self, name: str, args: list[Word], nesting: int, stdin: list[str]) -> None:
        """The command a wrapper (`sudo`, `xargs`, `timeout`, ...) or `find -exec` runs."""
        if name in WRAPPERS:
            inner = WRAPPERS[name](args)
            if inner is not None:
                words_in, script = inner
                if script is not None:
                    self.line(script, nesting + 1)
                if words_in:
                    # xargs gives its command more words, read from its input.
                    added = f"{name} adds words read from its input" if name in _ADDS_WORDS else None
                    self.simple(words_in, nesting, stdin, added)
            else:
                self.add(" ".join(w.text for w in args), False, f"cannot tell what {name} runs")
        elif name == "find":
            for inner_words in _find_exec(args):
                self.simple(inner_words, nesting, [], None)

    def guess(self, line: str, nesting: int) -> None:
        """Parts of what a line that is not fixed text likely runs: not fixed either, but
        deny rules see them."""
        if not line.strip():
            return
        start = len(self.parts)
        self.line(line, nesting + 1)
        self.parts[start:] = [
            _unfixed(p, p.why or "a guess at text that is not fixed") for p in self.parts[start:]
        ]

    def shell(self, args: list[Word], nesting: int) -> bool:
        """sh/bash/…: parse the -c string. True when the shell reads commands from stdin."""
        command_mode = False
        i = 0
        while i < len(args):
            w = args[i]
            if not w.literal:
                if command_mode:
                    self.add(w.text, False, "the command string is not fixed text")
                    self.guess(w.alt or "", nesting)
                    return False
                return False  # a script named by an expansion: the part is already asked about
            t = w.text
            if t in ("--", "-"):
                i += 1
                break
            if t in ("--version", "--help"):
                return False
            if t.startswith("--"):
                i += 2 if t in ("--rcfile", "--init-file") else 1
                continue
            if t[:1] in "-+" and len(t) > 1:
                flags = t[1:]
                if "c" in flags:
                    command_mode = True
                i += 2 if flags[-1:] in ("o", "O") else 1
                continue
            break
        rest = args[i:]
        if command_mode:
            if rest and not rest[0].literal:
                self.add(rest[0].text, False, "the command string is not fixed text")
                self.guess(rest[0].alt or "", nesting)
            elif rest:
                self.line(rest[0].text, nesting + 1)
                return False
            return True
        if rest:
            if not rest[0].literal:
                self.add(rest[0].text, False, "the script is not fixed text")
            return False
        return True


def _snippet(src: bytes, node: Node) -> str:
    text = src[node.start_byte : min(node.end_byte, node.start_byte + 1000)].decode("utf-8", "replace")
    if _MARKED.get():
        text = text.replace(_BRACE_MARK, "{")
    return _collapse(text)[:500]


def _assigned(root: Node) -> dict[str, str]:
    """The variables a line sets to fixed text, each to the last such value."""
    out: dict[str, str] = {}
    stack = [(root, 0)]
    found: list[Node] = []
    while stack:
        node, depth = stack.pop()
        if node.type == "variable_assignment":
            found.append(node)
        elif depth < MAX_DEPTH:
            stack.extend((c, depth + 1) for c in node.children)
    for node in sorted(found, key=lambda n: n.start_byte):
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or name.type != "variable_name":
            continue
        word = _word([value]) if value is not None else Word("", True)
        if word.literal:
            out[_text(name)] = word.text
    return out


def _forms(words: list[Word]) -> tuple[str, ...]:
    """The part as bash likely runs it, when some word is not fixed text."""
    if all(w.alt is None for w in words):
        return ()
    return (_collapse(" ".join(w.text if w.alt is None else w.alt for w in words)),)


def _likely_line(words: list[Word]) -> str:
    import shlex

    return " ".join(shlex.quote(w.text) if w.alt is None else w.alt for w in words)


_ARITH_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _test_evaluates(node: Node) -> str | None:
    """`[[ x -eq 1 ]]` evaluates both sides as arithmetic, `[[ -v a[i] ]]` a subscript."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "test_operator":
            op = _text(n)
            if op == "-v":
                return "`-v` evaluates an array subscript as code"
            if op in _ARITH_TESTS and n.parent is not None:
                operands = [c for c in n.parent.named_children if c.type != "test_operator"]
                if any(not re.fullmatch(r"-?[0-9]+", _text(c).strip()) for c in operands):
                    return f"`{op}` in [[ ]] evaluates the text of a variable as code"
        stack.extend(n.children)
    return None


# `name[subscript]` where the subscript is not a plain number: evaluated as arithmetic.
_CODE_SUBSCRIPT = r"[A-Za-z_][A-Za-z0-9_]*\[(?![0-9@*]*\])"
# Builtins that assign the variables they name (an array element's subscript is arithmetic).
_ASSIGNING = frozenset({"read", "mapfile", "readarray", "getopts", "wait", "printf", "unset", "test", "["})


def _names_risk(keyword: str, names: list[str]) -> str | None:
    """declare/local/typeset/export/readonly/unset: an integer or nameref attribute makes
    later assignments evaluate text as code; so does a subscript in a name."""
    for name in names:
        if keyword != "unset" and re.fullmatch(r"[-+][A-Za-z]*[in][A-Za-z]*", name):
            return f"`{keyword} {name}` makes assignments evaluate their text as code"
        if re.match(_CODE_SUBSCRIPT, name):
            return f"the array subscript in `{_short(name)}` is evaluated as code"
        var = name.split("=", 1)[0]
        if var in RISKY_VARS or var.startswith(RISKY_PREFIXES):
            return f"setting {var} changes what runs"
    return None


def _builtin_risk(name: str, args: list[Word]) -> str | None:
    """A builtin that assigns variables it is given the names of (`read PATH`, `printf -v
    'a[$(…)]'`) or runs a callback (`mapfile -C`)."""
    if name not in _ASSIGNING:
        return None
    texts = [w.text for w in args]
    if name in ("mapfile", "readarray") and any(re.fullmatch(r"-[A-Za-z]*C.*", t) for t in texts):
        return f"`{name} -C` runs its callback as code"
    if name in ("test", "[") and "-v" not in texts:
        return None
    return _names_risk(
        name, [t for t in texts if not t.startswith("-")] if name != "printf" else _printf_v(texts)
    )


def _printf_v(texts: list[str]) -> list[str]:
    for i, t in enumerate(texts):
        if t == "-v" and i + 1 < len(texts):
            return [texts[i + 1]]
        if t.startswith("-v") and len(t) > 2:
            return [t[2:]]
    return []


def _writes_a_file(redirect: Node) -> bool:
    """An output redirection to a file: `>`, `>>`, `>|`, `&>`, `&>>`, `<>`, or `>&` with a
    word that is not a descriptor (`>&out` writes out and stderr to it)."""
    operators = [c.type for c in redirect.children if not c.is_named]
    destination = redirect.children_by_field_name("destination")
    if not destination or not any(">" in op for op in operators):
        return False
    if any(op in (">&", "<&") for op in operators):
        return not re.fullmatch(r"\d+-?|-", _text(destination[0]))
    return True


def _first_of(node: Node, kind: str) -> Node | None:
    for child in node.children:
        if child.type == kind:
            return child
    return None


def _descriptor_ends(redirects: list[Node]) -> set[int]:
    """Where a redirection without a descriptor starts with `<` or `>`: a number ending
    right there is its descriptor (the grammar reads the `0` of `0<&3` as a word)."""
    return {
        r.start_byte
        for r in redirects
        if r.type.endswith("_redirect")
        and r.children
        and r.children[0].type.startswith(("<", ">"))
        and r.child_by_field_name("descriptor") is None
    }


def _is_descriptor(node: Node, redirect_starts: set[int]) -> bool:
    return node.type == "number" and node.end_byte in redirect_starts and _text(node).isdigit()


def _word_nodes(node: Node) -> Iterator[Node]:
    for child in node.children[1:]:
        if child.is_named and not child.type.endswith("_redirect"):
            yield child


def _assignment(node: Node) -> str:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name is None:
        return _collapse(_text(node))
    return _text(name) + "=" + (_word([value]).text if value is not None else "")


def _is_continuation(gap: bytes) -> bool:
    return bool(gap) and re.fullmatch(rb"(?:\\\n)+", gap) is not None


def _risky_assignment(node: Node) -> str | None:
    name_node = node.child_by_field_name("name") or (node.named_children[0] if node.named_children else None)
    if name_node is None:
        return None
    name = _text(name_node)
    if name.split("[", 1)[0] != name:
        return None
    if name not in RISKY_VARS and not name.startswith(RISKY_PREFIXES):
        return None
    if name.endswith("PAGER"):
        value = node.child_by_field_name("value")
        word = _word([value]) if value is not None else Word("", True)
        if word.literal and word.text in HARMLESS_PAGERS:
            return None
    return f"setting {name} changes what runs"


def _stdin_scripts(node: Node) -> list[str]:
    """Heredoc bodies and here-strings given to a command (what a shell would run)."""
    out: list[str] = []
    for child in node.children:
        if child.type == "heredoc_redirect":
            body = _first_of(child, "heredoc_body")
            if body is not None:
                out.append(_text(body))
        elif child.type == "herestring_redirect" and child.named_children:
            out.append(_word([child.named_children[-1]]).text)
    return out


# -- wrappers ------------------------------------------------------------------------------
# Each takes the arguments after the wrapper's name and returns (the wrapped command's
# words, a string to parse as a command line) or None when the options cannot be read.

Wrapped = tuple[list[Word], str | None] | None


def _options(
    args: list[Word],
    with_arg: frozenset[str],
    *,
    attached: str = "",
    numeric: bool = False,
    assignments: bool = False,
) -> tuple[list[Word], dict[str, str]] | None:
    """Skip options (those in `with_arg` take the next word, or `--opt=value`), then
    NAME=value words when `assignments`. Returns the rest and the options seen."""
    seen: dict[str, str] = {}
    i = 0
    while i < len(args):
        w = args[i]
        t = w.text
        if not w.literal and t.startswith("-"):
            return None
        if t == "--":
            i += 1
            break
        if t == "-":  # env's old spelling of -i
            i += 1
            continue
        if t.startswith("-") and len(t) > 1:
            took = _option(args, i, with_arg, attached, numeric, seen)
            if took is None:
                return None
            i = took + 1
            continue
        if assignments and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", t):
            name = t.split("=", 1)[0]
            if name in RISKY_VARS or name.startswith(RISKY_PREFIXES):
                return None
            i += 1
            continue
        break
    return args[i:], seen


def _option(
    args: list[Word], i: int, with_arg: frozenset[str], attached: str, numeric: bool, seen: dict[str, str]
) -> int | None:
    """The option at args[i] into `seen`: the index of the last word it took, or None when
    its value is missing."""
    t = args[i].text
    if t.startswith("--"):  # longer than "--", which ends the options before this
        return _long_option(args, i, with_arg, seen)
    if numeric and t[1:].lstrip("-").isdigit():
        return i  # a number (`head -5`), where the command takes one
    return _short_flags(args, i, with_arg, attached, seen)


def _long_option(args: list[Word], i: int, with_arg: frozenset[str], seen: dict[str, str]) -> int | None:
    """`--opt`, `--opt=value` or `--opt value` at args[i] into `seen`: the index of the last
    word it took, or None when its value is missing."""
    key, eq, value = args[i].text.partition("=")
    if key in with_arg and not eq:
        if i + 1 >= len(args):
            return None
        value = args[i + 1].text
        i += 1
    seen[key] = value
    return i


def _short_flags(
    args: list[Word], i: int, with_arg: frozenset[str], attached: str, seen: dict[str, str]
) -> int | None:
    """The cluster of short flags at args[i] (`-xvf FILE`) into `seen`: the index of the
    last word it took, or None when an option's value is missing."""
    t = args[i].text
    for j in range(1, len(t)):
        flag = "-" + t[j]
        if flag in with_arg:
            value = t[j + 1 :]
            if not value:
                if i + 1 >= len(args):
                    return None
                value = args[i + 1].text
                i += 1
            seen[flag] = value
            break
        if t[j] in attached:
            seen[flag] = t[j + 1 :]
            break
        seen[flag] = ""
    return i


def _env(args: list[Word]) -> Wrapped:
    got = _options(
        args,
        frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "-P"}),
        assignments=True,
    )
    if got is None:
        return None
    rest, seen = got
    script = seen.get("-S", seen.get("--split-string"))
    return rest, script


# A wrapper's arguments → the command it runs (a string: an alias built at run time costs).
Unwrap: TypeAlias = "Callable[[list[Word]], Wrapped]"


def _simple_wrapper(with_arg: frozenset[str], **kw: Any) -> Unwrap:
    def unwrap(args: list[Word]) -> Wrapped:
        got = _options(args, with_arg, **kw)
        return None if got is None else (got[0], None)

    return unwrap


def _command(args: list[Word]) -> Wrapped:
    got = _options(args, frozenset())
    if got is None:
        return None
    rest, seen = got
    if "-v" in seen or "-V" in seen:
        return [], None  # only looks the name up
    return rest, None


def _timeout(args: list[Word]) -> Wrapped:
    got = _options(args, frozenset({"-s", "--signal", "-k", "--kill-after"}))
    if got is None:
        return None
    rest = got[0]
    return rest[1:], None  # the first word left is the duration


def _after_operand(with_arg: frozenset[str], script: tuple[str, ...] = ()) -> Unwrap:
    """Wrappers whose first operand is not the command (chroot DIR cmd, flock FILE cmd,
    taskset MASK cmd); options in `script` take a command string instead."""

    def unwrap(args: list[Word]) -> Wrapped:
        got = _options(args, with_arg | frozenset(script))
        if got is None:
            return None
        rest, seen = got
        for key in script:
            if key in seen:
                return [], seen[key]
        if len(rest) > 2 and rest[1].text in script:  # flock FILE -c 'command'
            return [], rest[2].text
        return rest[1:], None

    return unwrap


def _su(args: list[Word]) -> Wrapped:
    """su/runuser/sg [options] [user|group] [options] [-c command]: options may follow the
    user too (`su root -c 'rm -rf x'`); runuser's `-u user cmd` runs the words after it."""
    with_arg = frozenset({"-c", "--command", "-s", "--shell", "-g", "--group", "-G", "-w", "-u", "--user"})
    seen: dict[str, str] = {}
    rest = args
    while rest:
        got = _options(rest, with_arg)
        if got is None:
            return None
        rest, more = got
        seen.update(more)
        if "-c" in seen or "--command" in seen:
            return [], seen.get("-c", seen.get("--command"))
        if "-u" in seen or "--user" in seen:
            return rest, None
        rest = rest[1:]  # the user or group
    return [], None


def _script(args: list[Word]) -> Wrapped:
    """script [options] [-c command] [file]: only the string of -c runs."""
    got = _options(
        args,
        frozenset({"-c", "--command", "-E", "--echo", "-I", "--log-in", "-O", "--log-out"})
        | frozenset({"-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format"})
        | frozenset({"-o", "--output-limit"}),
    )
    if got is None:
        return None
    seen = got[1]
    return [], seen.get("-c", seen.get("--command"))


def _watch(args: list[Word]) -> Wrapped:
    got = _options(args, frozenset({"-n", "--interval", "-q", "--equexit"}))
    if got is None:
        return None
    rest, seen = got
    if "-x" in seen or "--exec" in seen:
        return rest, None
    return [], " ".join(w.text for w in rest) or None


_STDIN_FILES = frozenset({"/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_ADDS_WORDS = frozenset({"xargs", "parallel", "entr"})
_SUDO_ARGS = frozenset(
    {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U", "-R"}
    | {"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type"}
    | {"--command-timeout", "--other-user", "--chroot"}
)
_XARGS_ARGS = frozenset(
    {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s"}
    | {"--arg-file", "--delimiter", "--eof", "--max-lines", "--max-args", "--max-procs", "--max-chars"}
    | {"--process-slot-var", "--replace"}
)

WRAPPERS: dict[str, Unwrap] = {
    "env": _env,
    "command": _command,
    "builtin": _simple_wrapper(frozenset()),
    "exec": _simple_wrapper(frozenset({"-a"})),
    "nohup": _simple_wrapper(frozenset()),
    "time": _simple_wrapper(frozenset({"-f", "--format", "-o", "--output"})),
    "nice": _simple_wrapper(frozenset({"-n", "--adjustment"}), numeric=True),
    "timeout": _timeout,
    "xargs": _simple_wrapper(_XARGS_ARGS, attached="iel"),
    "sudo": _simple_wrapper(_SUDO_ARGS, assignments=True),
    "doas": _simple_wrapper(frozenset({"-u", "-C"})),
    "setsid": _simple_wrapper(frozenset()),
    "stdbuf": _simple_wrapper(frozenset({"-i", "-o", "-e", "--input", "--output", "--error"})),
    "ionice": _simple_wrapper(frozenset({"-c", "-n", "--class", "--classdata"})),
    "coproc": _simple_wrapper(frozenset()),
    "pkexec": _simple_wrapper(frozenset({"--user"})),
    "chroot": _after_operand(frozenset({"--userspec", "--groups"})),
    "flock": _after_operand(
        frozenset({"-w", "--timeout", "-E", "--conflict-exit-code"}), ("-c", "--command")
    ),
    "taskset": _after_operand(frozenset()),
    "su": _su,
    "watch": _watch,
    "script": _script,
    "busybox": _simple_wrapper(frozenset()),  # busybox rm -rf x: the applet is the command
    "unbuffer": _simple_wrapper(frozenset()),
    # Programs that run the command they are given, with the options that take a value.
    "runuser": _su,
    "sg": _su,
    "chrt": _after_operand(frozenset({"-T", "-P", "-D", "--sched-runtime", "--sched-period"})),
    "prlimit": _simple_wrapper(frozenset({"-p", "--pid"})),
    "unshare": _simple_wrapper(frozenset({"-S", "--setuid", "-G", "--setgid", "-R", "--root", "-w"})),
    "nsenter": _simple_wrapper(frozenset({"-t", "--target", "-S", "--setuid", "-G", "--setgid"})),
    "strace": _simple_wrapper(
        frozenset({"-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X"})
    ),
    "ltrace": _simple_wrapper(
        frozenset({"-e", "-o", "-p", "-s", "-u", "-n", "-a", "-A", "-D", "-F", "-l", "-w"})
    ),
    "valgrind": _simple_wrapper(frozenset()),
    "fakeroot": _simple_wrapper(frozenset({"-l", "--lib", "-s", "-i", "--faked", "-b"})),
    "faketime": _after_operand(frozenset({"-m", "-p", "-f"})),
    "firejail": _simple_wrapper(frozenset()),
    "systemd-run": _simple_wrapper(
        frozenset({"-p", "--property", "-u", "--unit", "-E", "--setenv", "-M", "--machine", "-H", "--host"})
    ),
    "xvfb-run": _simple_wrapper(
        frozenset({"-n", "--server-num", "-s", "--server-args", "-e", "-f", "-p", "-w"})
    ),
    "catchsegv": _simple_wrapper(frozenset()),
    "dbus-launch": _simple_wrapper(frozenset({"--config-file"})),
    "rlwrap": _simple_wrapper(frozenset({"-a", "-f", "-H", "-l", "-p", "-P", "-S", "-z", "-e", "-C"})),
    "torsocks": _simple_wrapper(frozenset({"-u", "-p", "-a", "-P", "-i", "-d"})),
    "proxychains": _simple_wrapper(frozenset({"-f"})),
    "proxychains4": _simple_wrapper(frozenset({"-f"})),
    "tsocks": _simple_wrapper(frozenset()),
    "caffeinate": _simple_wrapper(frozenset({"-t", "-w"})),
    "entr": _simple_wrapper(frozenset()),  # runs its command for file names read from its input
    "parallel": _simple_wrapper(frozenset({"-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file"})),
}


def _find_exec(args: list[Word]) -> Iterator[list[Word]]:
    """The commands of find's -exec, -execdir, -ok and -okdir (up to `;` or `+`)."""
    i = 0
    while i < len(args):
        if args[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            if j > i + 1:
                yield args[i + 1 : j]
            i = j
        i += 1


# -- what the grammar misreads -------------------------------------------------------------

# What may follow `coproc` or `time` as a compound command (the grammar reads it as words).
_COMPOUND_OPENERS = frozenset({"{", "(", "((", "[[", "if", "while", "until", "for", "case", "select"})
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"


def _reshape(src: bytes) -> tuple[bytes, bool]:
    """The line as tree-sitter-bash should read it, at the same byte offsets: `coproc
    [NAME]` and `time [-p]` before a compound command are blanked (bash runs the compound
    command; the grammar reads `coproc { rm -rf v; }` as the words `coproc { rm -rf v`),
    and a `{` the grammar took for a group although a word goes on right after it
    (`{rm,-rf,v}`, a brace expansion) is marked, to be read back as `{` (`_text`).
    Returns the bytes and whether a `{` was marked."""
    marked = False
    for _ in range(MAX_NESTING):
        root = _parser().parse(src).root_node
        blank: list[tuple[int, int]] = []
        marks: list[int] = []
        stack = [(root, 0)]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                continue
            if node.type == "command":
                blank.extend(_keyword_prefix(node))
            elif node.type == "negated_command" and _opens_compound(node):
                # `! { rm -rf v; }`: the grammar negates only simple commands and reads `{`
                # as a word; the `!` changes the status, not what runs.
                blank.append((node.children[0].start_byte, node.children[0].end_byte))
            elif (
                node.type == "{"
                and node.parent is not None
                and node.parent.type == "ERROR"
                and src[node.end_byte : node.end_byte + 1] not in (b"", b" ", b"\t", b"\n", b";")
                and _BRACE_MARK.encode() not in src
            ):
                marks.append(node.start_byte)
            stack.extend((c, depth + 1) for c in node.children)
        if not blank and not marks:
            break
        buf = bytearray(src)
        for start, end in blank:
            buf[start:end] = b" " * (end - start)
        for at in marks:
            buf[at : at + 1] = _BRACE_MARK.encode()
        marked = marked or bool(marks)
        src = bytes(buf)
    return src, marked


def _opens_compound(node: Node) -> bool:
    inner = node.named_children[0] if node.named_children else None
    if inner is None or inner.type != "command" or not inner.named_children:
        return False
    name = inner.named_children[0]
    return name.type == "command_name" and _text(name) in _COMPOUND_OPENERS


def _keyword_prefix(node: Node) -> list[tuple[int, int]]:
    """The byte spans of `coproc [NAME]` or `time [-p]` when a compound command follows."""
    children = [c for c in node.children if c.is_named]
    if not children or children[0].type != "command_name":
        return []
    keyword = _text(children[0])
    if keyword not in ("coproc", "time"):
        return []
    rest = children[1:]
    spans = [(children[0].start_byte, children[0].end_byte)]
    words = [_text(c).strip() for c in rest]
    i = 0
    if keyword == "time":
        while i < len(words) and words[i] in ("-p", "--"):
            spans.append((rest[i].start_byte, rest[i].end_byte))
            i += 1
    elif (
        len(words) > i + 1
        and re.fullmatch(_NAME, words[i])
        and (words[i + 1] in _COMPOUND_OPENERS or words[i + 1][:1] in "({")
    ):
        spans.append((rest[i].start_byte, rest[i].end_byte))  # coproc NAME { …; }
        i += 1
    if i < len(words) and (words[i] in _COMPOUND_OPENERS or words[i][:1] in "({"):
        return spans
    return []


# -- what evaluates a variable's text as code ----------------------------------------------

_ARITH_NAME = r"[A-Za-z_]"


def _evaluates(node: Node) -> tuple[str, str] | None:
    """Where and why bash would evaluate text the line does not show as code at `node`.
    Arithmetic reads a variable's value as an expression, and an array subscript in it
    runs `$(…)`: `x='a[$(touch p)]'; ls $((x))` runs touch. So do `${!x}` (the variable
    x names, with its subscript), `${x@P}` (prompt expansion) and `${y[x]}`."""
    kind = node.type
    if kind in ("arithmetic_expansion", "command_substitution", "compound_statement"):
        text = _text(node)
        if kind == "command_substitution" and not text.startswith("$(("):
            return None  # `$((x))` inside a heredoc is read as a substitution of `(x)`
        if kind == "compound_statement" and not text.startswith("(("):
            return None
        inner = text.lstrip("$").lstrip("([").rstrip(")]")
        if re.search(_ARITH_NAME, inner):
            return text, "arithmetic evaluates the text of a variable as code"
        return None
    if kind == "c_style_for_statement":
        header = _text(node).split("))", 1)[0] + "))"
        if re.search(_ARITH_NAME, header.split("((", 1)[-1]):
            return header, "arithmetic evaluates the text of a variable as code"
        return None
    if kind == "subscript":
        text = "".join(_text(c) for c in node.named_children[1:]).strip()
        if not re.fullmatch(r"[0-9@*]*", text):
            return _text(
                node
            ), "an array subscript is arithmetic: it evaluates the text of a variable as code"
        return None
    if kind == "expansion":
        types = [c.type for c in node.children]
        text = _text(node)
        if len(types) > 1 and types[1] == "!":
            return text, "`${!x}` reads the variable x names, evaluating its text as code"
        if "@" in types and text.endswith("P}"):
            return text, "`${x@P}` expands the text of x as a prompt, which runs commands"
        if ":" in types and re.search(_ARITH_NAME, text.split(":", 1)[1]):
            return text, "a substring offset is arithmetic: it evaluates the text of a variable as code"
    return None


def _short(text: str) -> str:
    text = _collapse(text)
    return text if len(text) <= 60 else text[:57] + "…"
