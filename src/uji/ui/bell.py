"""The bell when uji needs you: a turn ended or a question waits while the terminal is
not focused (focus reporting). What it sends is `uji.ui.configure{ notify = ... }`:

- "auto" (the default): OSC 9 where the terminal is known to show it (iTerm2, WezTerm,
  Ghostty, kitty, Windows Terminal), OSC 777 where that one is (foot, urxvt, VTE
  terminals such as GNOME Terminal), else BEL;
- "osc9", "osc777" or "bell": that one; "off": nothing;
- a function(reason, text): called instead ("turn_done" or "question", and what to
  say); what it returns, if one of the names above, is sent as well.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

Style = Literal["auto", "osc9", "osc777", "bell", "off"]
STYLES: tuple[Style, ...] = ("auto", "osc9", "osc777", "bell", "off")
Reason = Literal["turn_done", "question"]
OSC9_PROGRAMS = ("iTerm.app", "WezTerm", "ghostty", "WindowsTerminal")
OSC777_TERMS = ("foot", "rxvt")


def resolve(style: Style, env: Mapping[str, str] | None = None) -> Style:
    """The style for this terminal: "auto" made concrete, any other as it is."""
    if style != "auto":
        return style
    env = os.environ if env is None else env
    program, term = env.get("TERM_PROGRAM", ""), env.get("TERM", "")
    if program in OSC9_PROGRAMS or "kitty" in term or env.get("WT_SESSION"):
        return "osc9"
    if any(t in term for t in OSC777_TERMS) or env.get("VTE_VERSION"):
        return "osc777"
    return "bell"


def _clean(text: str) -> str:
    """Text that cannot end the escape early (no control characters, no `;` for 777)."""
    return "".join(c for c in text if c >= " " and c != "\x7f")[:200]


def escape(style: Style, title: str, body: str, env: Mapping[str, str] | None = None) -> str:
    """The bytes to write to the terminal for `style` ("" for off)."""
    match resolve(style, env):
        case "osc9":
            return f"\x1b]9;{_clean(f'{title}: {body}')}\x07"
        case "osc777":
            return f"\x1b]777;notify;{_clean(title).replace(';', ',')};{_clean(body)}\x07"
        case "bell":
            return "\x07"
    return ""
