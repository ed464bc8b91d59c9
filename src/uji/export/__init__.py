"""`uji export` and `/export`: a saved session as Markdown, uji's JSON lines, one
self-contained HTML page, or an ATIF trajectory (Harbor's Agent Trajectory Interchange
Format). Each format renders the same entries (`entries.py`); what was saved is already
redacted, and the whole output passes the redactor of the known secrets once more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from uji.store.rows import Row
    from uji.store.sessions import Session

Format = Literal["md", "json", "html", "atif"]
FORMATS: tuple[Format, ...] = ("md", "json", "html", "atif")
SUFFIX: dict[Format, str] = {"md": ".md", "json": ".jsonl", "html": ".html", "atif": ".json"}


def render(session: Session, messages: list[Row], fmt: Format, usage: dict[str, float]) -> str:
    """The session in `fmt`."""
    if fmt == "json":
        import json

        lines: list[dict[str, object]] = [
            {
                "type": "session",
                "id": session["id"],
                "title": session["title"],
                "directory": session["directory"],
            }
        ]
        lines += [{"type": "message", "message": m} for m in messages]
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    from uji.export.entries import entries

    items = entries(messages)
    if fmt == "md":
        from uji.export.markdown import markdown

        return markdown(session, items)
    if fmt == "html":
        from uji.export.html import page

        return page(session, items)
    from uji.export.atif import trajectory

    return trajectory(session, items, usage)
