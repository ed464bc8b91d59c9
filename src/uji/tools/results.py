"""Turning what a tool returned into what the model gets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from uji.tools.base import ToolResult

if TYPE_CHECKING:
    from uji.wires.base import Image

MEDIA_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGE_BASE64 = 5 * 1024 * 1024  # 5 MB of base64, about 3.75 MB raw


def image_problem(image: Any) -> str | None:
    """Why an image cannot be sent, or None when it can."""
    if not isinstance(image, dict):
        return "was not a table"
    if image.get("media_type") not in MEDIA_TYPES:
        return "had no supported media_type"
    data = image.get("data")
    if not isinstance(data, str) or not data:
        return "had no data"
    if len(data) > MAX_IMAGE_BASE64:
        return "was over 5 MB"
    return None


def keep_images(text: str, images: Any) -> tuple[str, list[Image]]:
    """Keep the images that can be sent; the text ends with a note naming how many were
    left out and why."""
    if images is None or images == {}:
        return text, []
    if not isinstance(images, list):
        images = [images]
    kept: list[Image] = []
    reasons: dict[str, int] = {}
    for image in images:
        problem = image_problem(image)
        if problem is None:
            kept.append({"media_type": image["media_type"], "data": image["data"]})
        else:
            reasons[problem] = reasons.get(problem, 0) + 1
    if reasons:
        dropped = sum(reasons.values())
        why = "; ".join(f"{n} {reason}" for reason, n in reasons.items())
        note = f"[{dropped} image(s) left out: {why}; images must be png, jpeg, gif or webp with data of at most 5 MB]"
        text = f"{text}\n{note}" if text else note
    return text, kept


def unified(diff: dict[str, Any]) -> str | None:
    """A `uji.diff` table `{path, changes}` as the unified diff the transcript shows."""
    path, hunks = diff.get("path") or "file", diff.get("changes")
    if not isinstance(hunks, list):
        return None
    out = [f"--- a/{path}", f"+++ b/{path}"]
    marks = {"context": " ", "removed": "-", "added": "+"}
    for hunk in hunks:
        rows = [r for r in hunk if isinstance(r, dict)] if isinstance(hunk, list) else []
        if not rows:
            continue
        olds = [r["old"] for r in rows if isinstance(r.get("old"), int)]
        news = [r["new"] for r in rows if isinstance(r.get("new"), int)]
        old_n = sum(r.get("kind") != "added" for r in rows)
        new_n = sum(r.get("kind") != "removed" for r in rows)
        out.append(f"@@ -{olds[0] if olds else 0},{old_n} +{news[0] if news else 0},{new_n} @@")
        for r in rows:
            parts = r.get("parts") or []
            text = "".join(p.get("text", "") for p in parts if isinstance(p, dict))
            out.append(marks.get(str(r.get("kind")), " ") + text)
    return "\n".join(out) + "\n"


def from_value(value: Any) -> ToolResult | str:
    """A run result: a string, or a table {text, images, diff?, summary?} (diff and
    summary are for the transcript: a unified diff or a `uji.diff` table, a line).
    Returns the error text for anything else."""
    if isinstance(value, str):
        return ToolResult(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ToolResult(str(value))
    if isinstance(value, dict):
        text = value.get("text", "")
        if text is None:
            text = ""
        if not isinstance(text, str):
            return (
                f"error: the tool's result table has a `text` that is a {type(text).__name__}, not a string"
            )
        text, images = keep_images(text, value.get("images"))
        summary, diff = value.get("summary"), value.get("diff")
        return ToolResult(
            text,
            images,
            diff=diff if isinstance(diff, str) else unified(diff) if isinstance(diff, dict) else None,
            summary=summary if isinstance(summary, str) else None,
        )
    kind = "table" if isinstance(value, list) else type(value).__name__
    return f"error: the tool returned a {kind}; return a string, a table {{text=..., images=...}}, nothing, or a cancel function"
