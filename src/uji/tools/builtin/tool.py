"""What the built-in tools share: their subject is one of their arguments, and they
reach files through the sandbox they are given."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from uji.tools.base import Tool

if TYPE_CHECKING:
    from uji.tools.confine import Sandbox
    from uji.tools.verdict import Decision

SandboxFactory = Callable[[], "Sandbox"]


if TYPE_CHECKING:
    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class BuiltinSpec(TypedDict):
        """What a built-in tool is (each module's SPEC)."""

        name: str
        description: str
        parameters: dict[str, Any]  # the JSON schema of its arguments
        policy: Decision  # its default rule
        verb: str
        question: str | None
        path_subject: bool
        subject_key: str  # the argument that is its subject


class BuiltinTool(Tool):
    """A built-in tool: its subject is one of its arguments (`SPEC["subject_key"]`), it
    checks its own arguments, and it reaches files through the sandbox it is given: a
    function, so that `uji.tool.confine` and `uji.tool.roots` apply from the next call."""

    SPEC: ClassVar[BuiltinSpec]
    checks_arguments = True
    declares_subject = True

    def __init__(self, sandbox: SandboxFactory) -> None:
        spec = self.SPEC
        super().__init__(
            spec["name"],
            description=spec["description"],
            parameters=spec["parameters"],
            policy=spec["policy"],
            verb=spec["verb"],
            question=spec.get("question"),
        )
        self.subject_key: str = spec["subject_key"]
        self.path_subject = self.confined = bool(spec["path_subject"])
        self.command_subject = self.subject_key == "command"
        self.sandbox = sandbox

    def subject(self, args: dict[str, Any]) -> str:
        value = args.get(self.subject_key)
        return value if isinstance(value, str) else ""

    def subject_hint(self, args: dict[str, Any] | None) -> str | None:
        return None if args is None else self.subject(args)
