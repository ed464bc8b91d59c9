"""What the frontend (`uji run` or the screen) fills in for the config to reach: the
open session's agent, and what `uji.session.submit` and `uji.session.interrupt` do."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from uji.agent.loop import Agent


class Frontend:
    def __init__(self) -> None:
        self.agent: Agent | None = None
        self.on_submit: Callable[[str], None] | None = None
        self.on_interrupt: Callable[[], bool] | None = None
        # After uji.session.rewind: the screen shows the session again (the prompt of the
        # rewound turn when the conversation went back, else None).
        self.on_rewound: Callable[[str | None], None] | None = None
