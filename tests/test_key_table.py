"""The README's key table and command list say what the keymap and the commands do:
the table is generated from the keymap, and every bound action has a row."""

from __future__ import annotations

import re
from pathlib import Path

from uji.tui.screen_commands import BUILTINS
from uji.ui.keys import DEFAULTS, HELP_ROWS, IMPLICIT, help_rows, key_table

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_the_readme_shows_the_key_table_of_the_keymap() -> None:
    assert key_table() in README


def test_every_bound_action_has_a_row_and_every_row_a_key() -> None:
    covered = {action for _, actions, _ in HELP_ROWS for action in actions}
    bound = {f"command:{b.value}" if b.kind == "command" else b.value for b in DEFAULTS.values()}
    bound |= set(IMPLICIT.values())
    missing = bound - covered
    assert not missing, f"bound but not in the key table: {sorted(missing)}"
    assert all(keys for keys, _ in help_rows()), help_rows()
    assert len(help_rows()) == len(HELP_ROWS) > 10


def test_the_readme_lists_every_builtin_command() -> None:
    listed = re.search(r"A line starting with `/` is a command.*?any added with", README, re.S)
    assert listed is not None
    names = re.findall(r"`/(\w+)`", listed.group(0))
    assert sorted(names) == sorted(BUILTINS)


def test_the_tool_doc_ends_without_a_dangling_heading() -> None:
    doc = (Path(__file__).parent.parent / "docs" / "uji.tool.txt").read_text()
    assert "Keyboard shortcuts" not in doc.rstrip().splitlines()[-1]
    assert not doc.rstrip().endswith("uji")


def test_uji_command_list_names_the_screens_builtins() -> None:
    from uji.command_registry import SCREEN_COMMANDS

    assert sorted(SCREEN_COMMANDS) == sorted(BUILTINS)


def test_every_action_the_screen_runs_is_in_its_typed_table() -> None:
    """The keymap's action names are run through `KEY_ACTIONS` (not looked up as
    methods): every one the screen runs has its entry, and the table names no other."""
    from uji.tui.app import KEY_ACTIONS
    from uji.tui.composer import EDIT_ACTIONS
    from uji.ui.keys import ACTIONS

    confirm = {a for a in ACTIONS if a.startswith("confirm_")}
    assert set(EDIT_ACTIONS) <= ACTIONS
    assert set(KEY_ACTIONS) == ACTIONS - set(EDIT_ACTIONS) - confirm
