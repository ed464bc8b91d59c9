"""The original's text and encoding helpers: uji.regex, uji.glob, uji.fuzzy, uji.markdown,
uji.width, uji.base64, uji.toml, uji.sha256, uji.random and uji.diff.

Binary data (what base64, sha256 and random take or give) cannot cross from Lua as a
Python str, so text.lua hands it over as hex; Python hands bytes back, which Lua receives
as they are. Libraries do the work where one exists: wcwidth for terminal columns, tomllib
and tomli-w for TOML, markdown-it (Textual's own parser) for Markdown, difflib for diffs;
each is imported on the first call.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from uji.lua.runtime import Api, ApiError

if TYPE_CHECKING:
    from typing import Literal, NotRequired, TypedDict

    from uji.lua.host import LuaHost

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class DiffLine(TypedDict):
        """A line of a hunk (`uji.diff`): its kind, its line numbers (from 1), its parts."""

        kind: Literal["context", "removed", "added"]
        old: NotRequired[int]
        new: NotRequired[int]
        parts: list[DiffPart]

    class DiffPart(TypedDict):
        text: str
        changed: bool


# The functions that need no Lua state: strings and bytes in, strings and bytes out.


def regex_new(pattern: str) -> Any:
    try:
        return re.compile(pattern)
    except re.error as e:
        return None, f"invalid regex {pattern!r}: {e}"


def glob_new(pattern: str, separator: bool) -> Any:
    from uji.tools.policy import glob_to_regex

    try:
        return re.compile(glob_to_regex(pattern, separator))
    except (re.error, ValueError) as e:
        return None, f"invalid glob {pattern!r}: {e}"


def matcher_find(matcher: re.Pattern[str], text: str, anchored: bool) -> Any:
    m = matcher.fullmatch(text) if anchored else matcher.search(text)
    if m is None:
        return None
    # Byte positions, from 1, the end included: what string.sub takes.
    start = len(text[: m.start()].encode()) + 1
    return start, start + len(m.group(0).encode()) - 1


def width(text: str) -> int:
    return columns(text)


def base64_encode(hex_data: str, url: bool, pad: bool) -> str:
    import base64

    data = bytes.fromhex(hex_data)
    out = (base64.urlsafe_b64encode if url else base64.b64encode)(data).decode("ascii")
    return out if pad else out.rstrip("=")


def base64_decode(text: str, url: bool) -> Any:
    import base64
    import binascii

    body = re.sub(r"\s+", "", text)
    body += "=" * (-len(body) % 4)
    try:
        if url:
            return base64.urlsafe_b64decode(body.encode("ascii"))
        return base64.b64decode(body.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError) as e:
        return None, f"invalid base64: {e}"


def sha256(hex_data: str) -> bytes:
    import hashlib

    return hashlib.sha256(bytes.fromhex(hex_data)).digest()


def random_bytes(n: float) -> bytes:
    import secrets

    return secrets.token_bytes(int(n))


def install(host: LuaHost) -> Api:
    def lua(value: Any) -> Any:
        return host.lua.convert.to_lua(value, json_null=False)

    def fuzzy(query: str, items: Any) -> Any:
        texts = [str(v) for v in host.lua.convert.to_python(items)]
        return lua(fuzzy_rank(query, texts))

    def markdown(source: str) -> Any:
        return lua(markdown_events(source))

    def toml_encode(value: Any) -> str:
        import tomli_w

        data = host.lua.convert.to_python(value, strict=True)
        if not isinstance(data, dict):
            raise ApiError("uji.toml.encode expects a table of keys")
        try:
            return tomli_w.dumps(data)
        except (TypeError, ValueError) as e:
            raise ApiError(f"uji.toml.encode: {e}") from None

    def toml_decode(text: str) -> Any:
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ApiError(f"uji.toml.decode: invalid TOML: {e}") from None
        return lua(_plain(data))

    def diff(old: str, new: str, path: str | None) -> Any:
        return lua({"path": path, "changes": diff_hunks(old, new)})

    return {
        "regex_new": regex_new,
        "glob_new": glob_new,
        "matcher_find": matcher_find,
        "fuzzy": fuzzy,
        "markdown": markdown,
        "width": width,
        "base64_encode": base64_encode,
        "base64_decode": base64_decode,
        "toml_encode": toml_encode,
        "toml_decode": toml_decode,
        "sha256": sha256,
        "random_bytes": random_bytes,
        "diff": diff,
    }


# -- fuzzy -------------------------------------------------------------------------------


def fuzzy_rank(query: str, items: list[str]) -> list[int]:
    """Positions (from 1) of the items holding the query's characters in order (any
    case), best first: fewer gaps, then an earlier first match, then a shorter item."""
    if not query:
        return list(range(1, len(items) + 1))
    q = query.lower()
    scored: list[tuple[int, int, int, int]] = []
    for index, item in enumerate(items, 1):
        low = item.lower()
        pos, first, gaps, last = 0, -1, 0, -1
        for ch in q:
            found = low.find(ch, pos)
            if found < 0:
                break
            if first < 0:
                first = found
            elif found != last + 1:
                gaps += 1
            last, pos = found, found + 1
        else:
            scored.append((gaps, first, len(item), index))
    return [index for *_, index in sorted(scored)]


# -- width -------------------------------------------------------------------------------


def columns(text: str) -> int:
    """Terminal columns: wcwidth's, with control characters counted as none."""
    from wcwidth import wcswidth, wcwidth

    total = wcswidth(text)
    if total >= 0:
        return int(total)
    return sum(max(0, wcwidth(ch)) for ch in text)


