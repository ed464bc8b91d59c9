"""What of the stored messages (`uji.store.rows`: user, assistant, tool, file, compaction,
context, error, system, shell) the model is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uji.wires.base import AssistantItem, Message, ToolItem, UserItem

if TYPE_CHECKING:
    from uji.store.rows import CompactionRow, FileRow, Row
CRASH_ERROR = "error: uji stopped before this tool returned a result"
SUMMARY_HEAD = "Summary of the earlier part of this conversation:"


def summary_message(compaction: CompactionRow) -> UserItem:
    text = f"{SUMMARY_HEAD}\n\n{compaction.get('summary', '')}"
    files = compaction.get("files") or []
    if files:
        text += "\n\nFiles touched so far: " + ", ".join(files)
    return {"type": "user", "text": text}


# After an answer the user stopped with Esc (or SIGINT), as the model receives it.
INTERRUPTED_ANSWER = "\n\n[the user interrupted this answer here]"


def live(history: list[Row]) -> tuple[CompactionRow | None, list[Row]]:
    """The latest compaction (or None) and the messages it did not fold."""
    last: CompactionRow | None = None
    for m in reversed(history):
        if m["type"] == "compaction":
            last = m
            break
    if last is None:
        return None, list(history)
    through = last.get("through", 0)
    return last, [m for m in history if m.get("seq", 0) > through and m["type"] != "compaction"]


def for_model(history: list[Row]) -> list[Message]:
    """The messages a wire sends: a summary for what the latest compaction folded, then
    the rest, with `context` as user text; shell, job, system and error rows never go."""
    compaction, rest = live(history)
    out: list[Message] = [summary_message(compaction)] if compaction is not None else []
    answered = {m.get("tool_call_id") for m in rest if m["type"] == "tool"}
    for m in rest:
        if m["type"] == "user":
            user: UserItem = {"type": "user", "text": m.get("text", "")}
            if m.get("images"):
                user["images"] = m["images"]
            out.append(user)
        elif m["type"] == "context":
            out.append({"type": "user", "text": m.get("text", "")})
        elif m["type"] == "file":
            _attach_file(out, m)
        elif m["type"] == "assistant":
            text = m.get("text", "")
            if m.get("interrupted"):
                text = f"{text}{INTERRUPTED_ANSWER}"
            assistant: AssistantItem = {"type": "assistant", "text": text}
            if m.get("tool_calls"):
                assistant["tool_calls"] = m["tool_calls"]
            if m.get("reasoning"):
                assistant["reasoning"] = m["reasoning"]
            if m.get("replay"):
                assistant["replay"] = m["replay"]
            out.append(assistant)
            # A call left unanswered (a crash) still needs an answer on the wire.
            for call in m.get("tool_calls") or []:
                if call["id"] not in answered:
                    out.append(
                        {
                            "type": "tool",
                            "tool_call_id": call["id"],
                            "name": call["name"],
                            "content": CRASH_ERROR,
                        }
                    )
                    answered.add(call["id"])
        elif m["type"] == "tool":
            tool: ToolItem = {
                "type": "tool",
                "tool_call_id": m.get("tool_call_id", ""),
                "name": m.get("name", ""),
                "content": m.get("content", ""),
            }
            if m.get("images"):
                tool["images"] = m["images"]
            out.append(tool)
    return _answers_after_calls(out)


def _attach_file(out: list[Message], row: FileRow) -> None:
    """An attached `@path` file joins the user message it follows (alone, if compaction
    folded that message away); a refused one sends nothing."""
    from uji.agent.mentions import block

    text = block(row)
    if text is None:
        return
    last = out[-1] if out else None
    if last is None or last["type"] != "user":
        last = {"type": "user", "text": ""}
        out.append(last)
    last["text"] = f"{last['text']}\n\n{text}" if last["text"] else text
    if row.get("images"):
        last["images"] = [*last.get("images", []), *row["images"]]


def _answers_after_calls(items: list[Message]) -> list[Message]:
    """Providers need each assistant's tool answers right after it. Repaired answers are
    appended later in the store, so move every answer next to its call."""
    answers = {m["tool_call_id"]: m for m in items if m["type"] == "tool"}
    out: list[Message] = []
    placed: set[str] = set()
    for m in items:
        if m["type"] == "tool":
            continue
        out.append(m)
        if m["type"] == "assistant":
            for call in m.get("tool_calls") or []:
                answer = answers.get(call["id"])
                if answer is not None and call["id"] not in placed:
                    out.append(answer)
                    placed.add(call["id"])
    return out
