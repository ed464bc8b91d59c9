"""What floats over the composer: the question on top, the command suggestions (`/`) and
the `@` popup — following the draft, moving in them, choosing, giving up."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from uji.tui.composer import matching
from uji.tui.mentions import pick

if TYPE_CHECKING:
    from uji.tui.screen_view import ScreenView


class Popups:
    def __init__(self, screen: ScreenView, submit: Callable[[], None]) -> None:
        self.screen = screen
        self.submit = submit  # Enter on a choice that completes the draft sends it

    # Moving, choosing, giving up -------------------------------------------------------

    def up(self) -> None:
        self._move(-1)

    def down(self) -> None:
        self._move(1)

    def _move(self, step: int) -> None:
        screen = self.screen
        top = screen.top_modal()
        if top is not None:
            if step < 0:
                top.modal_up()
            else:
                top.modal_down()
        elif screen.mentions.open:
            screen.mentions.move(step)
        elif screen.suggestions.open:
            screen.suggestions.move(step)

    def accept(self) -> None:
        screen = self.screen
        top = screen.top_modal()
        if top is not None:
            top.modal_accept()
        elif screen.mentions.open:
            if not pick(screen.composer, screen.mentions):
                self.submit()  # the word already names the file: Enter sends
        elif screen.suggestions.open:
            # Keys typed fast reach here before the popup has caught up with them: match
            # what the composer holds now, so Enter runs what was typed.
            self.update_suggestions()
            chosen = screen.suggestions.current() if screen.suggestions.open else None
            if chosen is not None:
                screen.composer.set_text(f"/{chosen.name}")
            self.submit()

    def cancel(self) -> None:
        screen = self.screen
        top = screen.top_modal()
        if top is not None:
            top.modal_cancel()
        elif screen.mentions.open:
            screen.mentions.dismissed_for = screen.composer.text
            screen.mentions.close()
        elif screen.suggestions.open:
            if screen.composer.text == "/":  # a bare `/` given up: what follows is a message
                screen.composer.text = ""
            else:
                screen.suggestions.dismissed_for = screen.composer.text
            screen.suggestions.close()

    def complete(self) -> None:
        screen = self.screen
        if screen.mentions.open:
            pick(screen.composer, screen.mentions)
            return
        chosen = screen.suggestions.current()
        if chosen is not None:
            screen.composer.set_text(f"/{chosen.name} ")

    def confirm(self, action: str) -> None:
        """A question's keys (y, a, A, n, t, Tab)."""
        from uji.tui.approval import ApprovalPanel

        top = self.screen.top_modal()
        if isinstance(top, ApprovalPanel):
            top.confirm_action(action)

    # Following the draft ---------------------------------------------------------------

    def update_mentions(self) -> None:
        """The `@` popup follows the word the cursor is in (tui/mentions.py)."""
        c = self.screen.composer
        row, col = c.cursor_location
        self.screen.mentions.follow(c.text, c.document.get_line(row), col, self.update_mentions)

    def update_suggestions(self) -> None:
        screen = self.screen
        text = screen.composer.text
        sugg = screen.suggestions
        if sugg.dismissed_for is not None and text != sugg.dismissed_for:
            sugg.dismissed_for = None
        wants = text.startswith("/") and not any(c in text for c in " \n") and sugg.dismissed_for is None
        app = screen.conversation.app
        wants = wants and (app is None or app.ui.suggest)  # uji.ui.configure{suggest = {enabled = false}}
        if wants and app is not None:
            from uji.tui import screen_commands

            sugg.show(matching(text, screen_commands.suggestions(screen)))
        else:
            sugg.close()

    def project_dir(self) -> str | None:
        app = self.screen.conversation.app
        return app.cwd if app is not None else None

    def resources(self) -> dict[str, str]:
        """`server:uri` → the resource's name, for each MCP server's resources."""
        app = self.screen.conversation.app
        if app is None:
            return {}
        return {
            f"{server.name}:{r.uri}": r.name or r.description
            for server in app.mcp.servers.values()
            if not server.disabled
            for r in server.resources
        }
