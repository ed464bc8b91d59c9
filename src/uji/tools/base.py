"""Shapes shared by every tool, built in, added from Lua or (later) from an MCP server:
the `Tool` interface the agent sees, what a call gets (`ToolContext`) and gives back
(`ToolResult`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from uji.record import Record, Struct, field

if TYPE_CHECKING:
    from uji.sandbox import SandboxPolicy
    from uji.tools.confine import Sandbox
    from uji.tools.secrets import Redactor
    from uji.tools.verdict import Decision
    from uji.wires.base import Image, ToolSpec, Usage


TaskStatus = Literal["queued", "running", "done", "failed"]


class TaskRow(Record):
    """One task a running tool reports (`ctx.task`), such as a subagent it runs."""

    label: str
    status: TaskStatus
    line: str | None = None  # its live line
    detail: str | None = None  # how it ended, or more about it
    group: str | None = None
    seconds: float | None = None  # how long it has run (or ran), once it started


def _no_tasks(rows: tuple[TaskRow, ...]) -> None:
    pass


def _ignore(line: str) -> None:
    pass


def _unspent(usage: Usage, cost: float | None) -> None:
    pass


class ToolResult(Struct):
    """What a tool call produced. The model gets `text` and `images`; `diff` and
    `summary` are for the transcript only."""

    text: str
    images: list[Image] = field(default_factory=list)
    diff: str | None = None
    summary: str | None = None


class ToolContext:
    """What a tool's `run` receives besides its arguments.

    `images` and `env` are given as values, or found on first use by `find_images` and
    `find_env`: most tools never ask, and a call should not pay for them. Read them on
    the event loop, not in a worker thread (finding them may read the session store)."""

    def __init__(
        self,
        cwd: str,
        sandbox: Sandbox,
        progress: Callable[[str], None] = _ignore,
        images: bool | None = None,
        env: dict[str, str] | None = None,
        redact: Redactor | None = None,
        notice: Callable[[str], None] = _ignore,
        usage: Callable[[Usage, float | None], None] = _unspent,
        tasks: Callable[[tuple[TaskRow, ...]], None] | None = None,
        *,
        find_images: Callable[[], bool | None] | None = None,
        find_env: Callable[[], dict[str, str]] | None = None,
        os_sandbox: SandboxPolicy | None = None,
    ) -> None:
        self.cwd = cwd
        self.sandbox = sandbox  # the file tools' confinement
        # The OS sandbox the processes of this call run in (None: none, or switched off).
        self.os_sandbox = os_sandbox
        # Asks the person at the screen whether a command the sandbox stopped may run once
        # more outside it (given the reason); None where nobody answers (uji run).
        self.outside_sandbox: Callable[[str], Awaitable[bool]] | None = None
        self.progress = progress  # a line shown under the running tool
        # The known secrets, which a tool that streams output cuts out as it goes.
        self.redact = redact
        # A line for the user (not the model), such as a Lua tool's failed cancel function.
        self.notice = notice
        # Tokens and dollars spent for the session outside its own requests (a child
        # session run by the tool): added to the session's totals and the turn's budgets.
        self.usage = usage
        # What a tool stopped by an interrupt had produced (run_command: the output so far),
        # set before it lets the interrupt go on: the model and the transcript keep it.
        self.partial: str | None = None
        # The tool's tasks (`ctx.task`), all of them each time one changes.
        self.tasks = tasks or _no_tasks
        self._images, self._find_images = images, find_images
        self._env, self._find_env = env, find_env

    @property
    def images(self) -> bool | None:
        """Whether the current model takes images (read_file refuses images when False)."""
        if self._find_images is not None:
            self._images, self._find_images = self._find_images(), None
        return self._images

    @images.setter
    def images(self, value: bool | None) -> None:
        self._images, self._find_images = value, None

    @property
    def env(self) -> dict[str, str] | None:
        """The environment for commands (provider keys removed)."""
        if self._find_env is not None:
            self._env, self._find_env = self._find_env(), None
        return self._env


class Tool(ABC):
    """A tool the model can call, as the agent and the gate see it.

    The agent knows nothing else of a tool: where it comes from (Python, Lua, an MCP
    server) is the implementation's business. Each call goes: `subject(args)` once (what
    policy rules match, what the transcript and the approval question show), `preview(args)`
    when the call asks, then `run(args, ctx)` if it is allowed. A tool gets what its
    `subject` and `preview` need (a Lua runtime, a way to reach files) when it is made.

    The attributes are what the gate reads:
    - `policy`: the declared policy ("allow", "ask", "deny"), used when no rule matches.
    - `verb`, `question`: the transcript line before the subject; the approval title.
    - `path_subject`: the subject is a file path (rules also match its absolute normal
      form, a symlink is followed, the path is checked before the call).
    - `confined`: `uji.tool.confine` applies to the path (the built-in file tools).
    - `writes`: it changes the file at its path (the read-only roots are not for it).
    - `command_subject`: the subject is a shell command line whose parts are judged.
    - `checks_arguments`: the tool checks its own arguments and explains what is wrong;
      otherwise uji checks them against `parameters` first.
    - `declares_subject`: the subject stands for the arguments in the approval question
      (otherwise the question lists the arguments).
    - `remembers_tool`: "allow for the session/always" allows the tool whatever its
      arguments (an MCP tool: its arguments' JSON is rarely the same twice).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    policy: Decision | None
    verb: str | None
    question: str | None
    path_subject: bool = False
    confined: bool = False
    writes: bool = False
    command_subject: bool = False
    checks_arguments: bool = False
    declares_subject: bool = False
    remembers_tool: bool = False

    def __init__(
        self,
        name: str,
        *,
        description: str = "",
        parameters: dict[str, Any] | None = None,
        policy: Decision | None = None,
        verb: str | None = None,
        question: str | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters or {}
        self.policy = policy
        self.verb = verb
        self.question = question

    def schema(self) -> ToolSpec:
        """What the model is offered."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters or {"type": "object", "properties": {}},
        }

    def subject(self, args: dict[str, Any]) -> str:
        """What policy rules match against, and what the transcript and approval show.
        May raise: the call then fails with the error, and nothing runs."""
        return self.name

    def subject_hint(self, args: dict[str, Any] | None) -> str | None:
        """The subject when it is known without running any of the tool's code (a UI
        shows it before the call is decided, from arguments that may not parse: None);
        None when it is not."""
        return None

    async def resolve(self, args: dict[str, Any]) -> dict[str, Any] | str:
        """The arguments the call runs with, or an error text that becomes its result;
        before the subject and the policy (a Lua tool's `resolve`). Unchanged here."""
        return args

    def preview(self, args: dict[str, Any]) -> str | None:
        """What the call would change, shown with the approval question (a unified diff
        for the file tools); None when there is nothing to show. Changes nothing."""
        return None

    @abstractmethod
    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run an allowed call. An exception becomes an `error:` result for the model."""
