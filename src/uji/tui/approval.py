"""The approval question: a tool call that policy says to ask about (and
`uji.ui.confirm`).

Answers must be deliberate. A question that appears while the user is typing (a key in
the composer less than TYPING_SECONDS before it, or less than GUARD_SECONDS after it) is
*held*: its letters do not answer, and every key typed goes where it would have gone
without the question (the composer), so the `y` of "why not yet" approves nothing, even
after a pause between words. The user moves to a held question with Tab, ↑ or ↓ (the key
only moves there), or by not typing for PAUSE_SECONDS; the question says so meanwhile.
A number picks that answer at any time (held or not); Enter then takes it. Once on the
question:

  y  yes, this once               a  yes, and allow this part for the session
  A  yes, and always allow it     n  no (Esc and Ctrl+G too)
  t  no, and tell uji what to do differently: a text field opens in the question; Enter
     sends the text as the reason the model gets, Esc goes back to the question.
  1…9  pick that answer           Enter  take the highlighted answer

The remembering choices appear only when the policy asked (not a hook, not
uji.ui.confirm) and say exactly what they remember.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rich.console import Group, RenderableType
from rich.text import Text
from textual._time import get_time  # the clock that stamps key events
from textual.widgets import Input, Static

from uji.record import Record, replace
from uji.tools.remembered import ANY_SUBJECT
from uji.tui import render
from uji.tui.focus import KeyRouter
from uji.tui.modals import Field, Modal

if TYPE_CHECKING:
    from uji.tui.panel_views import PanelProps

APPROVAL_DIFF_LINES = 30
BODY_LINES = 12
SCOPE_CHARS = 60
# A key this soon after the question appeared was on its way before it was read (the
# time to notice a question has appeared is about 250 ms): the user was typing.
GUARD_SECONDS = 0.4
# A key in the composer this recently before the question appeared: the user is typing.
TYPING_SECONDS = 1.0
# A held question takes letters once typing has paused this long. Longer than a pause
# between words or to think ("why not … yet": 0.7 s), short enough to be felt as "it waits".
PAUSE_SECONDS = 2.0
# Keys that move to a held question (and do nothing else there).
MOVE_KEYS = frozenset(("tab", "up", "down"))
NUMBER_KEYS = frozenset("123456789")  # pick an answer, held or not
PICK = "confirm_pick_"  # confirm_pick_1 … confirm_pick_9: the number keys' actions

Took = Literal["answer", "moved", "typing"]  # what a key typed while a question is open does


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


# The theme's strings (reference §6 text: yes, no, proceed, tell); `uji.tui.theme` sets them.
YES, NO, PROCEED, TELL = "Yes", "No", "proceed", "and tell uji what to do differently"


def choices(remember: str | None, tell: bool, cwd: str | None = None) -> list[Choice]:
    out = [Choice("yes", f"{YES}, {PROCEED}", "y")]
    if remember:
        # A path under the working directory reads as written there (what is saved is
        # the absolute path).
        inside = cwd is not None and remember.startswith(cwd.rstrip("/") + "/")
        scope = _short(remember[len(cwd.rstrip("/")) + 1 :] if inside and cwd else remember)
        what = "this tool" if remember == ANY_SUBJECT else f"`{scope}`"
        out.append(Choice("session", f"{YES}, and allow {what} for this session", "a"))
        out.append(Choice("always", f"{YES}, and always allow {what} (saved in rules.lua)", "A"))
    out.append(Choice("no", NO, "n"))
    if tell:
        out.append(Choice("tell", f"{NO}, {TELL}", "t"))
    return out


class ApprovalPanel(KeyRouter, Modal):
    mode = "confirm"
    can_focus = True

    DEFAULT_CSS = """
    ApprovalPanel { border: round $warning 50%; }
    ApprovalPanel:focus-within { border: round $warning; }
    ApprovalPanel.-replaced, ApprovalPanel.-replaced:focus-within { border: none; padding: 0; }
    """

    def __init__(
        self,
        title: str,
        body: str,
        preview: str | None = None,
        remember: str | None = None,
        tell: bool = False,
        cwd: str | None = None,
        labels: tuple[str, str] | None = None,
        asked_for: bool = False,
    ) -> None:
        """`labels`: the yes and no choices' words. `asked_for`: a question the user's
        own command asked (`/rules`' "forget it?"), not one that arrived as they typed:
        keys answer it at once."""
        super().__init__(title)
        self.body = body
        self.preview = preview
        self.remember = remember
        self.choices = choices(remember, tell, cwd)
        if labels is not None:
            yes, no = labels
            self.choices = [replace(c, label=yes if c.kind == "yes" else no) for c in self.choices]
        self.choice = 0
        self.telling: Field | None = None
        self.shown_at = get_time()
        self.asked_for = asked_for
        self.held = False  # shown while the user was typing: letters wait (see the top)
        self.armed_at: float | None = None  # when a hold ended (the keyboard came back)
        # Keys typed before this time are typing, not answers; each one pushes it on.
        self.quiet_until = self.shown_at + (0.0 if asked_for else GUARD_SECONDS)
        self._view = Static("")
        self.question = title
        self._custom = False  # uji.ui.Approval draws it

    def compose(self) -> Any:
        yield self._view

    def on_mount(self) -> None:
        from uji.tui.panel_views import replaced

        self._custom = replaced(self, "Approval")
        self.shown_at = get_time()
        if self.asked_for:
            self.quiet_until = self.shown_at
            self._draw()
            return
        self.quiet_until = max(self.quiet_until, self.shown_at + GUARD_SECONDS)
        typed = getattr(self.app, "last_typed", None)  # the composer's last key (app.route_key)
        if isinstance(typed, float) and self.shown_at - typed < TYPING_SECONDS:
            self._hold(typed)
        self._draw()
        self.set_timer(max(self.quiet_until - self.shown_at, 0.01), self._arm)

    # The guard ----------------------------------------------------------------

    def takes(self, key: str, typed_at: float) -> Took:
        """What a key typed at `typed_at` (the event's time) does: answers the question,
        moves to it (a held question, Tab or an arrow), or is typing (goes to the composer)."""
        if typed_at >= self.quiet_until:
            return "answer"
        deliberate = typed_at >= self.shown_at + GUARD_SECONDS  # not on its way before it was read
        # Held when the key was typed: a key read late (a busy machine) may arrive after the
        # hold ended, and is judged as of when it was typed.
        held = self.held or (self.armed_at is not None and typed_at < self.armed_at)
        if deliberate and held and (key in MOVE_KEYS or key in NUMBER_KEYS):
            self.release(typed_at)
            return "answer" if key not in MOVE_KEYS else "moved"
        self._hold(typed_at)
        # The key goes to the composer (which takes the focus); the question takes the
        # keyboard back once typing pauses, even if it had armed before this key arrived.
        if self.is_mounted:
            self.set_timer(max(self.quiet_until - get_time(), 0.01), self._arm)
            self._draw()
        return "typing"

    def _hold(self, typed_at: float) -> None:
        self.held = True
        self.quiet_until = max(self.quiet_until, typed_at + PAUSE_SECONDS)

    def release(self, moved_at: float) -> None:
        """The user moved to the question: the keys typed from then on answer it."""
        self.quiet_until = min(self.quiet_until, moved_at)
        self._arm()

    def armed(self) -> bool:
        return get_time() >= self.quiet_until

    def _arm(self) -> None:
        if self.answer.done():
            return
        left = self.quiet_until - get_time()
        if left > 0:
            self.set_timer(left, self._arm)
            return
        if self.held:
            self.armed_at = get_time()
        self.held = False
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
        if self._custom and self._draw_custom():
            return
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
        parts.extend(self._hints())
        self._view.update(Group(*parts))

    def _hints(self) -> list[Text]:
        if self.telling is not None:
            return [Text("Tell uji what to do instead · Enter sends · Esc back", style=render.MUTED)]
        if self.armed():
            keys = " · ".join(f"{c.key}{'/Esc' if c.kind == 'no' else ''} {c.kind}" for c in self.choices)
            return [Text(f"{keys} · ↑/↓ or 1–{len(self.choices)} and Enter", style=render.MUTED)]
        if self.held:
            pause = f"{PAUSE_SECONDS:g} s"
            return [
                Text(f"you were typing: letters wait for a {pause} pause or Tab/↑/↓", style=render.CODE),
                Text(f"1–{len(self.choices)} and Enter choose now", style=render.MUTED),
            ]
        return [Text("keys answer once typing pauses", style=render.MUTED)]

    def _draw_custom(self) -> bool:
        """The question as uji.ui.Approval draws it; False when it failed (uji draws it)."""
        from uji.tui.panel_views import drawn

        props: PanelProps = {
            "title": self.question, "body": self.body, "selected": self.choice + 1,
            "choices": [{"label": c.label, "key": c.key, "kind": c.kind} for c in self.choices],
            "hint": "\n".join(t.plain for t in self._hints()), "width": max(10, self.app.size.width - 2),
        }  # fmt: skip
        if self.preview:
            props["preview"] = self.preview
        lines = drawn(self, "Approval", props)
        self._custom = lines is not None
        self.set_class(self._custom, "-replaced")
        if lines is not None:
            self._view.update(Text("\n").join(lines))
        return self._custom

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

    def pick(self, number: int) -> None:
        """A number key: highlight that answer (Enter takes it)."""
        if self.telling is None and 1 <= number <= len(self.choices):
            self.choice = number - 1
            self._draw()

    def confirm_action(self, action: str) -> None:
        """A question's key: confirm_allow, _deny, _session, _always, _tell, _toggle or _pick_N."""
        if action == "confirm_toggle":
            self.modal_down()
        elif action.startswith(PICK):
            self.pick(int(action.removeprefix(PICK)))
        elif action in ACTIONS:
            self.choose(ACTIONS[action])
