"""Notices: one-line messages for the user (a config error, a failed hook, a retry).

Whoever shows them (the screen, stderr, `--json` lines) plugs in as the sink; the
services that say something hold the `Notices` itself, so a sink set later still
reaches them.
"""

from __future__ import annotations

from collections.abc import Callable

Notice = Callable[[str], None]


class Notices:
    def __init__(self, sink: Notice | None = None) -> None:
        self._sink: Notice = sink or _drop

    def __call__(self, text: str) -> None:
        self._sink(text)

    def set_sink(self, sink: Notice) -> None:
        self._sink = sink


def _drop(text: str) -> None:
    pass
