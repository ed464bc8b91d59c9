"""MCP servers (`uji.mcp.add`): each one's connection, state and tools.

Nothing here imports the `mcp` SDK: `uji.mcp.client` does, and it is imported (in a
thread, so the event loop and the first frame never wait for it) only when a server is
configured. A server connects in a background task; its tools register in the one tool
registry as `server__tool` (`McpTool`), so they pass the same gate as every tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from uji.mcp.config import Known, PromptInfo, ResourceInfo, ServerConfig, ToolInfo
from uji.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from typing import NotRequired, TypedDict

    from uji.agent.mentioned import Mentioned
    from uji.command_registry import Commands
    from uji.mcp.auth import Authorizer
    from uji.tools.registry import Registry
    from uji.trust import ProjectTrust
    from uji.ui.form import Form, FormAnswer
    from uji.ui.port import FormCheck

    # For the type checker only: creating a TypedDict costs ~0.2 ms.
    class ServerRow(TypedDict):
        """A server as `uji.mcp.list` gives it."""

        name: str
        state: str
        tools: NotRequired[int]
        why: NotRequired[str]
        needs_login: NotRequired[bool]


# How long a turn (the TUI's or `uji run`'s) waits for servers still connecting, unless
# uji.mcp.configure{wait} or the server's own `wait` says: `npx`-started servers take seconds.
TURN_WAIT = 10.0
# How long a call waits for its server to (re)connect.
CALL_WAIT = 30.0
# How long closing a server waits for its connection to close.
STOP_WAIT = 3.0
# How long servers wait, at most, for the screen to be ready for input (McpServers.hold).
HOLD_WAIT = 10.0


class Server:
    """One configured server: its state ("idle": its tools are known from last time and
    it starts on their first call, "connecting", "ready", "failed", "stopped") and the
    background task that holds its connection."""

    def __init__(self, name: str, config: ServerConfig, service: McpServers) -> None:
        self.name = name
        self.config = config
        self.service = service
        self.state = "stopped"
        self.why = ""
        self.tools: list[ToolInfo] = []
        self.prompts: list[PromptInfo] = []
        self.resources: list[ResourceInfo] = []
        self.session: Any = None  # the SDK's ClientSession while ready
        self.process: Any = None  # a stdio server's process (anyio's), once started
        self.task: asyncio.Task[None] | None = None
        self.settled = asyncio.Event()  # set when no longer connecting
        self.stop = asyncio.Event()
        self.refreshing: set[asyncio.Task[None]] = set()  # tools/list after list_changed
        self.log: list[str] = []  # the server's last log messages (notifications/message), for /mcp
        self.last_error = ""  # why it last failed (kept when it connects again), for /mcp
        self.needs_login = False  # it last failed asking for authorization (OAuth)
        self.disabled = False  # /mcp disabled it for the session: not started, no tools offered
        self.declined: list[str] = []  # questions (elicitation) declined during the current call
        # While `uji.mcp.auth.login` connects it: the browser and the loopback redirect. At any
        # other time an authorization the user must give fails the server (needs_login).
        self.authorizer: Authorizer | None = None

    def start(self) -> None:
        self.state, self.why, self.session, self.needs_login = "connecting", "", None, False
        self.settled = asyncio.Event()
        self.stop = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._run(), name=f"mcp:{self.name}")

    async def _run(self) -> None:
        try:
            held = self.service.held
            if held is not None:  # the screen is getting ready: the SDK's import would slow it
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(held.wait(), HOLD_WAIT)
            client = await _import_client()
            await client.serve(self)
            if self.state == "ready":  # not a died() call, which said why
                self._fail("the server closed the connection")
        except asyncio.CancelledError:
            self.state = "stopped"
            raise
        except BaseException as e:  # anything from a server becomes its state, not a crash
            from uji.mcp.errors import describe, leaves

            self.needs_login = any(getattr(leaf, "needs_login", False) for leaf in leaves(e))
            self._fail(describe(e))
        finally:
            self.session = None
            self.settled.set()

    def _fail(self, why: str) -> None:
        if self.state == "stopped":
            return
        was = self.state
        self.state, self.why, self.session = "failed", why, None
        self.last_error = why
        self.settled.set()
        if was == "connecting":
            self.service.notice(f"MCP server {self.name} failed: {why}; its tools are not offered (see /mcp)")

    def ready(self, session: Any, known: Known) -> None:
        self.session, self.state, self.needs_login = session, "ready", False
        self.set_known(known)
        self.settled.set()

    def set_tools(self, tools: list[ToolInfo]) -> None:
        self.set_known(Known(tools, self.prompts, self.resources))

    def set_known(self, known: Known) -> None:
        self.keep(known)
        self.service.register(self)
        self.service.remember(self)

    def known(self) -> Known:
        return Known(self.tools, self.prompts, self.resources)

    def keep(self, known: Known) -> None:
        self.tools, self.prompts, self.resources = known.tools, known.prompts, known.resources

    @property
    def wait(self) -> float:
        return self.config.wait if self.config.wait is not None else self.service.wait

    def died(self, why: str) -> None:
        """The connection broke during a call: the next call starts the server again."""
        self._fail(why)
        self.stop.set()

    def row(self) -> ServerRow:
        row: ServerRow = {"name": self.name, "state": self.state}
        if self.state in ("ready", "idle"):
            row["tools"] = len(self.tools)
        if self.why:
            row["why"] = self.why
        if self.needs_login:
            row["needs_login"] = True
        return row

    def label(self) -> str:
        """Its state in a word or two, for /mcp's list."""
        if self.disabled:
            return "disabled"
        if self.state == "failed":
            return "needs login" if self.needs_login else "failed"
        return {"ready": "connected", "idle": "not started", "stopped": "stopped"}.get(self.state, self.state)

    def describe(self) -> str:
        if self.disabled:
            return "disabled for this session (/mcp enables it)"
        if self.state == "ready":
            return f"ready with {len(self.tools)} tool{'s' if len(self.tools) != 1 else ''}"
        if self.state == "failed":
            return f"failed: {self.why}"
        if self.state == "idle":
            return f"not started: {len(self.tools)} tools known from last time; starts on their first call"
        return self.state

    async def close(self) -> None:
        """Stop it: a ready one closes its connection (its process ends), one still
        connecting is cancelled at once."""
        was, self.state = self.state, "stopped"
        self.stop.set()
        task = self.task
        if task is None or task.done():
            return
        if was == "ready":
            await asyncio.wait({task}, timeout=STOP_WAIT)
        if not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=STOP_WAIT)

    async def connected(self) -> str | None:
        """Start it if it is not running (or failed), and wait for it to connect; None when
        it is ready, else why not."""
        if self.disabled:
            return f"MCP server {self.name} is disabled for this session (/mcp enables it)"
        exited = self.state == "ready" and self.process is not None and self.process.returncode is not None
        if exited and self.task is not None and not self.task.done():
            # It exited while idle and the connection has yet to see it: let it, so this call
            # starts it again rather than fails.
            await asyncio.wait({self.task}, timeout=STOP_WAIT)
        if self.state in ("failed", "stopped") or self.task is None or self.task.done():
            if self.task is not None and not self.task.done():
                await self.close()
            self.start()
        try:
            await asyncio.wait_for(self.settled.wait(), CALL_WAIT)
        except TimeoutError:
            return f"MCP server {self.name} did not connect within {CALL_WAIT:g}s"
        if self.state != "ready" or self.session is None:
            return f"MCP server {self.name} is not available: {self.describe()}"
        return None

    async def call(
        self, tool: str, args: dict[str, Any], progress: Callable[[str], None] | None = None
    ) -> ToolResult:
        problem = await self.connected()
        if problem is not None:
            return ToolResult(f"error: {problem}")
        from uji.mcp.client import call_tool

        return await call_tool(self, tool, args, progress)

    async def read(self, uri: str) -> ToolResult:
        """resources/read: the resource as the model is sent it; McpRefused says why not."""
        from uji.mcp.errors import McpRefused

        problem = await self.connected()
        if problem is not None:
            raise McpRefused(problem)
        from uji.mcp.client import read_resource

        return await read_resource(self, uri)

    async def prompt(self, name: str, arguments: dict[str, str]) -> ToolResult:
        """prompts/get: the prompt's messages as one user message; McpRefused says why not."""
        from uji.mcp.errors import McpRefused

        problem = await self.connected()
        if problem is not None:
            raise McpRefused(problem)
        from uji.mcp.client import get_prompt

        return await get_prompt(self, name, arguments)


