"""The composition root: the services of one running uji, made and wired together here.

One `App` per process. `uji run` and the terminal UI both build one, load the Lua
config into it, then drive turns through `agent.loop`. Each service is handed only to
those who use it:

- `gate` (tools/gate.py): the tool registry, the policy, confinement and its roots;
- `models` (providers/selection.py): the provider catalog and the model choice;
- `host` (lua/host.py): the Lua runtime, calling config functions, loading the config;
- `store` (store/sessions.py): sessions, messages and settings, opened on first use;
- `wires` (wires/registry.py): the wires by name, and `http`, the HTTP client they share;
- `events` (events.py): the hooks and notifications;
- `context` (agent/contexts.py): context providers, caching and compaction settings;
- `commands` (command_registry.py), `notice` (notices.py), `frontend` (frontend.py);
- `ui` (ui/port.py): the UI port uji.keymap, uji.ui and uji.input talk to, given by the
  frontend (the screen's, or one with no screen).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from uji.agent.contexts import PromptContext
from uji.agent.limits import Limits
from uji.command_registry import Commands
from uji.events import Events
from uji.frontend import Frontend
from uji.lua.host import THEME_SETTING, LuaHost
from uji.mcp import McpServers
from uji.notices import Notice, Notices
from uji.paths import Paths
from uji.providers.catalog import Catalog
from uji.providers.selection import ModelSelection
from uji.tools.builtin import builtin_tools
from uji.tools.gate import Gate
from uji.wires.http import Http
from uji.wires.registry import Wires

if TYPE_CHECKING:
    from uji.agent.checkpointing import TurnCheckpoints
    from uji.agent.services import TurnServices
    from uji.lua.host import HostApi
    from uji.lua.runtime import Runtime
    from uji.restart import Handover
    from uji.store.sessions import Store
    from uji.trust import ProjectTrust
    from uji.ui.port import Ui


class App:
    def __init__(
        self,
        paths: Paths,
        cwd: str | None = None,
        notice: Notice | None = None,
        ui: Ui | None = None,
        handover: Handover | None = None,
    ) -> None:
        """`handover`: what a restart hands this start (uji.os.restart); by default, what
        the process that exec'd this one handed over, if any."""
        self.paths = paths
        self.cwd = os.path.realpath(cwd or os.getcwd())
        self.notice = Notices(notice)  # called to say something; the frontend sets its sink
        if ui is None:  # no frontend: the port with no screen, its notices ours
            from uji.ui.headless import HeadlessUi

            ui = HeadlessUi(self.notice)
        self.ui = ui  # what uji.keymap, uji.ui and uji.input talk to
        self._store: Store | None = None
        self._checkpoints: TurnCheckpoints | None = None
        from uji.diagnostics import Diagnostics
        from uji.packs import Packs

        # What went wrong in Lua (config errors, failing hooks, timers, packs) is also kept
        # in <data>/diagnostics.log, secrets cut out.
        self.diagnostics = Diagnostics(paths.data, self._redact)
        self.packs = Packs(paths)
        from uji.restart import at_start

        self.host = LuaHost(
            paths,
            self._install_api,
            self._lua_problem,
            handover if handover is not None else at_start(),
            saved_theme=self._saved_theme,
        )
        self.events = Events(self.host.call_handler, self.notice)
        self.catalog = Catalog()
        self.http = Http()  # made on first use, closed by close()
        self.models = ModelSelection(
            self.catalog,
            lambda: self.store,
            self.events.publish,
            self.notice,
            paths.auth_file,
            self.host.run_loader,
            self.http,
        )
        self.gate = Gate(
            self.cwd,
            paths.auth_file,
            paths.rules_lua,
            self.catalog.key_variables,
            protected=[paths.data, *(paths.db + end for end in ("", "-wal", "-shm", "-journal"))],
        )
        for tool in builtin_tools(self.gate.sandbox):  # their previews read files as calls do
            self.gate.registry.add(tool)
        self.wires = Wires(self.http)
        self.commands = Commands()
        from uji.shared_commands import add_shared_commands

        add_shared_commands(self.commands, self.packs, self.diagnostics, ui, self.notice)
        self.context = PromptContext(self.host.call_function, paths.config)
        self.limits = Limits()  # the budgets of a turn (uji.session.configure, --max-steps)
        self.frontend = Frontend()
        # uji.mcp.add; the SDK loads on first use
        self.mcp = McpServers(self.gate.registry, self.notice, paths.data)
        self.mcp.diagnose = lambda text: self.diagnostics.add("mcp", text)
        self.mcp.roots = lambda: [self.cwd, *self.gate.roots]
        self.mcp.form = ui.form
        self.mcp.on_ask = lambda: self.gate.on_ask
        self.mcp.commands = self.commands  # a server's prompts: /mcp__server__prompt
        self.mcp.submit = self._submit
        self._trust: ProjectTrust | None = None

    @property
    def trust(self) -> ProjectTrust:
        """What the user approved in this project (its .mcp.json, its skills): uji.project."""
        if self._trust is None:
            from uji.trust import ProjectTrust

            self._trust = ProjectTrust(self.paths.data, self.cwd, self.ui, self.notice)
        return self._trust

    def _redact(self, text: str) -> str:
        from uji.tools.secrets import known_secrets

        return known_secrets(self.catalog.key_variables(), self.paths.auth_file)(text)

    def _saved_theme(self) -> str | None:
        try:
            return self.store.get_setting(THEME_SETTING)
        except Exception:  # no session store (a broken data dir): the default theme
            return None

    def _lua_problem(self, text: str) -> None:
        self.diagnostics.add("lua", text)
        self.notice(text)

    def _install_api(self) -> HostApi:
        """The host functions behind the `uji` table, one module of uji.lua.api per
        namespace, each given the services it uses when Lua first asks for one of its
        functions (the lookup is made once, when the Lua runtime is made)."""
        from uji.lua.host import HostApi, Namespace

        host, ui = self.host, self.ui
        return HostApi(
            [
                Namespace("core", "defer json notify schedule", lambda m: m.install(host)),
                Namespace("tool", "process tool", lambda m: m.install(host, self.gate)),
                Namespace("mode", "mode", lambda m: m.install(host, self.gate)),
                Namespace("sandbox", "sandbox", lambda m: m.install(host, self.gate)),
                Namespace("events", "emit off on", lambda m: m.install(host, self.events)),
                Namespace(
                    "provider", "api model provider wire", lambda m: m.install(host, self.models, self.wires)
                ),
                Namespace("command", "command", lambda m: m.install(host, self.commands)),
                Namespace("auth", "auth", lambda m: m.install(host, self.catalog, self.paths.auth_file)),
                Namespace("fs", "fs", lambda m: m.install(host, self.gate)),
                Namespace("job", "job", lambda m: m.install(host, self.gate)),
                Namespace("http", "http", lambda m: m.install(host, self.http)),
                Namespace(
                    "context",
                    "context",
                    lambda m: m.install(host, self.context, self.gate, lambda: self.frontend.agent),
                ),
                Namespace(
                    "session",
                    "session",
                    lambda m: m.install(host, self.frontend, lambda: self.store, self.cwd, self.limits),
                ),
                Namespace("mcp", "mcp", lambda m: m.install(host, self.mcp, self.cwd)),
                Namespace("project", "project", lambda m: m.install(host, lambda: self.trust)),
                # The screen's namespaces talk to the UI port the frontend gave the App.
                Namespace("keymap", "keymap", lambda m: m.install(ui, lambda: host.lua)),
                Namespace("ui", "ui", lambda m: m.install(ui, lambda: host.lua)),
                Namespace("ito", "input ui", lambda m: m.install(host, ui, lambda: self.store)),
                Namespace("input", "input", lambda m: m.install(ui, self.cwd, self.models)),
                # The original's pieces: actions, config/data/packs, diagnostics, quit and reload.
                Namespace("action", "action", lambda m: m.install(ui, lambda: host.lua)),
                Namespace(
                    "config",
                    "config data pack",
                    lambda m: m.install(
                        self.paths, self.packs, self.cwd, lambda: host.lua, host.notice, host.pack_added
                    ),
                ),
                Namespace(
                    "diagnostics",
                    "diagnostics unsupported",
                    lambda m: m.install(self.diagnostics, lambda: host.lua, self.notice),
                ),
                Namespace("lifecycle", "quit reload", lambda m: m.install(ui, lambda: host.loading_config)),
                # The original's runtime: tasks, text, the system, processes, SQLite, sockets.
                Namespace("tasks", "promise sleep task", lambda m: m.install(host)),
                Namespace(
                    "text",
                    "base64 diff fuzzy glob markdown matcher random regex sha256 toml width",
                    lambda m: m.install(host),
                ),
                Namespace(
                    "system",
                    "clipboard image keychain modules os",
                    lambda m: m.install(host, self.packs, self.cwd, ui),
                ),
                Namespace("proc", "proc", lambda m: m.install(host)),
                Namespace("db", "db", lambda m: m.install(host)),
                Namespace("net", "conn net server stream", lambda m: m.install(host, self.http)),
                Namespace("tty", "tty", lambda m: m.install(host, ui)),
            ]
        )

    @property
    def store(self) -> Store:
        if self._store is None:
            from uji.store.sessions import Store

            self._store = Store(self.paths.db)
        return self._store

    @property
    def checkpoints(self) -> TurnCheckpoints:
        """The files' checkpoints before each turn (the shadow repository opens on first use)."""
        if self._checkpoints is None:
            from uji.agent.checkpointing import TurnCheckpoints
            from uji.store.checkpoints import Checkpoints

            data, cwd = self.paths.data, self.cwd
            self._checkpoints = TurnCheckpoints(lambda: Checkpoints(data, cwd), self.notice)
        return self._checkpoints

    @property
    def lua(self) -> Runtime:
        return self.host.lua

    @property
    def _lua(self) -> Runtime | None:
        return self.host.loaded

    def turn_services(self) -> TurnServices:
        """What an Agent is given: the services its turns use (the store opens now)."""
        from uji.agent.services import TurnServices

        return TurnServices(
            store=self.store,
            gate=self.gate,
            models=self.models,
            wires=self.wires,
            hooks=self.events,
            context=self.context,
            notice=self.notice,
            tools_ready=self.mcp.wait_ready,
            choose_model=self.ui.choose_model,
            limits=self.limits,
            ask_continue=self._ask_continue,
            checkpoints=self.checkpoints,
            resources=self.mcp.mentioned,
        )

    async def _ask_continue(self, title: str, go_on: str) -> bool:
        """At a budget: the frontend's question; no screen (None) stops the turn."""
        answer = self.ui.select(title, [go_on, "Stop the turn"], 0)
        return answer is not None and await answer == 0

    def _submit(self, text: str) -> None:
        """A message sent as if typed (an MCP prompt's command): the frontend's."""
        if self.frontend.on_submit is not None:
            self.frontend.on_submit(text)

    def set_notice_sink(self, sink: Notice) -> None:
        self.notice.set_sink(sink)

    async def load_config(self) -> None:
        try:
            self.models.restore_custom()
            await self.host.load_config()
            self._check_override_packs()
            # The project's .mcp.json, once the config had its say (uji.mcp.configure{project}).
            self.mcp.import_project(self.trust, self.cwd, dict(os.environ))
            if self.models.provider_id is None:
                # The config chose no model: the one saved last time (its provider may be
                # one the config just added).
                self.models.restore_model()
            self.host.run_scheduled()
        finally:
            _collect_from_now_on()

    def _check_override_packs(self) -> None:
        """Packs that replace uji's own modules (lua/uji/, native/uji/) are remembered in
        overrides.json; one the config added that was not on the path from boot asks for
        one restart, so that its modules apply from the start."""
        from uji import restart

        found = [r for r in self.packs.all_roots()[1:] if restart.is_override(r)]
        booted = self.host.boot_overrides
        if found == booted:
            return
        restart.write_overrides(self.paths.data, found)
        new = [r for r in found if r not in booted and r not in self.host.handover.roots]
        if not new or self.host.handover.overrides or restart.too_many(self.host.handover):
            return
        self.notice(
            f"{', '.join(new)}: replaces uji's own modules; starting again once so that it applies from the start"
        )
        handover = restart.next_run(
            self.host.handover, self.host.handover.carry, self.host.handover.roots, overrides=True
        )
        # loading_config: the frontend starts again once this load is over.
        self.ui.restart(restart.Restart(handover=handover), loading_config=True)

    async def close(self) -> None:
        self.models.close()
        if self._trust is not None:
            self._trust.close()
        await self.mcp.close()
        await self.events.drain()
        from uji.tools.builtin.run_command import remove_spills

        remove_spills()  # run_command's overflow files live only as long as the session
        await self.host.settle()
        self.host.close()
        if self._store is not None:
            self._store.close()
        await self.http.aclose()


def _collect_from_now_on() -> None:
    """The cycle collector back on after the start-up, which `uji` runs without it
    (cli.tune_gc): what the start-up made is frozen, so no collection walks it again."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()
