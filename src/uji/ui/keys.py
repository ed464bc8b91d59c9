"""Key syntax, key modes, action names and the keymap (reference §1 "Key modes", "Key
syntax", "Default bindings", "Action names").

Plain data, no screen: `uji.keymap` records and lists bindings with or without one
(`uji run`). The terminal UI turns its key events into these keys (`uji.tui.textual_keys`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal, Required, TypedDict

from uji.record import Record, Struct

MODES = ("normal", "suggest", "select", "prompt", "confirm", "overlay")

ACTIONS = frozenset(
    (
        "nothing",
        "quit",
        "clear_or_quit",
        "interrupt",
        "toggle_thinking",
        "submit",
        "clear_input",
        "backspace",
        "delete_forward",
        "delete_word_back",
        "delete_word_forward",
        "delete_to_start",
        "delete_to_end",
        "yank",
        "paste_image",
        "transpose",
        "insert_newline",
        "cursor_left",
        "cursor_right",
        "cursor_start",
        "cursor_end",
        "word_left",
        "word_right",
        "scroll_up",
        "scroll_down",
        "page_up",
        "page_down",
        "scroll_top",
        "scroll_bottom",
        "history_prev",
        "history_next",
        "history_up",
        "history_down",
        "history_search",
        "cycle_mode",
        "expand_output",
        "modal_up",
        "modal_down",
        "modal_accept",
        "modal_cancel",
        "suggest_complete",
        "confirm_allow",
        "confirm_deny",
        "confirm_toggle",
        "confirm_session",
        "confirm_always",
        "confirm_tell",
    )
)

# Our name (lower-cased) → Textual's name; the display name is the reference's spelling.
NAMED = {
    "cr": ("enter", "CR"),
    "enter": ("enter", "CR"),
    "esc": ("escape", "Esc"),
    "bs": ("backspace", "BS"),
    "del": ("delete", "Del"),
    "tab": ("tab", "Tab"),
    "left": ("left", "Left"),
    "right": ("right", "Right"),
    "up": ("up", "Up"),
    "down": ("down", "Down"),
    "home": ("home", "Home"),
    "end": ("end", "End"),
    "pageup": ("pageup", "PageUp"),
    "pagedown": ("pagedown", "PageDown"),
    "insert": ("insert", "Insert"),
    "space": ("space", "Space"),
    **{f"f{n}": (f"f{n}", f"F{n}") for n in range(1, 13)},
}
DISPLAY = {textual: shown for textual, shown in NAMED.values()}
_CHAR_NAMES = {"lt": "<", "gt": ">"}
_MODS = {"c": "ctrl", "a": "alt", "m": "alt", "s": "shift"}
_MOD_ORDER = ("ctrl", "alt", "shift")


class KeyError_(ValueError):
    """An unparseable key (the name avoids shadowing the builtin KeyError)."""


class Key(Record):
    mods: frozenset[str]
    base: str  # a Textual key name ("enter", "f5") or one character

    def __str__(self) -> str:
        if not self.mods and len(self.base) == 1 and self.base not in "<> ":
            return self.base
        prefix = "".join(m[0].upper() + "-" for m in _MOD_ORDER if m in self.mods)
        base = DISPLAY.get(self.base)
        if base is None:
            base = {"<": "lt", ">": "gt", " ": "Space"}.get(self.base, self.base)
        return f"<{prefix}{base}>"


def make_key(mods: set[str], base: str) -> Key:
    """A key from its modifiers and base, in the one spelling bindings are stored under."""
    # Shift of a letter is the capital letter: "<S-a>" and "A" are one key.
    if len(base) == 1 and "shift" in mods and base.isalpha():
        mods = mods - {"shift"}
        base = base.upper()
    if base == " ":
        base = "space"
    return Key(frozenset(mods), base)


def parse_key(text: Any) -> Key:
    """`a`, `<C-x>`, `<A-x>`/`<M-x>`, `<S-x>`, `<C-A-x>`, `<CR>`, `<S-Tab>`, `<lt>`, `<F5>`."""
    if not isinstance(text, str) or not text:
        raise KeyError_('a key is a string such as "<C-x>", "<CR>" or "y"')
    if len(text) == 1:
        return make_key(set(), text)
    if not (text.startswith("<") and text.endswith(">")):
        name = NAMED.get(text.lower())
        if name is not None:
            return make_key(set(), name[0])
        raise KeyError_(f'cannot read the key "{text}": write one character, or <C-x>, <A-x>, <S-Tab>, <CR>…')
    inner = text[1:-1]
    mods: set[str] = set()
    while len(inner) > 2 and inner[1] == "-" and inner[0].lower() in _MODS:
        mods.add(_MODS[inner[0].lower()])
        inner = inner[2:]
    if len(inner) == 1:
        return make_key(mods, inner)
    lowered = inner.lower()
    if lowered in _CHAR_NAMES:
        return make_key(mods, _CHAR_NAMES[lowered])
    if lowered in NAMED:
        return make_key(mods, NAMED[lowered][0])
    raise KeyError_(
        f'cannot read the key "{text}": "{inner}" is not a key name '
        "(named keys: CR Esc BS Del Tab Left Right Up Down Home End PageUp PageDown Insert Space lt gt F1..F12)"
    )


BindingKind = Literal["action", "command", "function", "unbound"]


class KeymapRow(TypedDict, total=False):
    """One line of `uji.keymap.list()`."""

    mode: Required[str]
    key: Required[str]
    action: str  # an action name, or "<mode> <key>" for a Lua function
    command: str
    unbound: bool


class Binding(Struct):
    kind: BindingKind
    value: Any = None  # the action name, the command name, or the Lua function
    origin: str | None = None

    def row(self, mode: str, key: Key) -> KeymapRow:
        out: KeymapRow = {"mode": mode, "key": str(key)}
        if self.kind == "command":
            out["command"] = self.value
        elif self.kind == "unbound":
            out["unbound"] = True
        elif self.kind == "function":
            out["action"] = f"{mode} {key}"
        else:
            out["action"] = self.value
        return out


EDIT_MODES = ("normal", "suggest", "prompt", "select")
MODAL_MODES = ("select", "suggest", "confirm")


def _defaults() -> dict[tuple[str, Key], Binding]:
    table: list[tuple[str, str | dict[str, str], tuple[str, ...]]] = [
        ("<C-c>", "clear_or_quit", MODES),
        ("<C-r>", "history_search", ("normal",)),
        ("<S-Tab>", "cycle_mode", ("normal", "suggest")),
        ("<C-o>", "expand_output", ("normal",)),
        ("<C-a>", "cursor_start", EDIT_MODES),
        ("<C-e>", "cursor_end", EDIT_MODES),
        ("<C-b>", "cursor_left", EDIT_MODES),
        ("<C-f>", "cursor_right", EDIT_MODES),
        ("<A-b>", "word_left", EDIT_MODES),
        ("<A-f>", "word_right", EDIT_MODES),
        ("<C-h>", "backspace", EDIT_MODES),
        ("<C-d>", "delete_forward", EDIT_MODES),
        ("<C-w>", "delete_word_back", EDIT_MODES),
        ("<A-BS>", "delete_word_back", EDIT_MODES),
        ("<A-d>", "delete_word_forward", EDIT_MODES),
        ("<C-u>", "delete_to_start", EDIT_MODES),
        ("<C-k>", "delete_to_end", EDIT_MODES),
        ("<C-y>", "yank", EDIT_MODES),
        ("<C-t>", "transpose", EDIT_MODES),
        ("<C-p>", "history_prev", ("normal",)),
        ("<C-n>", "history_next", ("normal",)),
        ("<C-p>", "modal_up", MODAL_MODES),
        ("<C-n>", "modal_down", MODAL_MODES),
        ("<C-g>", "modal_cancel", MODAL_MODES),
        ("<S-CR>", "insert_newline", ("normal",)),
        ("<A-CR>", "insert_newline", ("normal",)),
        ("<C-j>", "insert_newline", ("normal",)),
        ("<C-v>", "paste_image", ("normal",)),
        # The reference sets this one in uji.builtin.defaults; here it is a default
        # binding like the others, so keymap.reset() keeps it.
        ("<A-e>", {"command": "effort"}, ("normal",)),
    ]
    out: dict[tuple[str, Key], Binding] = {}
    for key, what, modes in table:
        binding = (
            Binding("command", what["command"], "default")
            if isinstance(what, dict)
            else Binding("action", what, "default")
        )
        for mode in modes:
            out[(mode, parse_key(key))] = binding
    return out


# Keys that work without a binding (reference: "Enter, Esc, Tab, the arrows, and y/n in
# confirm work without a binding; a binding on one of them overrides it"). Not listed.
def _implicit() -> dict[tuple[str, Key], str]:
    out: dict[tuple[str, Key], str] = {}

    def put(modes: tuple[str, ...], key: str, action: str) -> None:
        for mode in modes:
            out[(mode, parse_key(key))] = action

    put(("normal",), "<CR>", "submit")
    put(("normal",), "<Esc>", "interrupt")  # never touches the draft (Ctrl+C clears it)
    put(("normal",), "<Up>", "history_up")  # on the first line; else the cursor moves up
    put(("normal",), "<Down>", "history_down")  # on the last line while in the history
    put(("suggest",), "<CR>", "modal_accept")
    put(("suggest",), "<Tab>", "suggest_complete")
    put(("suggest", "select", "prompt", "confirm", "overlay"), "<Esc>", "modal_cancel")
    put(("select", "prompt", "confirm", "overlay"), "<CR>", "modal_accept")
    put(("suggest", "select", "confirm"), "<Up>", "modal_up")
    put(("suggest", "select", "confirm"), "<Down>", "modal_down")
    put(("confirm",), "y", "confirm_allow")
    put(("confirm",), "Y", "confirm_allow")
    put(("confirm",), "n", "confirm_deny")
    put(("confirm",), "N", "confirm_deny")
    put(("confirm",), "<Tab>", "confirm_toggle")
    put(("confirm",), "a", "confirm_session")
    put(("confirm",), "A", "confirm_always")
    put(("confirm",), "t", "confirm_tell")
    put(("confirm",), "T", "confirm_tell")
    for n in range(1, 10):
        put(("confirm",), str(n), f"confirm_pick_{n}")  # highlight answer n; Enter takes it
    for mode in MODES:
        put((mode,), "<PageUp>", "page_up")
        put((mode,), "<PageDown>", "page_down")
    return out


DEFAULTS = _defaults()
IMPLICIT = _implicit()


class Keymap:
    """Bindings per (mode, key): the defaults, changed by `uji.keymap.add/remove`."""

    def __init__(self) -> None:
        self._user: dict[tuple[str, Key], Binding] = {}
        self.actions: dict[str, object] = {}  # "<mode> <key>" → Lua function

    def add(self, modes: list[str], key: str, binding: Binding) -> None:
        parsed = parse_key(key)
        for mode in modes:
            check_mode(mode)
        for mode in modes:
            self._user[(mode, parsed)] = binding
            if binding.kind == "function":
                self.actions[f"{mode} {parsed}"] = binding.value

    def remove(self, modes: list[str], key: str) -> None:
        """Marks the key unbound, defaults included."""
        self.add(modes, key, Binding("unbound"))

    def reset(self) -> None:
        self._user.clear()
        self.actions.clear()

    def lookup(self, mode: str, keys: list[Key]) -> Binding | str | None:
        """A Binding, the name of an implicit action, or None (let the widget have it)."""
        for key in keys:
            found = self._user.get((mode, key)) or DEFAULTS.get((mode, key))
            if found is not None:
                return found
            implicit = IMPLICIT.get((mode, key))
            if implicit is not None:
                return implicit
        return None

    def rows(self) -> list[KeymapRow]:
        merged = dict(DEFAULTS)
        merged.update(self._user)
        rows = [b.row(mode, key) for (mode, key), b in merged.items()]
        order = {m: i for i, m in enumerate(MODES)}
        rows.sort(key=lambda r: (order[r["mode"]], r["key"]))
        return rows


def check_mode(mode: Any) -> str:
    if not isinstance(mode, str) or mode not in MODES:
        raise KeyError_(f"unknown key mode {mode!r} (modes: {', '.join(MODES)})")
    return mode


def check_binding(kind: str, value: Any, origin: str | None = None, added: Collection[str] = ()) -> Binding:
    """The binding `uji.keymap.add` asked for: an action by name (built in, or `added` by
    the config), a command by name, or a Lua function (`value`)."""
    if kind == "action":
        if value not in ACTIONS and value not in added:
            names = ", ".join(sorted({*ACTIONS, *added}))
            raise KeyError_(f"unknown action {value!r} (actions: {names})")
        return Binding("action", value, origin)
    if kind == "command":
        if not value:
            raise KeyError_('`command` names a command such as "effort"')
        return Binding("command", value, origin)
    if kind == "function":
        return Binding("function", value, origin)
    raise KeyError_(f"unknown kind of binding {kind!r} (action, command or function)")


# The key table of the README and /help, made from the bindings above: each row names
# actions, and its keys are the ones bound to them (tests/test_key_table.py checks that
# every bound action has a row and that the README shows this table).
HELP_ROWS: list[tuple[str, tuple[str, ...], str]] = [
    ("normal", ("submit",), "send (while a turn runs, the message is queued and steered in)"),
    ("normal", ("insert_newline",), "new line"),
    ("normal", ("interrupt",), "interrupt the turn (or a `!` command); the draft stays"),
    (
        "normal",
        ("clear_or_quit",),
        "clear the draft (↑ brings it back); on an empty one, again within 2 s to quit",
    ),
    ("normal", ("history_up", "history_down"), "on the first / last line: previous / next message sent"),
    ("normal", ("history_prev", "history_next"), "previous / next message sent"),
    ("normal", ("history_search",), "search the messages sent here and in earlier sessions"),
    ("normal", ("cycle_mode",), "next mode: ask → accept edits → plan (the bottom bar shows it)"),
    ("normal", ("expand_output",), "the last cut tool output, whole, in a scrollable view"),
    (
        "normal",
        ("cursor_start", "cursor_end", "cursor_left", "cursor_right", "word_left", "word_right"),
        "start / end, character and word left / right",
    ),
    (
        "normal",
        (
            "backspace",
            "delete_forward",
            "delete_word_back",
            "delete_word_forward",
            "delete_to_start",
            "delete_to_end",
            "yank",
            "transpose",
        ),
        "emacs-style deleting, yank, transpose",
    ),
    ("normal", ("page_up", "page_down"), "scroll the transcript"),
    ("normal", ("paste_image",), "paste an image from the clipboard (wl-paste or xclip)"),
    ("normal", ("command:effort",), "pick the reasoning effort"),
    ("suggest", ("suggest_complete",), "in the `/` list: complete the command"),
    (
        "select",
        ("modal_up", "modal_down", "modal_accept", "modal_cancel"),
        "in lists and questions: up / down / choose / cancel",
    ),
    (
        "confirm",
        ("confirm_allow", "confirm_session", "confirm_always", "confirm_deny", "confirm_tell"),
        "in a question: yes · yes for the session · always · no · no, and tell uji what to do instead",
    ),
    (
        "confirm",
        ("confirm_toggle",),
        "in a question: the next answer; on one that appeared as you typed, moves to it (as ↑/↓ do)",
    ),
    (
        "confirm",
        tuple(f"confirm_pick_{n}" for n in range(1, 10)),
        "in a question: pick that answer (Enter takes it), even while you were typing",
    ),
]

_HUMAN = {
    "enter": "Enter",
    "escape": "Esc",
    "backspace": "BS",
    "up": "↑",
    "down": "↓",
    "left": "←",
    "right": "→",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "tab": "Tab",
    "delete": "Del",
}


def human(key: Key) -> str:
    """ "<C-c>" as a person writes it: "Ctrl+C"; "y" stays "y"."""
    base = _HUMAN.get(key.base) or DISPLAY.get(key.base) or key.base
    if not key.mods:
        return base
    prefix = "".join(m.capitalize() + "+" for m in _MOD_ORDER if m in key.mods)
    return prefix + (base.upper() if len(base) == 1 else base)


def bound(mode: str, action: str) -> list[Key]:
    """The default and implicit keys of an action ("command:NAME" for a command) in a mode."""
    out: list[Key] = []
    for (m, key), binding in DEFAULTS.items():
        name = f"command:{binding.value}" if binding.kind == "command" else binding.value
        if m == mode and name == action:
            out.append(key)
    out += [key for (m, key), name in IMPLICIT.items() if m == mode and name == action]
    return out


def help_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for each row of the key table."""
    rows = []
    for mode, actions, what in HELP_ROWS:
        seen: list[str] = []
        for action in actions:
            for key in bound(mode, action):
                if human(key) not in seen:
                    seen.append(human(key))
        if len(seen) > 2 and "".join(seen) in "123456789":  # a run of number keys: "1–9"
            seen = [f"{seen[0]}–{seen[-1]}"]
        rows.append((", ".join(seen), what))
    return rows


def key_table() -> str:
    """The README's key table, in Markdown."""
    lines = ["| Keys | Does |", "|---|---|"]
    lines += [f"| {keys} | {what} |" for keys, what in help_rows()]
    return "\n".join(lines) + "\n"
