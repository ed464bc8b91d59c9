"""How the screen's pieces ask Lua to draw: the render_message hook and the replaced views
(`uji.ui.<View>`), wired to the transcript, the queue and the rows around the composer.
Apart from the screen (`tui/app.py`), which only hands itself over."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from uji.tui.ito.parts import EntryParts
from uji.tui.ito.replaced import Views

if TYPE_CHECKING:
    from rich.text import Text
    from textual.geometry import Size
    from textual.widget import Widget

    from uji.app import App
    from uji.tui.conversation import Conversation
    from uji.tui.entry import Entry
    from uji.tui.transcript import Transcript


class Surface(Protocol):
    """What of the screen this needs."""

    @property
    def conversation(self) -> Conversation: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def size(self) -> Size: ...

    def show_notice(self, text: str) -> None: ...

    def ito_colors(self) -> dict[str, str]: ...


class Rendering:
    def __init__(self, screen: Surface) -> None:
        self.screen = screen
        self.views = Views(self._app, screen.ito_colors)

    def _app(self) -> App | None:
        return self.screen.conversation.app

    def wire(self) -> None:
        t = self.screen.transcript
        t.wire(self.entry, self.offered, self.drawn_as, EntryParts(self.views))

    def offered(self) -> bool:
        """Whether messages go through Lua before they are drawn (a handler, or a replaced view)."""
        app = self._app()
        if app is None:
            return False
        from uji.tui.ito.message import offered

        return offered(app)

    def entry(self, entry: Entry) -> Widget | None:
        """The render_message hook's view for an entry, or its replaced view's."""
        app = self._app()
        if app is None or not self.offered():
            return None
        from uji.tui.ito.message import custom_view

        screen = self.screen
        width = max(10, screen.transcript.size.width - 2)
        return custom_view(app, entry, width, screen.show_notice, screen.ito_colors)

    def drawn_as(self, entry: Entry) -> object:
        """What of a tool entry its view shows: when it changes, the entry is drawn again
        through Lua (a call is offered as pending, then with its result; a replaced Running
        view also with each progress line)."""
        from uji.tui.ito.message import is_pending

        waiting = is_pending(entry)
        if waiting and entry.data.get("status") == "running" and self.views.replaced("Running"):
            return (waiting, entry.data.get("progress"))
        return waiting

    def queued(self, text: str) -> list[Text] | None:
        """The render_message hook's rows for a queued message (`type = "queued"`), or Queued's."""
        app = self._app()
        if app is None or not self.offered():
            return None
        from uji.tui.ito.message import queued_rows

        screen = self.screen
        return queued_rows(app, text, max(10, screen.size.width - 2), screen.show_notice, screen.ito_colors())
