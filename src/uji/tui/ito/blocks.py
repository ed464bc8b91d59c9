"""An answer's markdown with its replaced blocks drawn by their views (reference §6:
Paragraph, Heading, CodeBlock, MathBlock, TableRow, Rule), and the streamed answer by
Partial.

Only when one of them is replaced: the answer is split into its top-level blocks
(markdown-it, the parser uji draws with, and `$$` math); a replaced block is drawn by its
view, the others as uji draws markdown (runs of them as one piece, so lists and quotes
keep their look). A view that fails draws that block as uji does, and is logged.

Imported with the first answer drawn this way (markdown-it)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from rich.cells import cell_len
from rich.text import Text

from uji.tui import render
from uji.tui.ito.replaced import MARKDOWN_VIEWS, Drawn, Props, ViewName, Views, joined

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment

# (view, the block's source, width) → the view's rows, None when it failed
Cache = dict[tuple[str, str, int], list[Text] | None]
COLUMN_GAP = 2  # cells between a table's columns (the default TableRow's spacing)


class Block(NamedTuple):
    view: ViewName | None  # None: drawn as uji draws markdown
    source: str
    props: Props
    rows: tuple[tuple[str, ...], ...] = ()  # a table's cells, the header row first


@cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    from uji.tui.mdparse import bounded

    return bounded(MarkdownIt().enable("strikethrough").enable("table").use(dollarmath_plugin))


def _plain(token: Token | None) -> str:
    """An inline token's text without its markup."""
    out: list[str] = []
    for child in (token.children or []) if token is not None else []:
        if child.type in ("softbreak", "hardbreak"):
            out.append("\n" if child.type == "hardbreak" else " ")
        elif child.type in ("text", "code_inline", "math_inline", "html_inline"):
            out.append(child.content)
    return "".join(out)


def split(text: str) -> list[Block]:
    """The top-level blocks of `text`, in order."""
    tokens = _parser().parse(text)
    lines = text.splitlines(keepends=True)
    out: list[Block] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        end = i
        if tok.nesting == 1:  # to its closing token at the same level
            while end < len(tokens) and not (tokens[end].nesting == -1 and tokens[end].level == tok.level):
                end += 1
        inner = tokens[i : end + 1]
        start_line, end_line = tok.map or (0, 0)
        out.append(_block(tok, inner, "".join(lines[start_line:end_line]).rstrip("\n")))
        i = end + 1
    return out


def _block(tok: Token, inner: list[Token], source: str) -> Block:
    kind = tok.type
    if kind == "paragraph_open":
        return Block("Paragraph", source, {"type": "paragraph", "text": _plain(inner[1]), "markdown": source})
    if kind == "heading_open":
        return Block(
            "Heading", source, {"type": "heading", "level": int(tok.tag[1:]), "text": _plain(inner[1])}
        )
    if kind in ("fence", "code_block"):
        language = tok.info.strip().split()[0] if tok.info.strip() else ""
        return Block("CodeBlock", source, {"type": "code", "language": language, "text": tok.content})
    if kind == "math_block":
        return Block("MathBlock", source, {"type": "math", "text": tok.content.strip("\n")})
    if kind == "hr":
        return Block("Rule", source, {"type": "rule"})
    if kind == "table_open":
        rows: list[tuple[str, ...]] = []
        cells: list[str] = []
        for t in inner:
            if t.type == "tr_open":
                cells = []
            elif t.type == "inline":
                cells.append(_plain(t))
            elif t.type == "tr_close":
                rows.append(tuple(cells))
        return Block("TableRow", source, {"type": "table_row"}, tuple(rows))
    return Block(None, source, {})


def column_widths(rows: tuple[tuple[str, ...], ...], width: int) -> list[int]:
    """Each column's width: its widest cell, all narrowed alike when they do not fit."""
    count = max((len(r) for r in rows), default=0)
    natural = [max((cell_len(r[c]) for r in rows if c < len(r)), default=1) or 1 for c in range(count)]
    room = max(count, width - COLUMN_GAP * (count - 1))
    total = sum(natural)
    if total <= room:
        return natural
    return [max(1, n * room // total) for n in natural]


class Answer:
    """An answer's markdown, its replaced blocks drawn by their views (at Rich's width)."""

    def __init__(self, text: str, views: Views, replaced: frozenset[str], rows: Cache | None = None) -> None:
        self.text, self.views, self.replaced = text, views, replaced
        self.cache: Cache = {} if rows is None else rows

    def _rows(self, view: ViewName, source: str, props: Props, width: int) -> list[Text] | None:
        key = (view, source, width)
        if key not in self.cache:
            self.cache[key] = self.views.rows(view, {**props, "width": width})
        return self.cache[key]

    def _table(self, block: Block, width: int) -> list[Text] | None:
        widths = column_widths(block.rows, width)
        out: list[Text] = []
        for i, cells in enumerate(block.rows):
            props: Props = {"type": "table_row", "cells": list(cells), "header": i == 0, "widths": widths}
            rows = self._rows("TableRow", f"{i}\0{block.source}", props, width)
            if rows is None:
                return None
            out.extend(rows)
        return out

    def parts(self, width: int) -> Iterator[RenderableType]:
        plain: list[str] = []  # blocks drawn as uji draws markdown, waiting to be drawn as one
        for block in split(self.text):
            if block.view is None or block.view not in self.replaced:
                plain.append(block.source)
                continue
            if block.view == "TableRow":
                rows = self._table(block, width)
            else:
                rows = self._rows(block.view, block.source, block.props, width)
            if rows is None:
                plain.append(block.source)
                continue
            if plain:
                yield render.markdown("\n\n".join(plain))
                plain = []
            yield joined(rows)
        if plain:
            yield render.markdown("\n\n".join(plain))

    def __rich_console__(
        self, console: Console, options: ConsoleOptions
    ) -> Iterator[RenderableType | Segment]:
        from rich.segment import Segment

        for n, part in enumerate(self.parts(options.max_width)):
            if n:
                yield Text("")  # a blank row between blocks, as markdown has
            if isinstance(part, Text):
                yield part
                continue
            # uji's markdown: without the blank rows Rich puts before a list or a quote
            lines = console.render_lines(part, options.update(height=None), pad=False)  # its own height
            while lines and not "".join(seg.text for seg in lines[0]).strip():
                lines.pop(0)
            for line in lines:
                yield from line
                yield Segment.line()


def answer(text: str, views: Views, live: bool, rows: Cache | None = None) -> RenderableType:
    """An answer as its replaced views draw it: Partial while it streams, else its blocks;
    as uji draws it when none of them is replaced."""
    replaced = views.replaced(*MARKDOWN_VIEWS)
    blocks = replaced - {"Partial"}
    whole: RenderableType = Answer(text, views, blocks, rows) if blocks else render.markdown(text)
    if live and "Partial" in replaced:
        return Drawn(views, "Partial", {"type": "partial", "text": text}, lambda: whole)
    return whole
