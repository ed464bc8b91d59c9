"""What a run_command line would run, read with bash's grammar (SPEC §3).

`parse_command(line)` returns every simple command the line could run, as a `Part` in
normal form (leading assignments and redirections dropped, quotes and escapes removed,
continuations joined, words separated by one space), with `fixed` telling whether its
command word is literal text. The line is parsed with tree-sitter-bash, the grammar of the
shell run_command runs it in, so what is decided is what runs.

Parts come from lists, pipelines, subshells, brace groups, function bodies, if/for/while/
until/case bodies, `[[ ]]` and `(( ))`, command and process substitutions, unquoted heredoc
bodies, the string of `sh -c` (and bash, dash, zsh, ksh, `su -c`, `script -c`, `watch`, `env -S`, `eval`,
`trap`), the command of `find -exec`, and the command wrapped by env, command, exec, nohup,
time, nice, timeout, xargs, sudo, doas, setsid, stdbuf, ionice, builtin, coproc, pkexec,
chroot, flock, taskset, busybox and unbuffer.

A part is not fixed when its command word is not literal text (`$X`, `$(…)`, a glob or a
brace expansion), when it is `eval`, `source`, `.`, `alias` or `trap`, `exec` with no
command, a shell reading its commands from stdin, a prefix assignment to a variable that
changes what runs (PATH, LD_PRELOAD, BASH_ENV, …), or when anything is past the limits
below. A line the parser cannot read is one not-fixed part for the whole line, plus
whatever parts could still be read from it (also not fixed).

Pure: nothing here runs anything. tree-sitter is imported on the first call only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

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
    }
)
RISKY_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_")
HARMLESS_PAGERS = frozenset({"", "cat", "less", "more", "true", "less -R", "less -FRX"})


class Part(Record):
    """One simple command the line could run, in normal form."""

    text: str
    fixed: bool = True
    why: str | None = None  # why it is not fixed


def parse_command(line: str) -> list[Part]:
    """Every simple command `line` could run, in the order they appear."""
    walker = _Walker()
    walker.line(line, 0)
    return walker.result()


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
    text: str  # quotes and escapes removed
    literal: bool  # no expansion or substitution
    pattern: bool = False  # an unquoted glob or brace expansion


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


def _unescape_unquoted(raw: str) -> tuple[str, str]:
    """Unquoted text: (value, shape), where shape masks escaped characters with `_` so
    that only unquoted glob and brace characters remain visible."""
    if "\\" not in raw:
        return raw, raw
    value: list[str] = []
    shape: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\" and i + 1 < n:
            if raw[i + 1] != "\n":
                value.append(raw[i + 1])
                shape.append("_")
            i += 2
            continue
        value.append(c)
        shape.append(c)
        i += 1
    return "".join(value), "".join(shape)


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


_GLOB = re.compile(r"[*?]|\[.*\]|\{[^{}]*(,|\.\.)[^{}]*\}", re.S)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _word(nodes: list[Node]) -> Word:
    """One shell word made of adjacent nodes (several when a continuation split it)."""
    values: list[str] = []
    shapes: list[str] = []
    literal = True
    for node in nodes:
        lit = _piece(node, values, shapes)
        literal = literal and lit
    shape = "".join(shapes)
    return Word("".join(values), literal, bool(_GLOB.search(shape)))


def _piece(node: Node, values: list[str], shapes: list[str]) -> bool:
    kind = node.type
    raw = _text(node)
    if kind in ("word", "number"):
        value, shape = _unescape_unquoted(raw)
        values.append(value)
        shapes.append(shape)
        return True
    if kind == "raw_string":
        values.append(raw[1:-1])
        shapes.append("_")
        return True
    if kind == "ansi_c_string":
        values.append(_ansi_c(raw[2:-1]))
        shapes.append("_")
        return True
    if kind == "translated_string":
        literal = True
        for child in node.named_children:
            literal = _piece(child, values, shapes) and literal
        return literal
    if kind == "string":
        return _string(node, raw, values, shapes)
    if kind == "concatenation":
        literal = True
        for child in node.children:
            if child.is_named:
                literal = _piece(child, values, shapes) and literal
            else:  # an anonymous token inside a word, such as a `$` before "…"
                value, shape = _unescape_unquoted(_text(child))
                if value != "$":
                    values.append(value)
                    shapes.append(shape)
        return literal
    # An expansion, substitution or anything else: kept as written, not literal.
    values.append(raw.replace("\\\n", "") if "\\\n" in raw else raw)
    shapes.append("_")
    return False


def _string(node: Node, raw: str, values: list[str], shapes: list[str]) -> bool:
    literal = True
    base = node.start_byte
    data = node.text or b""
    pos = 1
    out: list[str] = []
    for child in node.named_children:
        start, end = child.start_byte - base, child.end_byte - base
        out.append(_unescape_double(data[pos:start].decode("utf-8", "replace")))
        if child.type == "string_content":
            out.append(_unescape_double(_text(child)))
        else:
            out.append(re.sub(r"\\\n", "", _text(child)))
            literal = False
        pos = end
    out.append(_unescape_double(data[pos : max(pos, len(data) - 1)].decode("utf-8", "replace")))
    value = "".join(out)
    values.append(value)
    shapes.append("_")
    return literal


# -- the walk ------------------------------------------------------------------------------

_COMMAND_NODES = frozenset({"command", "declaration_command", "unset_command", "test_command"})
# Leaves whose text is data, never commands.
_DATA_LEAVES = frozenset({"raw_string", "ansi_c_string", "comment", "heredoc_start", "heredoc_end"})
_WS = re.compile(r"\s+")


def _collapse(text: str) -> str:
    return _WS.sub(" ", text.replace("\\\n", "")).strip()


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


class _Walker:
    def __init__(self) -> None:
        self.parts: list[Part] = []
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

    def add(self, text: str, fixed: bool = True, why: str | None = None) -> None:
        if self.full:
            return
        if len(self.parts) >= MAX_PARTS:
            self.full = True
            self.parts.append(Part(f"(more than {MAX_PARTS} commands)", False, "too many commands"))
            return
        self.parts.append(Part(text, fixed, why if not fixed else None))

    # A whole line (also the string of sh -c, eval, a heredoc fed to a shell…).
    def line(self, line: str, nesting: int) -> None:
        if nesting > MAX_NESTING:
            self.add(_collapse(line)[:500], False, "commands nested too deeply")
            return
        if len(line) > MAX_CHARS:
            self.add(_collapse(line[:500]) + " …", False, f"longer than {MAX_CHARS // 1024} KB")
            return
        src = line.encode("utf-8", "surrogatepass")
        tree = _parser().parse(src)
        root = tree.root_node
        if root.has_error:
            start = len(self.parts)
            self.walk(root, src, nesting)
            # What could be read still counts for deny rules, but nothing here is fixed.
            self.parts[start:] = [
                Part(p.text, False, "the shell cannot parse the line") for p in self.parts[start:]
            ]
            self.parts.insert(start, Part(_collapse(line), False, "the shell cannot parse the line"))
            return
        self.walk(root, src, nesting)

    def walk(self, root: Node, src: bytes, nesting: int) -> None:
        stack: list[tuple[Node, int]] = [(root, 0)]
        stdin_scripts: dict[int, list[str]] = {}
        while stack:
            node, depth = stack.pop()
            if depth > MAX_DEPTH:
                self.add(_snippet(src, node), False, "nested too deeply")
                continue
            kind = node.type
            if kind == "redirected_statement":
                body = node.child_by_field_name("body")
                if body is not None and body.type == "command":
                    stdin_scripts[body.id] = _stdin_scripts(node)
            elif kind in _COMMAND_NODES:
                self.command_node(node, src, nesting, stdin_scripts.get(node.id, []))
            elif kind == "variable_assignment" and node.parent is not None:
                if node.parent.type not in ("command", "declaration_command"):
                    risk = _risky_assignment(node)
                    if risk:
                        self.add(_collapse(_text(node)), False, risk)
            elif (
                kind == "file_redirect"
                and not _is_bash()
                and any(c.type in ("&>", "&>>") for c in node.children)
            ):
                # Without bash, sh reads `&>` as `&` then `>`: what runs is not what was parsed.
                self.add(_collapse(_text(node.parent or node)), False, "`&>` means something else to sh")
            elif kind == "heredoc_redirect":
                start = node.child_by_field_name("start") or _first_of(node, "heredoc_start")
                if start is not None and re.search(r"['\"\\]", _text(start)):
                    # A quoted delimiter: the body is data, nothing in it runs.
                    stack.extend((c, depth + 1) for c in reversed(node.children) if c.type != "heredoc_body")
                    continue
            if node.child_count == 0:
                if node.is_named and kind not in _DATA_LEAVES:
                    self.leaf(node, nesting)
                continue
            stack.extend((c, depth + 1) for c in reversed(node.children))

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
        self.parts[start:] = [Part(p.text, False, "a substitution inside a word") for p in self.parts[start:]]

    # One command node.
    def command_node(self, node: Node, src: bytes, nesting: int, stdin: list[str]) -> None:
        kind = node.type
        if kind == "test_command":
            self.add(_collapse(_text(node)))
            return
        if kind in ("declaration_command", "unset_command"):
            names = [
                _assignment(c) if c.type == "variable_assignment" else _word([c]).text
                for c in _word_nodes(node)
            ]
            keyword = node.children[0].type if node.children else kind
            risks = [
                r
                for c in node.named_children
                if c.type == "variable_assignment" and (r := _risky_assignment(c))
            ]
            if risks:
                self.add(" ".join([keyword, *names]), False, risks[0])
            else:
                self.add(" ".join([keyword, *names]))
            return
        risk: str | None = None
        stdin = [*stdin, *_stdin_scripts(node)]
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
            elif (
                child.is_named and not ctype.endswith("_redirect") and not _is_descriptor(child, descriptors)
            ):
                pieces.append(child)
        for child in redirects:
            if child.type == "file_redirect":
                # The grammar puts words after a redirect's target into the redirect; the
                # shell gives them to the command (`true &>/dev/null rm -rf x`).
                pieces.extend(child.children_by_field_name("destination")[1:])
        pieces.sort(key=lambda n: n.start_byte)
        groups: list[list[Node]] = []
        last_end = -1
        for piece in pieces:
            if groups and _is_continuation(src[last_end : piece.start_byte]):
                groups[-1].append(piece)  # `r\⏎m` is one word to the shell
            else:
                groups.append([piece])
            last_end = piece.end_byte
        words = [_word(g) for g in groups]
        if not words:
            if risk:
                self.add(_collapse(_text(node)), False, risk)
            return
        self.simple(words, nesting, stdin, risk)

    def simple(self, words: list[Word], nesting: int, stdin: list[str], risk: str | None = None) -> None:
        """A simple command as words: its part, then what it wraps or runs."""
        head = words[0]
        text = " ".join(w.text for w in words)
        if not head.literal or head.pattern:
            self.add(text, False, "the command word is not fixed text")
            return
        name = head.text.rsplit("/", 1)[-1]
        why = risk or NOT_FIXED.get(head.text)
        fixed = why is None
        args = words[1:]
        if name in SHELLS:
            reads_stdin = self.shell(args, nesting)
            if reads_stdin:
                fixed, why = False, why or "a shell reading commands from its input"
                for script in stdin:
                    self.line(script, nesting + 1)
        elif head.text in ("eval", "trap") and args:
            script_words = args if head.text == "eval" else args[:1]
            if all(w.literal for w in script_words):
                self.add(text, fixed, why)
                self.line(" ".join(w.text for w in script_words), nesting + 1)
                return
        elif name == "exec" and not [w for w in args if not w.text.startswith("-")]:
            fixed, why = False, why or "exec with no command replaces the shell"
        self.add(text, fixed, why)
        if name in WRAPPERS:
            inner = WRAPPERS[name](args)
            if inner is not None:
                words_in, script = inner
                if script is not None:
                    self.line(script, nesting + 1)
                if words_in:
                    self.simple(words_in, nesting, stdin, None)
            else:
                self.add(" ".join(w.text for w in args), False, f"cannot tell what {name} runs")
        elif name == "find":
            for inner_words in _find_exec(args):
                self.simple(inner_words, nesting, [], None)

    def shell(self, args: list[Word], nesting: int) -> bool:
        """sh/bash/…: parse the -c string. True when the shell reads commands from stdin."""
        command_mode = False
        i = 0
        while i < len(args):
            w = args[i]
            if not w.literal:
                if command_mode:
                    self.add(w.text, False, "the command string is not fixed text")
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
    return _collapse(
        src[node.start_byte : min(node.end_byte, node.start_byte + 1000)].decode("utf-8", "replace")
    )[:500]


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
        if t.startswith("--") and len(t) > 2:
            key, eq, value = t.partition("=")
            if key in with_arg and not eq:
                if i + 1 >= len(args):
                    return None
                value = args[i + 1].text
                i += 1
            seen[key] = value
            i += 1
            continue
        if t.startswith("-") and len(t) > 1:
            if numeric and t[1:].lstrip("-").isdigit():
                i += 1
                continue
            j = 1
            while j < len(t):
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
                j += 1
            i += 1
            continue
        if assignments and re.match(r"[A-Za-z_][A-Za-z0-9_]*=", t):
            name = t.split("=", 1)[0]
            if name in RISKY_VARS or name.startswith(RISKY_PREFIXES):
                return None
            i += 1
            continue
        break
    return args[i:], seen


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


def _simple_wrapper(with_arg: frozenset[str], **kw: Any) -> Any:
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


def _after_operand(with_arg: frozenset[str], script: tuple[str, ...] = ()) -> Any:
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
    got = _options(args, frozenset({"-c", "--command", "-s", "--shell", "-g", "--group", "-G", "-w"}))
    if got is None:
        return None
    seen = got[1]
    script = seen.get("-c", seen.get("--command"))
    return [], script


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

WRAPPERS: dict[str, Any] = {
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
