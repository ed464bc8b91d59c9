"""The Markdown parser of the transcript (Textual's streamed answer and Rich's finished
one), with nesting bounded.

markdown-it stops at 20 open blocks (`maxNesting`): below that it drops the rest of the
block *and everything after it* (a list nested 10 deep lost the text that followed it),
and deeper recursion would exhaust Python's stack. Here a block rule goes first from
`FLAT_LEVEL` open blocks on: what is nested deeper is shown flat, as one paragraph with
a line per source line (the quote markers dropped, list markers kept as text), so
nothing is lost and each level costs the same however deep the source goes.

Imported with the first answer, never before the first frame (markdown-it)."""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from rich.markdown import Markdown

# Open blocks (a list and its item count two, a quote one) before deeper content is
# flat: 6 list levels, or 12 quotes. Under markdown-it's limit of 20, so it never cuts.
# Each level is a widget in Textual's Markdown, and a frame cuts every row at each of
# their edges: a list 1,000 deep took 1.6 s of CPU to stream with 8 levels, 1.3 s with 6.
FLAT_LEVEL = 12
QUOTE_MARKERS = re.compile(r"^(?:>[ \t]?)+")


def flat_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """From `FLAT_LEVEL` on, the lines of this block (up to an empty line, or one
    indented less than the block) as one paragraph with a hard break per line."""
    if state.level < FLAT_LEVEL:
        return False
    if silent:
        return True
    line = start
    lines: list[str] = []
    while line < end and not state.isEmpty(line) and state.sCount[line] >= state.blkIndent:
        text = state.src[state.bMarks[line] + state.tShift[line] : state.eMarks[line]]
        lines.append(QUOTE_MARKERS.sub("", text).rstrip())
        line += 1
    if line == start:  # cannot happen (the parser skips empty lines); never loop on a line
        line += 1
    state.line = line
    token = state.push("paragraph_open", "p", 1)
    token.map = [start, line]
    token = state.push("inline", "", 0)
    token.content = "  \n".join(x for x in lines if x)  # two spaces: a hard break
    token.map = [start, line]
    token.children = []
    state.push("paragraph_close", "p", -1)
    return True


def bounded(parser: MarkdownIt) -> MarkdownIt:
    """`parser` with deep nesting shown flat."""
    first = parser.block.ruler.get_all_rules()[0]
    parser.block.ruler.before(first, "uji_flat", flat_rule)
    return parser


@cache
def textual_parser() -> MarkdownIt:
    """Textual's Markdown widget's parser ("gfm-like"), bounded: its `parser_factory`,
    which Textual calls for each piece of a streamed answer. One parser serves them all
    (`parse` keeps its state apart), as one serves Rich."""
    from markdown_it import MarkdownIt

    return bounded(MarkdownIt("gfm-like"))


@cache
def _rich_parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return bounded(MarkdownIt().enable("strikethrough").enable("table"))


def rich_markdown(text: str, code_theme: str) -> Markdown:
    """Rich's Markdown of `text`, parsed by the bounded parser."""
    from rich.markdown import Markdown

    out = Markdown("", code_theme=code_theme)
    out.markup = text
    out.parsed = _rich_parser().parse(text)
    return out
