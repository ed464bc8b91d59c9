"""Keys reach the keymap from the focused widget, in the order they were typed.

Textual delivers a key to the focused widget through that widget's message queue. If
the app decided keys itself as they arrive, Enter could be handled before the letters
typed just ahead of it had reached the composer (a fast typist, or a paste of keys
through tmux, would lose the end of the message). So each widget that takes focus asks
the app's keymap first, from its own queue."""

from __future__ import annotations

from typing import Any

from textual import events


class KeyRouter:
    """Mix in before the Textual widget class: `class Composer(KeyRouter, TextArea)`."""

    app: Any

    async def _on_key(self, event: events.Key) -> None:
        route = getattr(self.app, "route_key", None)
        if route is not None and route(event):
            event.prevent_default()  # the widget's own handling of the key is skipped
            event.stop()
