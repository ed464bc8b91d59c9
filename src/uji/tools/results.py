"""Turning what a tool returned into what the model gets."""

from __future__ import annotations

from typing import Any

from uji.tools.base import ToolResult

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


def keep_images(text: str, images: Any) -> tuple[str, list[dict[str, Any]]]:
    """Keep the images that can be sent; the text ends with a note naming how many were
    left out and why."""
    if images is None or images == {}:
        return text, []
    if not isinstance(images, list):
        images = [images]
    kept: list[dict[str, Any]] = []
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


def from_value(value: Any) -> ToolResult | str:
    """A run result: a string, or a table {text, images}. Returns the error text for
    anything else."""
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
        return ToolResult(text, images)
    kind = "table" if isinstance(value, list) else type(value).__name__
    return f"error: the tool returned a {kind}; return a string, a table {{text=..., images=...}}, nothing, or a cancel function"
