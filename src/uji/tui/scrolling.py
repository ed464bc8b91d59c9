"""Moving through the transcript from the keyboard (an output panel on top takes the
page keys), and Ctrl+O: the last cut output, whole."""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.tui import render

if TYPE_CHECKING:
    from textual.widget import Widget

    from uji.tui.screen_view import ScreenView


class Scrolling:
    def __init__(self, screen: ScreenView) -> None:
        self.screen = screen

    def up(self) -> None:
        self.screen.transcript.scroll_up(animate=False)

    def down(self) -> None:
        self.screen.transcript.scroll_down(animate=False)

    def page_up(self) -> None:
        self._paged().scroll_page_up(animate=False)

    def page_down(self) -> None:
        self._paged().scroll_page_down(animate=False)

    def _paged(self) -> Widget:
        """What PageUp/PageDown scroll: an output panel on top, else the transcript."""
        top = self.screen.top_modal()
        if top is not None:
            from uji.tui.modals import OutputPanel

            if isinstance(top, OutputPanel):
                return top.view
        return self.screen.transcript

    def top(self) -> None:
        self.screen.transcript.scroll_home(animate=False)

    def bottom(self) -> None:
        self.screen.transcript.follow()

    def expand_output(self) -> None:
        """Ctrl+O: the last tool or `!` output cut in the transcript, whole."""
        screen = self.screen
        outputs: list[tuple[str, str]] = []
        for entry in screen.transcript.entries:
            text = entry.data.get("output") if entry.kind == "shell" else entry.data.get("content")
            if entry.kind in ("tool", "shell") and isinstance(text, str) and text.strip():
                d = entry.data
                outputs.append((d.get("command") or d.get("subject") or d.get("name") or "", text))
        if not outputs:
            screen.show_notice("no tool output to expand yet")
            return
        cut = [o for o in outputs if render.preview_lines(o[1])[1]]
        title, text = (cut or outputs)[-1]
        from uji.tui.modals import OutputPanel

        screen.spawn(screen.ask(OutputPanel(f"Output of {title}", text)))
