"""The ACP agent: the client's requests answered with uji's own sessions.

Each ACP session is an ordinary uji session (`uji list` and `uji resume` see it), run by
its own `App` (its working directory, its config, its gate) and `Agent`, as `uji run`
runs one. A call that would ask becomes a `session/request_permission` with the choices
uji's own question has; `session/cancel` stops the turn as Esc does; the gate's modes
(ask, accept edits, plan) are the session's modes.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import sys
from typing import TYPE_CHECKING, Any

from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AudioContentBlock,
    AuthenticateResponse,
    ClientCapabilities,
    CloseSessionResponse,
    CurrentModeUpdate,
    EmbeddedResourceContentBlock,
    ForkSessionResponse,
    HttpMcpServer,
    ImageContentBlock,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    ResourceContentBlock,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from acp import PROTOCOL_VERSION, RequestError
from uji import __version__
from uji.acp.updates import Update, Updates
from uji.agent.approval import Answer, Question
from uji.events.stream import AgentEvent, SessionCreated, SessionResumed
from uji.paths import Paths

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import AcpMcpServer

    from uji.agent.loop import Agent, TurnResult
    from uji.app import App
    from uji.wires.base import Image

    McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio
    PromptBlock = (
        TextContentBlock
        | ImageContentBlock
        | AudioContentBlock
        | ResourceContentBlock
        | EmbeddedResourceContentBlock
    )

# uji's question, as the editor offers it: allow once, for the session, always, or deny.
ALLOW_ONCE = PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")
ALLOW_SESSION = PermissionOption(
    option_id="allow_session", name="Allow for this session", kind="allow_always"
)
ALLOW_ALWAYS = PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always")
REJECT = PermissionOption(option_id="reject", name="Deny", kind="reject_once")
REMEMBER = {"allow_session": "session", "allow_always": "always"}
INVALID_PARAMS = -32602
# How long a turn waits for an MCP server the editor passed to connect: the editor chose
# it for this session, so its tools are waited for longer than a config's (5 s).
MCP_WAIT = 60.0
TURN_FAILED = -32603


def log(text: str) -> None:
    """uji's notices go to stderr, which editors keep in their logs: stdout is the protocol's."""
    print(f"uji: {text}", file=sys.stderr, flush=True)


class Session:
    """One ACP session: a uji session, its App and Agent, and the turn that runs."""

    def __init__(self, app: App, session_id: str, conn: Client) -> None:
        from uji.agent.loop import Agent, TurnOptions

        self.app = app
        self.id = session_id
        self.conn = conn
        self.updates = Updates(app.cwd)
        self.turn: asyncio.Task[TurnResult] | None = None
        self.mode = app.gate.modes.get().name
        # Notifications go out in order through one queue: the agent's sink is not async.
        self._outbox: asyncio.Queue[Update | _Flush | None] = asyncio.Queue()
        self._sender = asyncio.get_running_loop().create_task(self._send_all())
        self.agent: Agent = Agent(
            app.turn_services(), session_id, self._event, self._approve, TurnOptions(auto_title=True)
        )
        app.frontend.agent = self.agent
        app.frontend.on_interrupt = self.cancel

    def _event(self, event: AgentEvent) -> None:
        for update in self.updates.for_event(event):
            self.send(update)

    def send(self, update: Update) -> None:
        self._outbox.put_nowait(update)

    async def _send_all(self) -> None:
        while (update := await self._outbox.get()) is not None:
            if isinstance(update, _Flush):
                update.done.set_result(None)
                continue
            try:
                await self.conn.session_update(session_id=self.id, update=update)
            except Exception as e:  # the client went away: the turn goes on and is saved
                log(f"session/update not sent: {e}")

    async def flush(self) -> None:
        """Wait until every update so far is sent (before a prompt's response)."""
        done = asyncio.get_running_loop().create_future()
        self._outbox.put_nowait(_Flush(done))
        await done

    async def _approve(self, question: Question) -> Answer:
        options = [ALLOW_ONCE, *((ALLOW_SESSION, ALLOW_ALWAYS) if question.remember else ()), REJECT]
        await self.flush()  # the tool_call the question is about goes first
        response = await self.conn.request_permission(
            session_id=self.id, tool_call=self.updates.permission_call(question), options=options
        )
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id == REJECT.option_id:
            return Answer(False, "user", None)
        return Answer(True, "user", remember=REMEMBER.get(outcome.option_id))

    def cancel(self) -> bool:
        """Stop the running turn, as Esc does; False when none runs."""
        if self.turn is None or self.turn.done():
            return False
        self.turn.cancel()
        return True

    async def prompt(self, text: str, images: list[Image]) -> StopReason:
        if self.turn is not None and not self.turn.done():
            raise RequestError(INVALID_PARAMS, "a prompt is still running in this session")
        self.turn = asyncio.get_running_loop().create_task(self.agent.turn(text, images or None))
        try:
            result = await asyncio.shield(self.turn)
        except asyncio.CancelledError:  # the request itself was cancelled: so is the turn
            self.cancel()
            result = await self.turn
        await self.flush()
        self._mode_changed()
        if result.interrupted:
            return "cancelled"
        if result.budget is not None:
            return "max_tokens" if result.budget == "max_tokens" else "max_turn_requests"
        if result.error is not None:
            raise RequestError(TURN_FAILED, result.error)
        return "end_turn"

    def modes(self) -> SessionModeState:
        gate = self.app.gate
        return SessionModeState(
            current_mode_id=gate.modes.get().name,
            available_modes=[
                SessionMode(id=m.name, name=m.label, description=m.desc or None)
                for m in gate.modes.modes.values()
            ],
        )

    def set_mode(self, mode_id: str) -> None:
        from uji.lua.api.mode import switch_mode
        from uji.lua.runtime import ApiError

        try:
            switch_mode(self.app.host, self.app.gate, mode_id)
        except ApiError as e:
            raise RequestError(INVALID_PARAMS, str(e).removeprefix("uji.mode.set: ")) from None
        self.mode = self.app.gate.modes.get().name

    def _mode_changed(self) -> None:
        """A turn may change the mode (a plugin's /plan): the editor is told."""
        current = self.app.gate.modes.get().name
        if current != self.mode:
            self.mode = current
            self.send(CurrentModeUpdate(session_update="current_mode_update", current_mode_id=current))

    async def close(self) -> None:
        self.cancel()
        if self.turn is not None:
            await asyncio.wait({self.turn})
        self._outbox.put_nowait(None)
        await self._sender
        await self.app.close()


class _Flush:
    """A marker in a session's outbox: everything before it has been sent."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done


class UjiAcpAgent:
    """What `uji acp` answers; the client's connection arrives with `on_connect`."""

    def __init__(self, paths: Paths) -> None:
        self.paths = paths
        self.conn: Client | None = None
        self.sessions: dict[str, Session] = {}
        self.client_capabilities: ClientCapabilities | None = None

    def on_connect(self, conn: Client) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="uji", title="uji", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse | None:
        return None

    async def _open_app(self, cwd: str, mcp_servers: list[McpServer] | None) -> App:
        import os

        from uji.app import App
        from uji.ui.headless import HeadlessUi

        if not os.path.isabs(cwd) or not os.path.isdir(cwd):
            raise RequestError(INVALID_PARAMS, f"cwd: not an absolute path to a directory: {cwd}")
        app = App(self.paths, cwd, notice=log, ui=HeadlessUi(log))
        await app.load_config()
        for server in mcp_servers or []:
            _add_mcp(app, server)
        if app.models.provider_id is None:
            picked = await app.models.find_local_server()
            if picked is None:
                await app.close()
                from uji.headless import NO_MODEL

                raise RequestError(TURN_FAILED, NO_MODEL.replace("pass --model PROVIDER/MODEL, ", ""))
            log(picked)
        return app

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(INVALID_PARAMS, f"no session {session_id} on this connection")
        return session

    def _start(self, app: App, session_id: str) -> Session:
        assert self.conn is not None
        old = self.sessions.pop(session_id, None)
        if old is not None:
            asyncio.get_running_loop().create_task(old.close())
        session = Session(app, session_id, self.conn)
        self.sessions[session_id] = session
        return session

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        app = await self._open_app(cwd, mcp_servers)
        session_id = app.store.create_session(app.cwd, "untitled")
        app.events.publish(SessionCreated(session_id))
        session = self._start(app, session_id)
        return NewSessionResponse(session_id=session_id, modes=session.modes())

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        """A saved session reopened, its conversation told to the client again."""
        session = await self._reopen(cwd, session_id, mcp_servers)
        for update in session.updates.replay(session.app.store.messages(session_id)):
            session.send(update)
        await session.flush()
        return LoadSessionResponse(modes=session.modes())

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """A saved session reopened without telling its conversation again."""
        session = await self._reopen(cwd, session_id, mcp_servers)
        return ResumeSessionResponse(modes=session.modes())

    async def _reopen(self, cwd: str, session_id: str, mcp_servers: list[McpServer] | None) -> Session:
        from uji.store.sessions import is_session_id

        app = await self._open_app(cwd, mcp_servers)
        store = app.store
        if not is_session_id(session_id) or store.get_session(session_id) is None:
            await app.close()
            raise RequestError(INVALID_PARAMS, f"no session {session_id}")
        store.repair(session_id)  # calls a crash left unanswered
        app.events.publish(SessionResumed(session_id))
        return self._start(app, session_id)

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        raise RequestError.method_not_found("session/fork")

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.close()
        return CloseSessionResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        raise RequestError(INVALID_PARAMS, f"no config option {config_id!r}")

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        import datetime
        import os

        from uji.store.sessions import Store

        store = Store(self.paths.db)
        try:
            rows = store.list_sessions(os.path.realpath(cwd) if cwd else None)
        finally:
            store.close()
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=r["id"],
                    cwd=r["directory"],
                    title=r["title"],
                    updated_at=datetime.datetime.fromtimestamp(r["updated"] / 1000, datetime.UTC).isoformat(),
                )
                for r in rows
            ]
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[PromptBlock], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        text, images = await _read_prompt(session.app, prompt)
        return PromptResponse(stop_reason=await session.prompt(text, images))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def close(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            await session.close()


def _add_mcp(app: App, server: McpServer) -> None:
    """An MCP server the client passes, added as `uji.mcp.add` adds one."""
    from uji.mcp.config import ServerConfig

    if isinstance(server, McpServerStdio):
        config = ServerConfig(
            command=[server.command, *server.args],
            env={e.name: e.value for e in server.env},
            cwd=app.cwd,
            wait=MCP_WAIT,
        )
    elif isinstance(server, HttpMcpServer):
        config = ServerConfig(
            url=server.url, headers={h.name: h.value for h in server.headers}, wait=MCP_WAIT
        )
    else:
        log(f"MCP server {server.name!r}: only stdio and http servers are supported")
        return
    app.mcp.add(server.name, config)


async def _read_prompt(app: App, blocks: list[PromptBlock]) -> tuple[str, list[Image]]:
    """A prompt's text (resources the client embeds follow it) and its images."""
    from uji.images import ImageError, current_limits, from_bytes

    parts: list[str] = []
    images: list[Image] = []
    for i, block in enumerate(blocks, 1):
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            try:
                data = base64.b64decode(block.data, validate=True)
                images.append(
                    from_bytes(data, f"image-{i}", current_limits(app.models), where=f"prompt block {i}")
                )
            except (binascii.Error, ImageError) as e:
                raise RequestError(INVALID_PARAMS, f"prompt block {i}: {e}") from None
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{_local(block.uri)}" if block.uri.startswith("file://") else block.uri)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(f'<context uri="{resource.uri}">\n{resource.text}\n</context>')
        else:
            raise RequestError(INVALID_PARAMS, f"prompt block {i}: {block.type} is not supported")
    return "\n".join(parts), images


def _local(uri: str) -> str:
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path)