class McpServers:
    """The configured servers, by name."""

    def __init__(
        self, registry: Registry, notice: Callable[[str], None], data_dir: str | None = None
    ) -> None:
        self.registry = registry
        self.notice = notice
        self.data_dir = data_dir  # where the tools of last time are kept (uji.mcp.cache)
        self.servers: dict[str, Server] = {}
        self._pending: list[Server] = []  # added before an event loop ran
        self.project = True  # uji.mcp.configure{project = false}: never read .mcp.json
        self.wait = TURN_WAIT  # uji.mcp.configure{wait}: a turn's wait for servers without their own
        # A server whose tools are known from last time starts on their first call ("free
        # until used"); eager (the terminal UI, where /mcp shows each server's state): at once.
        self.eager = False
        # Nothing starts until a turn waits for the servers (`uji mcp login`, which starts
        # only the one it logs in to).
        self.dormant = False
        self.diagnose: Callable[[str], None] = lambda text: None  # to <data>/diagnostics.log
        self.roots: Callable[[], list[str]] = lambda: []  # the directories a server may see
        # Shows a server's question (elicitation) as a form: the UI port's, None without a
        # screen (the question is then declined and the call's result says so).
        self.form: Callable[[Form, FormCheck], Awaitable[FormAnswer] | None] = lambda form, check: None
        self.on_ask: Callable[[], str | None] = lambda: None  # `uji run --on-ask` (None: a person answers)
        # Where the servers' prompts become commands (`/mcp__server__prompt`), and how such a
        # command sends the prompt as the user's message (the frontend's submit).
        self.commands: Commands | None = None
        self.submit: Callable[[str], None] = lambda text: None
        self.project_state = ""  # what became of the project's .mcp.json, for /mcp
        self._project_task: asyncio.Task[None] | None = None  # the approval question
        self.held: asyncio.Event | None = None  # set by release(): servers may start connecting

    def hold(self) -> None:
        """Servers wait before connecting until `release()`: the SDK's import (in a thread,
        but holding the GIL much of the time) would slow the screen getting ready for input."""
        if self.held is None:
            self.held = asyncio.Event()

    def release(self) -> None:
        if self.held is not None:
            self.held.set()
            self.held = None

    def add(self, name: str, config: ServerConfig) -> None:
        old = self.servers.pop(name, None)
        if old is not None:
            self._drop(old)
        server = Server(name, config, self)
        self.servers[name] = server
        if self.data_dir is not None:
            from uji.mcp import cache

            known = cache.load(self.data_dir, name, config)
            if known is not None:
                server.state = "idle"
                server.keep(known)
                self.register(server)
                if not self.eager:
                    return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._pending.append(server)
            return
        if self.dormant:
            self._pending.append(server)
            return
        server.start()

    async def reconnect(self, name: str) -> Server:
        """/mcp: stop it and connect again (enabling it if disabled); returns once it has
        connected or failed (or after CALL_WAIT)."""
        server = self.servers[name]
        server.disabled = False
        await server.close()
        server.start()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(server.settled.wait(), CALL_WAIT)
        return server

    async def disable(self, name: str) -> None:
        """/mcp: for this session, its tools are not offered and it is not started."""
        server = self.servers[name]
        server.disabled = True
        await server.close()
        known = server.known()
        server.keep(Known())
        self.register(server)
        server.keep(known)  # still shown by /mcp

    def start_pending(self) -> None:
        pending, self._pending = self._pending, []
        for server in pending:
            if self.servers.get(server.name) is server and server.task is None:
                server.start()

    def remember(self, server: Server) -> None:
        """Keep the server's tools for the next start (uji.mcp.cache)."""
        if self.data_dir is not None and server.state == "ready" and self.servers.get(server.name) is server:
            from uji.mcp import cache

            cache.save(self.data_dir, server.name, server.config, server.known())

    def remove(self, name: str) -> bool:
        server = self.servers.pop(name, None)
        if server is None:
            return False
        self._drop(server)
        return True

    def _drop(self, server: Server) -> None:
        server.keep(Known())
        self.register(server)
        server.state = "stopped"
        server.stop.set()
        if server.task is not None and not server.task.done():
            server.task.cancel()

    def register(self, server: Server) -> None:
        """Bring the registry's `server__*` tools, and the commands of its prompts, in line
        with the server's lists."""
        self._register_prompts(server)
        prefix = tool_name(server.name, "")

        def taken(name: str) -> bool:  # by another of this server's tools, or another server's
            other = self.registry.get(name)
            return name in wanted or (isinstance(other, McpTool) and other.server is not server)

        # Two of its tools named alike once made safe for providers (`fs.read`, `fs_read`),
        # or like another server's, each keep a name of their own: the later one gets `_2`.
        wanted: dict[str, ToolInfo] = {}
        for info in server.tools:
            wanted[_unique(tool_name(server.name, info.name), taken)] = info
        for name in self.registry.names():
            tool = self.registry.get(name)
            if isinstance(tool, McpTool) and tool.server is server and name not in wanted:
                self.registry.remove(name)
        for name, info in wanted.items():
            existing = self.registry.get(name)
            if existing is not None and not isinstance(existing, McpTool) and name.startswith(prefix):
                continue  # a user's own tool of that name wins
            self.registry.add(McpTool(server, info, name))

    def _register_prompts(self, server: Server) -> None:
        from uji.mcp.prompts import register

        if self.commands is not None:
            register(self.commands, server, lambda text: self.submit(text))

    async def mentioned(self, text: str) -> list[Mentioned]:
        """The resources `text` mentions (`@server:uri`, the server one of these), read in
        order; MentionFailed names the first that could not be, and why."""
        from uji.mcp.resources import mentioned

        return await mentioned(self.servers, text)

    def import_project(self, trust: ProjectTrust, cwd: str, environ: dict[str, str]) -> None:
        """The project's `.mcp.json`: its servers are added if the user approved this
        content for this project; otherwise asked (in the background) or, with nobody
        to ask, left out with a notice. Nothing in the file runs before that."""
        if not self.project:
            return
        from uji.mcp import project

        path = project.find(cwd, trust.root)
        if path is None:
            return
        servers, problems = project.parse(path)
        for problem in problems:
            self.notice(problem)
        if not servers:
            return
        title, body = project.question(path, servers)
        decision = trust.decide(project.KIND, trust.hash([path]), title, body)

        def settle(allowed: bool) -> None:
            names = ", ".join(s.name for s in servers)
            if not allowed:
                self.project_state = f"project {path}: not approved ({names})"
                return
            self.project_state = f"project {path}: approved ({names})"
            for server in servers:
                if server.name in self.servers:
                    self.notice(f"{path}: server {server.name} is also in your config; yours is used")
                    continue
                config = server.config(os.path.dirname(path), environ)
                self.add(server.name, config)

        if isinstance(decision, bool):
            settle(decision)
            return
        self.project_state = f"project {path}: waiting for your answer"

        async def wait(answer: Awaitable[bool]) -> None:
            settle(await answer)

        self._project_task = asyncio.get_running_loop().create_task(wait(decision), name="mcp:project")

    def rows(self) -> list[ServerRow]:
        return [s.row() for s in self.servers.values()]

    def lines(self) -> list[str]:
        extra = [self.project_state] if self.project_state else []
        if not self.servers:
            return ["no MCP servers configured (uji.mcp.add)", *extra]
        lines = []
        for s in self.servers.values():
            lines.append(f"{s.name}: {s.describe()}")
            if s.last_error and s.state != "failed":
                lines.append(f"  last error: {s.last_error}")
            lines.extend(f"  log: {line}" for line in s.log[-3:])  # its last log messages
        return lines + extra

    async def wait_ready(self) -> None:
        """Wait for servers still connecting, each up to its `wait` seconds (TURN_WAIT unless
        the config says); a notice names those a turn goes on without, and why."""
        self.release()
        self.start_pending()
        # One whose tools are known from last time is not waited for: they are offered already.
        waiting = [s for s in self.servers.values() if s.state == "connecting" and not s.tools]
        if not waiting:
            return

        async def settle(server: Server) -> None:
            if server.wait > 0:
                try:
                    await asyncio.wait_for(server.settled.wait(), server.wait)
                except TimeoutError:
                    pass

        await asyncio.gather(*(settle(s) for s in waiting))
        for s in waiting:
            if s.state == "connecting":
                self.notice(
                    f"MCP server {s.name} is still connecting after {s.wait:g}s: this turn goes on "
                    "without its tools (raise the wait with uji.mcp.configure{ wait = N }; see /mcp)"
                )

    async def close(self) -> None:
        if self._project_task is not None:
            self._project_task.cancel()
        servers = list(self.servers.values())
        self.servers.clear()
        await asyncio.gather(*(s.close() for s in servers), return_exceptions=True)


