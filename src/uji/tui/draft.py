"""The composer's draft going out, and coming back: Enter (with the images and long
pastes its markers stand for), images pasted or typed as paths, and the history of sent
messages (↑/↓, Ctrl+R)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from uji.tui.composer import PLACEHOLDER

if TYPE_CHECKING:
    from uji.images import Limits
    from uji.tui.screen_view import ScreenView
    from uji.wires.base import Image

SEARCH_SESSIONS, SEARCH_MESSAGES = 50, 1000  # how far Ctrl+R looks back


class Draft:
    def __init__(self, screen: ScreenView) -> None:
        self.screen = screen

    # Sending --------------------------------------------------------------------------

    def submit(self) -> None:
        """Enter: the draft goes out (typed paths to images attached first)."""
        screen = self.screen
        text = screen.composer.text
        if not text.strip():
            return
        app = screen.conversation.app
        if app is not None and not text.startswith(("/", "!")):
            from uji.images import path_tokens

            found = path_tokens(text, app.cwd)
            if found:  # typed paths to images: attached first, then sent
                screen.spawn(self._attach_paths_and_send(text, found))
                return
        self._send(text)

    def _send(self, text: str) -> None:
        screen = self.screen
        images: list[Image] = []
        app = screen.conversation.app
        if screen.attachments and app is not None and not text.startswith(("/", "!")):
            from uji.images import refusal

            text, images = screen.attachments.take(text)
            why = refusal(app.models) if images else None
            if why:  # the draft and its images stay
                screen.show_notice(f"{why}: choose one that does with /model, or delete the [image #N]")
                return
        shown = text if len(screen.pastes) else None  # the transcript keeps the paste markers
        text = screen.pastes.expand(text)  # after the images: a paste's own "[image #1]" is text
        composer = screen.composer
        composer.sent.add(text)
        composer.text = ""
        composer.placeholder = PLACEHOLDER
        screen.suggestions.close()
        screen.mentions.close()
        screen.attachments.clear()
        screen.pastes.clear()
        screen.submit_line(text, images, shown)

    async def _attach_paths_and_send(self, text: str, found: list[tuple[int, int, str]]) -> None:
        from uji.images import ImageError, load

        screen = self.screen
        loaded = []
        for start, end, path in found:
            try:
                loaded.append((start, end, await asyncio.to_thread(load, path, self.image_limits())))
            except ImageError as e:
                screen.show_notice(str(e))
                return
        if screen.composer.text != text:
            return  # edited while the images loaded: Enter sends what is there now
        for start, end, image in reversed(loaded):
            text = text[:start] + screen.attachments.add(image) + text[end:]
        screen.composer.set_text(text)
        self._send(text)

    def clear(self) -> None:
        self.screen.composer.text = ""

    # Images and pastes ----------------------------------------------------------------

    def image_limits(self) -> Limits:
        from uji.images import DEFAULT_LIMITS, current_limits

        app = self.screen.conversation.app
        return current_limits(app.models) if app is not None else DEFAULT_LIMITS

    async def paste(self, text: str) -> bool:
        """A paste that names an image file attaches it as `[image #N]`, a long one goes in
        as `[paste #N +L lines]`; False leaves the paste to the composer (short text, or an
        image that cannot be read: said)."""
        from uji.images import ImageError, image_path, load
        from uji.tui.attachments import is_long_paste

        screen = self.screen
        app = screen.conversation.app
        path = image_path(text, app.cwd) if app is not None else None
        if path is not None:
            try:
                image = await asyncio.to_thread(load, path, self.image_limits())
            except ImageError as e:
                screen.show_notice(f"{e}; pasted as text")
            else:
                screen.composer.insert(screen.attachments.add(image))
                return True
        if is_long_paste(text):
            screen.composer.insert(screen.pastes.add(text))
            return True
        return False

    def paste_image(self) -> None:
        """Ctrl+V: the clipboard's image as `[image #N]` (through wl-paste or xclip)."""
        self.screen.spawn(self._paste_image())

    async def _paste_image(self) -> None:
        from uji.clipboard import ClipboardError, clipboard_image
        from uji.images import ImageError, from_bytes

        try:
            data = await clipboard_image()
            limits = self.image_limits()
            image = await asyncio.to_thread(from_bytes, data, "clipboard", limits, "the clipboard's image")
        except (ClipboardError, ImageError) as e:
            self.screen.show_notice(str(e))
            return
        self.screen.composer.insert(self.screen.attachments.add(image))

    # The history of sent messages -----------------------------------------------------

    def history_prev(self) -> None:
        composer = self.screen.composer
        text = composer.sent.prev(composer.text)
        if text is not None:
            composer.set_text(text)

    def history_next(self) -> None:
        composer = self.screen.composer
        text = composer.sent.next()
        if text is not None:
            composer.set_text(text)

    def history_up(self) -> None:
        """↑: the previous message on the composer's first line, else a line up."""
        composer = self.screen.composer
        if composer.cursor_location[0] == 0:
            self.history_prev()
        else:
            composer.action_cursor_up()

    def history_down(self) -> None:
        """↓: the next message on the last line while going through the history."""
        c = self.screen.composer
        if c.cursor_location[0] == c.document.line_count - 1 and c.sent.browsing:
            self.history_next()
        else:
            c.action_cursor_down()

    def history_search(self) -> None:
        """Ctrl+R: pick one of the messages sent in this session or the directory's
        earlier ones (newest first, typing filters); it replaces the draft."""
        self.screen.spawn(self._history_search())

    async def _history_search(self) -> None:
        screen = self.screen
        texts = list(reversed(screen.composer.sent.items))
        app = screen.conversation.app
        if app is not None:
            for session in app.store.list_sessions(app.cwd)[:SEARCH_SESSIONS]:
                if session["id"] == screen.conversation.session_id:
                    continue
                texts += [
                    m.get("text", "")
                    for m in reversed(app.store.messages(session["id"]))
                    if m.get("type") == "user"
                ]
        unique = list(dict.fromkeys(t for t in texts if t.strip()))[:SEARCH_MESSAGES]
        if not unique:
            screen.show_notice("no past messages to search")
            return
        labels = [" ".join(t.split())[:200] for t in unique]
        chosen = await screen.select("Search past messages", labels)
        if chosen is not None:
            screen.composer.set_text(unique[chosen])
