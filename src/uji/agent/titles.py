"""Session titles: a side request for at most six words, sanitised to one short line."""

from __future__ import annotations

PLACEHOLDERS = frozenset({"", "untitled", "new", "resumed"})
INPUT_CHARS = 2000
MAX_CHARS = 60
PROMPT = (
    "Give a title of at most 6 words for a coding session that starts with the user's message below. "
    "Answer with the title only: no quotes, no punctuation at the end."
)


def sanitize(answer: str) -> str:
    """First non-blank line, without #-* markers, quotes or trailing .!?, at most 60 chars."""
    line = next((ln.strip() for ln in answer.splitlines() if ln.strip()), "")
    line = line.lstrip("#-* ").strip()
    line = line.strip("\"'`“”‘’").strip()
    line = line.rstrip(".!?").strip()
    return line[:MAX_CHARS].rstrip()


def clip_input(text: str) -> str:
    return text[:INPUT_CHARS]
