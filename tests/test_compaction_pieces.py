"""The pure pieces of compaction (uji.agent.compaction), each at its edges: where the kept
part begins, the labelled transcript the summariser reads, the files a session touched, and
the summariser's request. test_compaction.py runs the whole through the agent; these are
the boundaries a run reaches only by chance (a kept part of exactly the asked size, a cut
inside a run of tool results, a skipped row in the middle). Each message of `text` "x" * 4n
is n tokens (characters / 4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from uji.agent.compaction import (
    TRANSCRIPT_CHARS,
    UPDATE,
    cut_index,
    files_touched,
    request_text,
    transcript,
)

pytestmark = pytest.mark.timeout(10)


def user(tokens: int) -> dict[str, Any]:
    return {"type": "user", "text": "x" * (4 * tokens)}


def call(name: str, args: str) -> dict[str, Any]:
    return {"type": "assistant", "text": "", "tool_calls": [{"id": "c", "name": name, "arguments": args}]}


def test_the_kept_part_is_exactly_what_was_asked_for_or_more() -> None:
    history = [user(10), user(10), user(10), user(10)]
    assert cut_index(history, 0, 20) == 2  # the last two: exactly 20 tokens
    assert cut_index(history, 0, 21) == 1  # one more token: one more message
    assert cut_index(history, 0, 1) == 3
    assert cut_index(history, 0, 40) is None  # everything kept: nothing to fold
    assert cut_index(history, 1, 30) is None  # the kept part reaches the start
    assert cut_index(history, 1, 20) == 2


def test_a_cut_never_separates_tool_results_from_their_call() -> None:
    read = call("read_file", '{"path": "a"}')
    history: list[dict[str, Any]] = [
        user(10),
        read,
        {"type": "tool", "id": "c", "name": "read_file", "content": "x" * 40},
        {"type": "file", "path": "b", "content": "x" * 40},
        {"type": "tool", "id": "c", "name": "read_file", "content": "x" * 40},
    ]
    assert cut_index(history, 0, 10) == 1  # back over the results and the file to the call
    assert cut_index(history, 1, 10) is None  # the call is the start: nothing before it to fold


def test_the_transcript_labels_each_row_and_leaves_out_what_is_not_conversation() -> None:
    rows: list[dict[str, Any]] = [
        {"type": "compaction", "summary": "S"},
        {"type": "user", "text": "hi"},
        {"type": "context", "text": "CTX"},
        call("read_file", '{"path": "a"}'),
        {"type": "tool", "name": "read_file", "content": "body"},
        {"type": "shell", "text": "SHELL"},
        {"type": "file", "path": "b.txt", "content": "B"},
        {"type": "file", "path": "c.png", "content": [{"image": 1}]},
        {"type": "assistant", "text": "done"},
    ]
    assert transcript(rows) == (
        '[earlier summary]\nS\n\n[user]\nhi\n\n[assistant]\n(called read_file {"path": "a"})\n\n'
        "[read_file]\nbody\n\n[the user attached b.txt]\nB\n\n[assistant]\ndone"
    )


def test_the_transcript_keeps_the_newest_up_to_its_size() -> None:
    # Two blocks and the blank line between them fill the size exactly.
    block = (TRANSCRIPT_CHARS - 2) // 2 - len("[user]\n")
    rows = [{"type": "user", "text": "old"}] + [{"type": "user", "text": "y" * block} for _ in range(2)]
    text = transcript(rows)
    assert "old" not in text and text.count("[user]") == 2
    rows[-1]["text"] += "y"  # one character more: only the newest fits
    assert transcript(rows).count("[user]") == 1


def test_the_files_a_session_touched_in_order_once() -> None:
    rows: list[dict[str, Any]] = [
        call("write_file", '{"path": "a.py"}'),
        {  # a call whose arguments are not JSON is read past, not stopped at
            "type": "assistant",
            "text": "",
            "tool_calls": [
                {"id": "c1", "name": "run_command", "arguments": "not json"},
                {"id": "c2", "name": "read_file", "arguments": '{"path": "d.py"}'},
            ],
        },
        call("read_file", '{"path": "b.py"}'),
        call("read_file", '{"path": "a.py"}'),
        call("read_file", '{"path": ""}'),
        call("read_file", '{"path": 7}'),
        call("read_file", json.dumps(["c.py"])),
    ]
    assert files_touched(rows, ["z.py"]) == ["z.py", "a.py", "d.py", "b.py"]


def test_the_summariser_updates_a_previous_summary_or_writes_one() -> None:
    rows = [{"type": "user", "text": "hi"}]
    system, message = request_text(rows, "OLD")
    assert system.endswith(UPDATE) and message.startswith("<previous-summary>\nOLD\n</previous-summary>")
    system, message = request_text(rows, None)
    assert UPDATE not in system and "previous-summary" not in message and "[user]\nhi" in message
