"""What a focused ito control does with a key (reference §6 controls): a TextField edits
its text and submits on Enter, a List moves its selection and chooses on Enter, a
ScrollView scrolls by a row, a page or to an end. `fire(handler, *args)` runs the
control's callback; the answer says whether the control used the key (the keys it leaves
fall through to the keymap, or to whoever drives an ito.Window)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.tui.ito.layout import Control
    from uji.ui.ito import Node

Fire = Callable[..., Any]


def take_key(control: Control, key: str, character: str | None, fire: Fire) -> bool:
    if control.kind == "textfield":
        return _textfield_key(control.node, key, character, fire)
    if control.kind == "list":
        return _list_key(control.node, key, fire)
    if control.kind == "scroll":
        return _scroll_key(control, key, fire)
    return False


WHEEL_ROWS = 3  # rows a step of the mouse wheel scrolls


def wheel(controls: list[Control], x: int, y: int, delta: int, fire: Fire) -> bool:
    """A step of the wheel (delta < 0: up) scrolls the innermost scroll view under the
    cell; whether one moved."""
    for control in reversed(controls):  # an inner scroll view is listed after its outer one
        inside = control.x <= x < control.x + control.width and control.y <= y < control.y + control.window
        if control.kind == "scroll" and inside:
            return _scroll_by(control, delta * WHEEL_ROWS, fire)
    return False


def _scroll_key(control: Control, key: str, fire: Fire) -> bool:
    """A row, a page, or an end."""
    page = max(1, control.window - 1)
    steps = {
        "up": -1,
        "down": 1,
        "pageup": -page,
        "pagedown": page,
        "home": -control.rows,
        "end": control.rows,
    }
    return key in steps and _scroll_by(control, steps[key], fire)


def _scroll_by(control: Control, rows: int, fire: Fire) -> bool:
    """Scrolled to the end, a view that follows its end follows it again."""
    last = control.rows - control.window
    if last <= 0 or not control.node.get("scrolled"):
        return False
    top = max(0, min(last, control.top + rows))
    control.top = top
    fire(int(control.node["scrolled"]), top, top == last)
    return True


def _set_text(node: Node, text: str, fire: Fire) -> bool:
    node["value"] = text  # shown at once; the state's redraw follows
    fire(int(node["change"]), text)
    return True


def _textfield_key(node: Node, key: str, character: str | None, fire: Fire) -> bool:
    value = str(node.get("value", ""))
    if key == "enter":
        if node.get("submit"):
            fire(int(node["submit"]), value)
            return True
        return False
    if key == "backspace":
        return _set_text(node, value[:-1], fire)
    if key == "ctrl+u":
        return _set_text(node, "", fire)
    if character and character.isprintable() and len(character) == 1 and "ctrl+" not in key:
        return _set_text(node, value + character, fire)
    return False


def _list_key(node: Node, key: str, fire: Fire) -> bool:
    rows = len(node.get("rows") or [])
    selected = int(node.get("selected") or 0)
    if key in ("up", "down") and rows:
        step = -1 if key == "up" else 1
        fire(int(node["select"]), (selected - 1 + step) % rows + 1)
        return True
    if key == "enter" and node.get("choose") and rows:
        fire(int(node["choose"]), selected)
        return True
    return False