_imported: list[Any] = []  # uji.mcp.client, once a thread has imported it fully


async def _import_client() -> Any:
    """Import uji.mcp.client (and so the SDK, which takes a while) in a daemon thread:
    the event loop keeps drawing frames meanwhile, and a `uji run` that ends first does
    not wait for the import at exit (as it would for asyncio's executor threads)."""
    if _imported:  # not sys.modules: a module there may still be half imported by a thread
        return _imported[0]
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(value)

    def work() -> None:
        module, error = None, None
        try:
            module = importlib.import_module("uji.mcp.client")  # the import lock makes others wait
            _imported[:] = [module]
        except BaseException as e:
            error = e
        try:
            loop.call_soon_threadsafe(settle, module, error)
        except RuntimeError:  # the loop closed meanwhile: nobody waits any more
            pass

    threading.Thread(target=work, name="uji-mcp-import", daemon=True).start()
    return await done


def tool_name(server: str, tool: str) -> str:
    """`server__tool`, with what providers refuse in a tool name made `_`, at most 64
    characters."""
    from uji.tools.registry import provider_name

    return provider_name(f"{server}__{tool}")


def _unique(name: str, taken: Callable[[str], bool]) -> str:
    """`name`, or `name_2`, `name_3`… (within the length limit) when it is taken."""
    n = 1
    found = name
    while taken(found):
        n += 1
        suffix = f"_{n}"
        found = name[: 64 - len(suffix)] + suffix
    return found


class McpTool(Tool):
    """A tool of an MCP server. Its subject is the JSON of its arguments (keys sorted),
    so a rule can match an argument's value, e.g. `{ deny = { '*"path":"/etc*' } }`."""

    checks_arguments = True  # the server checks them against its own schema
    remembers_tool = True  # "allow for the session/always": the tool, whatever its arguments

    def __init__(self, server: Server, info: ToolInfo, name: str) -> None:
        trusted = info.read_only and server.config.trust_read_only
        super().__init__(
            name,
            description=info.description,
            parameters=info.schema,
            policy="allow" if trusted else "ask",
        )
        self.server = server
        self.tool = info.name

    def subject(self, args: dict[str, Any]) -> str:
        return json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

    def subject_hint(self, args: dict[str, Any] | None) -> str | None:
        return None if args is None else self.subject(args)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return await self.server.call(self.tool, args, ctx.progress)
