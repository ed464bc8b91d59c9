"""The approval question: a tool call that policy says to ask about (and
`uji.ui.confirm`).

Answers must be deliberate. A key typed before the question appeared, or less than
GUARD_SECONDS after it appeared or after the previous key, does not answer it: it goes
where it would have gone without the question (the composer), so a fast typist's `n`
of "function" or `y` of "why" neither denies nor approves anything, and nothing typed is
lost. Once typing has paused for the guard time the question takes the keyboard:

  y  yes, this once               a  yes, and allow this part for the session
  A  yes, and always allow it     n  no (Esc and Ctrl+G too)
  t  no, and tell uji what to do instead: a text field opens in the question; Enter
     sends the text as the reason the model gets, Esc goes back to the question.

Enter takes the highlighted choice. The remembering choices appear only when the
policy asked (not a hook, not uji.ui.confirm) and say exactly what they remember.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual._time import get_time  # the clock that stamps key events
from textual.widgets import Input, Static

from uji.record import Record
from uji.tui import render
from uji.tui.focus import KeyRouter
from uji.tui.modals import Field, Modal

APPROVAL_DIFF_LINES = 30
BODY_LINES = 12
SCOPE_CHARS = 60
# Long enough to cover the gap between keys of someone typing (100–300 ms) and the
# time to notice a question has appeared (about 250 ms), short enough not to be felt
# by someone who reads the question before answering.
GUARD_SECONDS = 0.4


ACTIONS = {  # the keymap's action names → the choice they make
    "confirm_allow": "yes",
    "confirm_session": "session",
    "confirm_always": "always",
    "confirm_deny": "no",
    "confirm_tell": "tell",
}


class Reply(Record):
    kind: str  # yes | session | always | no | tell
    text: str = ""  # what to do instead (tell)

    @property
    def allow(self) -> bool:
        return self.kind in ("yes", "session", "always")


class Choice(Record):
    kind: str
    label: str
    key: str


def _short(text: str) -> str:
    one = " ".join(text.split())
    if len(one) <= SCOPE_CHARS:
        return one
    if one.startswith("/"):  # a path: its end says which file
        return "…" + one[-(SCOPE_CHARS - 1) :]
    return one[: SCOPE_CHARS - 1] + "…"


def choices(remember: str | None, tell: bool, cwd: str | None = None) -> list[Choice]:
    out = [Choice("yes", "Yes, proceed", "y")]
    if remember:
        # A path under the working directory reads as written there (what is saved is
        # the absolute path).
        inside = cwd is not None and remember.startswith(cwd.rstrip("/") + "/")
        scope = _short(remember[len(cwd.rstrip("/")) + 1 :] if inside and cwd else remember)
        out.append(Choice("session", f"Yes, and allow `{scope}` for this session", "a"))
        out.append(Choice("always", f"Yes, and always allow `{scope}` (saved in rules.lua)", "A"))
    out.append(Choice("no", "No", "n"))
    if tell:
        out.append(Choice("tell", "No, and tell uji what to do instead", "t"))
    return out


class ApprovalPanel(KeyRouter, Modal):
    mode = "confirm"
    can_focus = True

    DEFAULT_CSS = """
    ApprovalPanel { border: round $warning 50%; }
    ApprovalPanel:focus-within { border: round $warning; }
    """

    def __init__(
        self,
        title: str,
        body: str,
        preview: str | None = None,
        remember: str | None = None,
        tell: bool = False,
        cwd: str | None = None,
    ) -> None:
        super().__init__(title)
        self.body = body
        self.preview = preview
        self.remember = remember
        self.choices = choices(remember, tell, cwd)
        self.choice = 0
        self.telling: Field | None = None
        self.shown_at = get_time()
        # Keys typed before this time do not answer; each one pushes it on.
        self.quiet_until = self.shown_at + GUARD_SECONDS
        self._view = Static("")

    def compose(self) -> Any:
        yield self._view

    def on_mount(self) -> None:
        self.shown_at = get_time()
        self.quiet_until = max(self.quiet_until, self.shown_at + GUARD_SECONDS)
        self._draw()
        self.set_timer(GUARD_SECONDS, self._arm)

    # The guard ----------------------------------------------------------------

    def takes(self, typed_at: float) -> bool:
        """Whether a key typed at `typed_at` (the event's time) may answer the question."""
        if typed_at >= self.quiet_until:
            return True
        self.quiet_until = max(self.quiet_until, typed_at + GUARD_SECONDS)
        # The key goes to the composer (which takes the focus); the question takes the
        # keyboard back once typing pauses, even if it had armed before this key arrived.
        if self.is_mounted:
            self.set_timer(max(self.quiet_until - get_time(), 0.01), self._arm)
        return False

    def armed(self) -> bool:
        return get_time() >= self.quiet_until

    def _arm(self) -> None:
        if self.answer.done():
            return
        left = self.quiet_until - get_time()
        if left > 0:
            self.set_timer(left, self._arm)
            return
        self._draw()
        if self.app.top_modal() is self:
            self.focus_field()

    def focus_field(self) -> None:
        # Until the guard is over the keyboard stays where it was (the composer).
        if self.telling is not None:
            self.telling.focus()
        elif self.armed():
            self.focus()

    def field(self) -> Input | None:
        return self.telling

    # Drawing ------------------------------------------------------------------

    def _draw(self) -> None:
        parts: list[RenderableType] = []
        if self.body:
            lines, hidden = render.preview_lines(self.body, BODY_LINES)
            parts.append(Text("\n".join(lines), style=render.TEXT))
            if hidden:
                parts.append(render.more(hidden))
        if self.preview:
            parts.append(Text(""))
            parts.extend(render.diff(self.preview, APPROVAL_DIFF_LINES))
        parts.append(Text(""))
        for i, choice in enumerate(self.choices):
            chosen = i == self.choice
            line = Text("› " if chosen else "  ", style=render.ACCENT)
            line.append(f"{i + 1}. {choice.label}", style=f"bold {render.ACCENT}" if chosen else render.TEXT)
            line.append(f"  {choice.key}", style=render.MUTED)
            parts.append(line)
        if self.telling is not None:
            parts.append(Text("Tell uji what to do instead · Enter sends · Esc back", style=render.MUTED))
        elif self.armed():
            keys = " · ".join(f"{c.key}{'/Esc' if c.kind == 'no' else ''} {c.kind}" for c in self.choices)
            parts.append(Text(f"{keys} · ↑/↓ and Enter", style=render.MUTED))
        else:
            parts.append(Text("keys answer once typing pauses", style=render.MUTED))
        self._view.update(Group(*parts))

    # Answers --------------------------------------------------------------------

    def _kinds(self) -> list[str]:
        return [c.kind for c in self.choices]

    def choose(self, kind: str) -> None:
        if kind not in self._kinds():
            return
        if kind == "tell":
            self._start_telling()
            return
        self.finish(Reply(kind))

    def _start_telling(self) -> None:
        if self.telling is not None:
            return
        self.choice = self._kinds().index("tell")
        self.telling = Field(placeholder="what uji should do instead", compact=True, select_on_focus=False)
        self.mode = "prompt"  # the field takes the keys; Enter sends, Esc comes back
        self.mount(self.telling)
        self.telling.focus()
        self._draw()

    def _stop_telling(self) -> None:
        if self.telling is not None:
            self.telling.remove()
        self.telling = None
        self.mode = "confirm"
        self.focus()
        self._draw()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.modal_accept()

    def modal_up(self) -> None:
        if self.telling is None:
            self.choice = (self.choice - 1) % len(self.choices)
            self._draw()

    def modal_down(self) -> None:
        if self.telling is None:
            self.choice = (self.choice + 1) % len(self.choices)
            self._draw()

    def modal_accept(self) -> None:
        if self.telling is not None:
            text = self.telling.value.strip()
            if text:  # nothing typed yet: keep waiting (Esc goes back)
                self.finish(Reply("tell", text))
            return
        self.choose(self.choices[self.choice].kind)

    def modal_cancel(self) -> None:
        if self.telling is not None:
            self._stop_telling()
        else:
            self.finish(Reply("no"))

    def confirm_action(self, action: str) -> None:
        """A question's key: confirm_allow, _deny, _session, _always, _tell or _toggle."""
        if action == "confirm_toggle":
            self.modal_down()
        elif action in ACTIONS:
            self.choose(ACTIONS[action])
