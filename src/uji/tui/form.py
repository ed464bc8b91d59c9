"""A form above the composer: an MCP server's question (`elicitation/create`).

The server's message, then one row per field: a text field for strings and numbers, a
checkbox for yes/no, a list to pick from for a choice; a required one is marked `*`,
defaults are filled in. Tab (or ↑/↓ outside a list) moves between them, Enter sends the
form (checked first: a problem is shown in the form, which stays open), and the three
buttons say the answer explicitly: Accept, Decline (the user says no), Cancel (the user
dismisses it; Esc too). Enter within GUARD_SECONDS of the form appearing is ignored:
it was meant for the composer.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual._time import get_time
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, OptionList, Static

from uji.tui import render
from uji.tui.approval import GUARD_SECONDS
from uji.tui.modals import Field, Modal
from uji.ui.form import Form, FormAction, FormAnswer, FormField, convert
from uji.ui.port import FormCheck

NONE = "(none)"  # the first choice of an optional list: no value


class FormPanel(Modal):
    mode = "prompt"

    DEFAULT_CSS = """
    FormPanel OptionList { height: auto; max-height: 8; border: none; padding: 0; background: $surface; }
    FormPanel Checkbox { border: none; padding: 0; height: 1; background: $surface; }
    FormPanel .label { margin-top: 1; }
    FormPanel .problem { color: $error; }
    FormPanel Horizontal { height: auto; margin-top: 1; }
    FormPanel Button { min-width: 10; height: 1; border: none; margin-right: 2; }
    """

    def __init__(self, form: Form, check: FormCheck) -> None:
        super().__init__(form.title)
        self.form = form
        self.check = check
        self.inputs: dict[str, Widget] = {}
        self.problem = Static("", classes="problem")
        self.shown_at = get_time()
        self.buttons = {
            "accept": Button("Open it" if form.url else "Accept", id="form-accept", compact=True),
            "decline": Button("Decline", id="form-decline", compact=True),
            "cancel": Button("Cancel", id="form-cancel", compact=True),
        }

    def compose(self) -> Any:
        yield Static(Text(self.form.message, style=render.TEXT))
        if self.form.url:
            yield Static(Text(self.form.url, style=f"bold {render.ACCENT}"))
        for f in self.form.fields:
            yield from self._row(f)
        yield self.problem
        with Horizontal():
            yield from self.buttons.values()
        keys = "Tab next · Enter send (on a button: its answer) · Esc cancel"
        yield Static(keys, classes="hint")

    def _row(self, f: FormField) -> Any:
        label = Text(f.title, style=f"bold {render.TEXT}")
        if f.required:
            label.append(" *", style="bold red")
        if f.description:
            label.append(f"  {f.description}", style=render.MUTED)
        if f.unsupported:
            yield Static(label, classes="label")
            yield Static(Text(f"  {f.unsupported}: this form can only be declined", style=render.MUTED))
            return
        if f.kind == "boolean":
            box = Checkbox(label, value=f.default is True, compact=True)
            box.add_class("label")
            self.inputs[f.name] = box
            yield box
            return
        yield Static(label, classes="label")
        if f.kind == "enum":
            choices = f.labels if f.required else [NONE, *f.labels]
            shown = OptionList(*choices)
            start = f.options.index(str(f.default)) if str(f.default) in f.options else None
            shown.highlighted = (start if f.required else (start + 1 if start is not None else 0)) or 0
            self.inputs[f.name] = shown
            yield shown
            return
        value = "" if f.default is None else str(f.default)
        placeholder = {"integer": "a whole number", "number": "a number"}.get(f.kind, "")
        field = Field(value=value, placeholder=placeholder, compact=True, select_on_focus=False)
        self.inputs[f.name] = field
        yield field

    def _stops(self) -> list[Widget]:
        return [*self.inputs.values(), *self.buttons.values()]

    def field(self) -> Input | None:
        focused = self.app.focused
        return focused if isinstance(focused, Input) and focused in self.inputs.values() else None

    def focus_field(self) -> None:
        stops = self._stops()
        stops[0].focus()

    def on_key(self, event: events.Key) -> None:
        focused = self.app.focused
        if event.key in ("up", "down") and isinstance(focused, OptionList):
            return  # moves in the list
        step = {"tab": 1, "down": 1, "shift+tab": -1, "up": -1}.get(event.key)
        if step is None:
            return
        stops = self._stops()
        at = stops.index(focused) if focused in stops else -1
        stops[(at + step) % len(stops)].focus()
        event.stop()
        event.prevent_default()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        for action, button in self.buttons.items():
            if event.button is button:
                self._answer(action)  # type: ignore[arg-type]

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.modal_accept()

    def modal_accept(self) -> None:
        if get_time() - self.shown_at < GUARD_SECONDS:
            return  # typed for the composer before the form was there
        focused = self.app.focused
        for action, button in self.buttons.items():
            if focused is button:
                self._answer(action)  # type: ignore[arg-type]
                return
        self._answer("accept")

    def modal_cancel(self) -> None:
        self.finish(FormAnswer("cancel"))

    def _answer(self, action: FormAction) -> None:
        if action != "accept":
            self.finish(FormAnswer(action))
            return
        if any(f.unsupported for f in self.form.fields):
            self._show("this form asks for something uji cannot show: decline or cancel it")
            return
        values, problem = convert(self.form.fields, self.typed())
        problem = problem or self.check(values)
        if problem:
            self._show(problem)
            return
        self.finish(FormAnswer("accept", values))

    def typed(self) -> dict[str, str | bool]:
        out: dict[str, str | bool] = {}
        for f in self.form.fields:
            widget = self.inputs.get(f.name)
            if isinstance(widget, Checkbox):
                out[f.name] = widget.value
            elif isinstance(widget, OptionList):
                at = widget.highlighted or 0
                at = at if f.required else at - 1
                out[f.name] = f.options[at] if 0 <= at < len(f.options) else ""
            elif isinstance(widget, Input):
                out[f.name] = widget.value
        return out

    def _show(self, problem: str) -> None:
        self.problem.update(Text(problem, style="red"))
