"""Shapes shared by every tool, built in or added from Lua."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uji.tools.confine import Sandbox
    from uji.tools.secrets import Redactor


@dataclass
class ToolResult:
    """What a tool call produced. The model gets `text` and `images`; `diff` and
    `summary` are for the transcript only."""

    text: str
    images: list[dict[str, Any]] = field(default_factory=list)  # [{media_type, data(base64)}]
    diff: str | None = None
    summary: str | None = None


@dataclass
class ToolContext:
    """What a built-in tool's `run` receives besides its arguments."""

    cwd: str
    sandbox: Sandbox
    progress: Callable[[str], None] = lambda line: None
    # Whether the current model takes images (read_file refuses images when False).
    images: bool | None = None
    # The environment for commands (provider keys removed), and the known secrets, which
    # a tool that streams output cuts out as it goes.
    env: dict[str, str] | None = None
    redact: Redactor | None = None