# -- markdown ----------------------------------------------------------------------------


def markdown_events(source: str) -> list[list[Any]]:
    """Markdown as a flat list of events, each `{kind, details..., start, end}` with byte
    positions from 1 (inline events carry their block's): start/end of a tag, text,
    code, html, math (TeX, display?), break (hard?), rule, task (checked?)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.tasklists import tasklists_plugin

    md = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    md.use(dollarmath_plugin, double_inline=True).use(tasklists_plugin)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line.encode()))

    def span(mapped: list[int] | None) -> tuple[int, int]:
        if not mapped:
            return 1, len(source.encode())
        return starts[mapped[0]] + 1, starts[min(mapped[1], len(starts) - 1)]

    events: list[list[Any]] = []
    block = (1, len(source.encode()))
    for token in md.parse(source):
        if token.map:
            block = span(token.map)
        events.extend(_events(token, block))
    return events


def _events(token: Any, at: tuple[int, int]) -> list[list[Any]]:
    kind: str = token.type
    if kind == "inline":
        out: list[list[Any]] = []
        for child in token.children or []:
            out.extend(_events(child, at))
        return out
    if kind.endswith("_open"):
        return [["start", token.tag, *at]]
    if kind.endswith("_close"):
        return [["end", token.tag, *at]]
    if kind == "text":
        return [["text", token.content, *at]] if token.content else []
    if kind == "code_inline":
        return [["code", token.content, *at]]
    if kind in ("fence", "code_block"):
        info = token.info.strip() if kind == "fence" else ""
        return [["start", "codeblock", info, *at], ["text", token.content, *at], ["end", "codeblock", *at]]
    if kind == "html_inline" and "task-list-item-checkbox" in token.content:
        return [["task", "checked" in token.content, *at]]  # the tasklists plugin's box
    if kind in ("html_inline", "html_block"):
        return [["html", token.content, *at]]
    if kind in ("math_inline", "math_inline_double"):
        return [["math", token.content, kind == "math_inline_double", *at]]
    if kind in ("math_block", "math_block_label"):
        return [["math", token.content, True, *at]]
    if kind in ("softbreak", "hardbreak"):
        return [["break", kind == "hardbreak", *at]]
    if kind == "hr":
        return [["rule", *at]]
    if kind == "image":
        return [["text", token.content, *at]]
    return []


# -- toml --------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """TOML's dates and times become their text."""
    import datetime

    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    return value


# -- diff --------------------------------------------------------------------------------

DIFF_CONTEXT = 3  # the theme's limits.diff_context


def diff_hunks(old: str, new: str, context: int = DIFF_CONTEXT) -> list[list[DiffLine]]:
    """Hunks of lines `{kind, old?, new?, parts}`: kind context|removed|added, line numbers
    from 1, parts `{text, changed}` marking what changed within a replaced line."""
    import difflib

    a, b = old.splitlines(), new.splitlines()
    hunks: list[list[DiffLine]] = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        hunk: list[DiffLine] = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for k in range(i2 - i1):
                    line = a[i1 + k]
                    hunk.append(
                        {
                            "kind": "context",
                            "old": i1 + k + 1,
                            "new": j1 + k + 1,
                            "parts": _as_parts([[line, False]]),
                        }
                    )
                continue
            removed, added = a[i1:i2], b[j1:j2]
            pairs = min(len(removed), len(added)) if tag == "replace" else 0
            for k, line in enumerate(removed):
                parts = _parts(line, added[k], 0) if k < pairs else [[line, False]]
                hunk.append({"kind": "removed", "old": i1 + k + 1, "parts": _as_parts(parts)})
            for k, line in enumerate(added):
                parts = _parts(removed[k], line, 1) if k < pairs else [[line, False]]
                hunk.append({"kind": "added", "new": j1 + k + 1, "parts": _as_parts(parts)})
        hunks.append(hunk)
    return hunks


def _as_parts(pairs: list[list[Any]]) -> list[DiffPart]:
    return [{"text": text, "changed": changed} for text, changed in pairs]


def _parts(old: str, new: str, side: int) -> list[list[Any]]:
    """One side of a replaced line cut into unchanged and changed runs."""
    import difflib

    line = (old, new)[side]
    out: list[list[Any]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        lo, hi = (i1, i2) if side == 0 else (j1, j2)
        if hi > lo:
            out.append([line[lo:hi], tag != "equal"])
    return out or [["", False]]
