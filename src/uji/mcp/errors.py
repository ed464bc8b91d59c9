"""Why a server failed, in one line (no SDK import: an ImportError is described too)."""

from __future__ import annotations


class McpRefused(Exception):
    """A server could not do what was asked (read a resource, get a prompt): why, in full."""


def leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def describe(e: BaseException) -> str:
    found = leaves(e)
    explained = [leaf for leaf in found if getattr(leaf, "explained", False)]
    if explained:  # uji.mcp's own (client, auth): already said in full
        return str(explained[0])
    leaf = found[0]
    if isinstance(leaf, FileNotFoundError):
        return f"command not found: {leaf.filename}"
    if isinstance(leaf, ImportError):
        return f"the mcp package could not be imported: {leaf}"
    text = str(leaf).strip().splitlines()[0] if str(leaf).strip() else ""
    return f"{type(leaf).__name__}: {text}" if text else type(leaf).__name__
