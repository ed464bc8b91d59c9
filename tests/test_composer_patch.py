"""The composer's speed-ups lean on Textual's private names (tui/composer.py): the
module-level `compute_wrap_offsets` and `get_tab_widths` of
`textual.document._wrapped_document`, `WrappedDocument.height` and `_offset_to_line_info`,
and `TextArea._rewrap_and_refresh_virtual_size` with the `_width`, `_tab_width`,
`_line_cache` and `_refresh_size` it reads. A Textual that renames or reshapes any of them
fails here, rather than quietly losing the speed-up or breaking the first resize.

What ran is counted by code object with a profile hook (sys.setprofile): Textual's own
wrapping functions are called only for the lines off the fast path, and a resize at the
same width does not wrap the text again."""

from __future__ import annotations

import inspect
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

import pytest
import textual._wrap
import textual.expand_tabs
from textual.app import App, ComposeResult
from textual.document import _wrapped_document as wrapped
from textual.document._document import Document
from textual.widgets import TextArea

from uji.tui import composer as composer_module
from uji.tui.composer import Composer

pytestmark = pytest.mark.timeout(120)

TEXTUAL_WRAP = textual._wrap.compute_wrap_offsets.__code__
TEXTUAL_TABS = textual.expand_tabs.get_tab_widths.__code__
REWRAP = TextArea._rewrap_and_refresh_virtual_size.__code__
OUR_REWRAP = Composer._rewrap_and_refresh_virtual_size.__code__
WRAP_ALL = wrapped.WrappedDocument.wrap.__code__


@contextmanager
def calls(*codes: CodeType) -> Iterator[Counter[CodeType]]:
    """How many times each of `codes` was called in this thread meanwhile."""
    seen: Counter[CodeType] = Counter()
    wanted = set(codes)

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in wanted:
            seen[frame.f_code] += 1

    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(None)


def parameters(fn: Any) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_textuals_private_names_are_there_with_the_expected_shapes() -> None:
    # The two functions are replaced where WrappedDocument looks them up, and wrap Textual's own.
    assert getattr(wrapped.compute_wrap_offsets, "_uji", False), "the wrap patch did not apply"
    assert wrapped.get_tab_widths.__module__ == composer_module.__name__
    assert parameters(textual._wrap.compute_wrap_offsets) == [
        "text",
        "width",
        "tab_size",
        "fold",
        "precomputed_tab_sections",
    ]
    assert parameters(textual.expand_tabs.get_tab_widths) == ["line", "tab_size"]
    # The height is the count of wrapped rows the document keeps.
    assert wrapped.WrappedDocument.height.fget is composer_module._height  # type: ignore[attr-defined]
    doc = wrapped.WrappedDocument(Document("a\nb\tc\n" + "x" * 30), width=10)
    assert (doc._width, doc._tab_width, doc.height, len(doc._offset_to_line_info)) == (10, 4, 5, 5)
    # What the composer's resize override reads and calls.
    assert parameters(TextArea._rewrap_and_refresh_virtual_size) == ["self"]
    assert callable(TextArea._refresh_size)
    assert "self._line_cache" in inspect.getsource(TextArea.__init__)


def test_short_ascii_lines_skip_textuals_wrapping_and_the_rest_still_wrap() -> None:
    text = "\n".join(["short line"] * 200 + ["y" * 50, "tab\there"])
    with calls(TEXTUAL_WRAP, TEXTUAL_TABS) as seen:
        doc = wrapped.WrappedDocument(Document(text), width=20)
    # Only the long line and the tabbed one reach Textual's functions; the 200 short
    # lines take the fast path (one tab section, no wrap offsets).
    assert seen[TEXTUAL_WRAP] == 2 and seen[TEXTUAL_TABS] == 1
    assert doc.get_offsets(200) == [20, 40] and doc.get_offsets(0) == []
    assert doc.height == 200 + 3 + 1


class Screenful(App[None]):
    def compose(self) -> ComposeResult:
        yield Composer(id="composer")


async def test_a_resize_at_the_same_width_does_not_wrap_again() -> None:
    app = Screenful()
    async with app.run_test(size=(40, 20)) as pilot:
        composer = app.query_one(Composer)
        await pilot.pause()
        width, rows = composer.wrap_width, composer.size.height
        # Ten lines grow the composer to its most rows: a resize at the same width.
        with calls(REWRAP, OUR_REWRAP, WRAP_ALL) as seen:
            composer.insert("\n".join(f"line {i}" for i in range(10)))
            for _ in range(50):
                if composer.size.height > rows and seen[OUR_REWRAP]:
                    break
                await pilot.pause()
        assert composer.size.height > rows and composer.wrap_width == width
        assert seen[OUR_REWRAP] >= 1  # the resize came to the override
        assert seen[REWRAP] == 0 and seen[WRAP_ALL] == 0  # and the text was not wrapped again
        # A narrower terminal: a new width, wrapped again at it by Textual's own path.
        with calls(REWRAP, WRAP_ALL) as seen:
            await pilot.resize_terminal(30, 20)
            for _ in range(50):
                if composer.wrap_width != width and seen[WRAP_ALL]:
                    break
                await pilot.pause()
        assert seen[REWRAP] >= 1 and seen[WRAP_ALL] >= 1
        assert composer.wrapped_document._width == composer.wrap_width < width
