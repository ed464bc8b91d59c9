"""The gate: what the model may call, where it may reach, and what decides each call.

The tool registry, the policy (with the remembered approvals), confinement and its
roots, and which provider key variables commands keep (`uji.tool.inherit_keys`).
`Gate.decide` gives a call's verdict in the documented order; the agent asks the user
only when it is ask, and asks the gate for a call's sandbox, the secrets to cut out of
results and the environment commands run with. `uji.tool.*` configures it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from uji.tools.policy import Policy
from uji.tools.registry import Registry, Tool

if TYPE_CHECKING:
    from uji.sandbox import SandboxPolicy, SandboxSettings, SandboxStatus
    from uji.tools.confine import Sandbox
    from uji.tools.decision import BeforeTool
    from uji.tools.remembered import Scope
    from uji.tools.secrets import Redactor
    from uji.tools.verdict import Verdict

# What a call that would ask gets when nobody is there to answer (`uji run --on-ask`).
OnAsk = Literal["allow", "deny", "sandbox"]


class Gate:
    def __init__(
        self,
        cwd: str,
        auth_file: str,
        rules_lua: str,
        key_variables: Callable[[], Iterable[str]],
        protected: Iterable[str] = (),
    ) -> None:
        """`key_variables` gives the providers' key variables, whose values are secrets
        (the catalog's, at the time of the call); `rules_lua` is where "always allow" answers
        are written; `protected` are uji's own places (its data folder, its database)
        that no command may read or write."""
        self.cwd = cwd
        self.auth_file = auth_file
        self.rules_lua = rules_lua
        self._key_variables = key_variables
        self.registry = Registry()  # the tools are added by whoever makes them (uji.app, Lua, MCP)
        # Tools uji does not run but judges and shows (a provider's loop runs them):
        # uji.tool.display's, by name.
        self.displays: dict[str, Tool] = {}
        self.policy = Policy()
        self.confined = True
        # Provider key variables commands keep (uji.tool.inherit_keys): none, all, or these.
        self.inherit_keys: bool | list[str] = False
        self.roots: list[str] = []
        self.read_roots: list[str] = []  # uji.tool.read_roots: reads only (skill folders)
        from uji.tools.modes import Modes

        self.modes = Modes()  # the policy layer Shift+Tab switches (ask, accept_edits, plan…)
        # The run's own limits (`uji run`), which a child run it starts must not exceed:
        self.only: list[str] | None = None  # --tools: offer only these (None: every tool)
        self.on_ask: OnAsk | None = None  # --on-ask ("sandbox": its default); None: a person answers
        from uji.sandbox import SandboxSettings, floor_from_env

        # The OS sandbox of the commands the model starts (uji.sandbox.configure), and the
        # parent uji's when this one runs a subagent: never loosened below it.
        self.os_sandbox = SandboxSettings()
        self.sandbox_floor = floor_from_env()
        self.protected = [p for p in protected if p]

    def displayed(self, name: str) -> Tool:
        """A tool a provider's loop runs, as uji.tool.display describes it (else by its name)."""
        from uji.tools.displayed import Displayed

        return self.displays.get(name) or Displayed(name)

    def offered(self) -> list[Tool]:
        """The tools the model sees, sorted by name (disabled ones too: their calls are denied)."""
        return self.registry.offered(self.only)

    def available(self) -> list[str]:
        """The names of the tools a call can use now: offered and not disabled."""
        return [t.name for t in self.offered() if t.name not in self.registry.disabled]

    def sandbox_settings(self) -> SandboxSettings:
        """The OS sandbox in force: the configured one, never laxer than the parent's."""
        from uji.sandbox.policy import tighten

        return tighten(self.os_sandbox, self.sandbox_floor)

    def sandbox_status(self) -> SandboxStatus:
        from uji.sandbox import status

        return status(self.sandbox_settings())

    def command_sandbox(self) -> SandboxPolicy | None:
        """The sandbox a command started now runs in; None when there is none (off, or
        the kernel cannot)."""
        if not self.sandbox_status().available:
            return None
        from uji.sandbox import private_tmpdir
        from uji.sandbox.policy import resolve

        return resolve(
            self.sandbox_settings(),
            self.cwd,
            list(self.roots),
            self.protected,
            private_tmpdir(),
        )

    def contains(self, tool: Tool) -> bool:
        """Whether a call of `tool` made now runs inside the sandbox: a command under the
        kernel's (when the kernel can), a confined file tool within the working directory
        and the roots (not a write in read-only mode). Lua and MCP tools run in uji or in
        their server: never."""
        if tool.command_subject:
            return self.sandbox_status().available
        if tool.confined and self.confined:
            return not (tool.writes and self.sandbox_settings().mode == "read-only")
        return False

    def sandbox_floor_env(self) -> str:
        """What a child uji started for a subagent must not loosen (UJI_SANDBOX_PARENT)."""
        from uji.sandbox import floor_env

        return floor_env(self.sandbox_settings(), self.cwd)

    async def decide(
        self, tool: Tool, subject: str, args: dict[str, Any], before_tool: BeforeTool | None = None
    ) -> Verdict:
        """The verdict on one call (its arguments checked and its subject made by the
        caller): a disabled tool is denied, then confinement refuses a path outside the
        roots, then the before_tool hooks (`before_tool`, which the caller runs) may
        decide, then the policy: the rules of every set with the current mode laid over
        them, and the remembered approvals. A deny carries the text the model reads; an
        ask, its question's title (when not the tool's) and what answering "allow for the
        session" would remember."""
        from uji.tools.decision import deny_text
        from uji.tools.verdict import Verdict

        if tool.name in self.registry.disabled:
            return Verdict("deny", "disabled", reason=f"{tool.name} is disabled")
        if tool.confined and self.confined:
            refusal = self.sandbox().check(subject, write=tool.writes)
            if refusal:
                return Verdict("deny", "confine", reason=refusal)
        said = await before_tool(tool.name, args) if before_tool is not None else None
        if said is not None:
            verdict = Verdict(said.decision, "hook", origin=said.origin, hook=said.name)
            if said.decision == "deny":
                verdict.reason = said.text
            elif said.decision == "ask":
                verdict.title = said.text
            return verdict
        verdict = self.policy_verdict(tool, subject)
        if verdict.decision == "deny":
            verdict.reason = deny_text(verdict, tool.name)
        elif verdict.decision == "ask":
            verdict.title = verdict.message
            verdict.remember = self.remember_scope(tool, subject, verdict)
        return verdict

    def policy_verdict(self, tool: Tool, subject: str) -> Verdict:
        """The policy layer: the rules as written, with the current mode (Shift+Tab,
        `uji.mode`) laid over them."""
        verdict = self._written_verdict(tool, subject)
        if tool.path_subject:
            from uji.tools.path_forms import path_forms

            forms = path_forms(self.sandbox(), subject)
        else:
            forms = [subject]
        return self.modes.layer(tool.name, tool.path_subject, subject, forms, verdict, self.sandbox())

    def _written_verdict(self, tool: Tool, subject: str) -> Verdict:
        policy = self.policy
        if tool.command_subject:
            from uji.tools.remembered import writes_through_redirect

            sandbox = self.sandbox()

            def refuse_write(path: str) -> str | None:
                return sandbox.check(path, write=True)

            if writes_through_redirect(subject):
                with policy.remembered.pause():
                    return policy.decide_command(tool.name, subject, tool.policy, refuse_write)
            return policy.decide_command(tool.name, subject, tool.policy, refuse_write)
        if not tool.path_subject:
            return policy.decide(tool.name, [subject], tool.policy, tool.remembers_tool)
        from uji.tools.decision import matched_form, through_symlink
        from uji.tools.path_forms import path_forms

        sandbox = self.sandbox()
        forms = path_forms(sandbox, subject)
        if through_symlink(sandbox, subject):
            # A remembered file is the file that was asked about: no symlink may redirect it.
            with policy.remembered.pause():
                verdict = policy.decide(tool.name, forms, tool.policy)
        else:
            verdict = policy.decide(tool.name, forms, tool.policy)
        if verdict.rule is not None:
            verdict.form = matched_form(verdict.rule, forms)
        return verdict

    def remember_scope(self, tool: Tool, subject: str, verdict: Verdict) -> str | None:
        """What an "allow for the session" / "always allow" answer to this ask remembers:
        the part of a command line that asked, a file tool's absolute normalised path, or
        the subject. None when remembering could not turn this ask into an allow."""
        if not self.policy.can_remember(tool.name, verdict):
            return None
        if tool.command_subject:
            from uji.tools.remembered import writes_through_redirect

            if writes_through_redirect(subject):
                return None  # its part's normal form would not say where it writes
            scope = verdict.subject  # the part; None when the whole line's rule asked
        elif tool.path_subject:
            from uji.tools.decision import through_symlink

            sandbox = self.sandbox()
            if through_symlink(sandbox, subject):
                return None
            scope = sandbox.abspath(subject)
        elif tool.remembers_tool:
            from uji.tools.remembered import ANY_SUBJECT

            scope = ANY_SUBJECT
        else:
            scope = subject
        return scope or None

    def path_guard(self, tool: Tool) -> Callable[[str], str | None]:
        """The check a file tool's opens make: the real file reached is matched again
        against the tool's deny rules, so a symlink swapped in after the decision is still
        refused."""
        from uji.tools.path_forms import real_forms

        sandbox = self.sandbox()

        def guard(real: str) -> str | None:
            verdict = self.policy.match(tool.name, real_forms(sandbox, real))
            if verdict is None or verdict.decision != "deny":
                return None
            return verdict.message or f"{real} is denied by the policy rule `{verdict.rule}`"

        return guard

    def sandbox(self) -> Sandbox:
        """The confinement of a call made now: the cwd, the roots and whether it is on."""
        from uji.tools.confine import Sandbox

        return Sandbox(self.cwd, list(self.roots), self.confined, list(self.read_roots))  # it expands `~/`

    def redactor(self) -> Redactor:
        """The secrets known now: the providers' key variables that are set, and the saved keys."""
        from uji.tools.secrets import known_secrets

        return known_secrets(self._key_variables(), self.auth_file)

    def env(self) -> dict[str, str]:
        """The environment for a command uji starts (provider keys removed unless kept)."""
        from uji.tools.secrets import child_env

        return child_env(self._key_variables(), self.inherit_keys)

    def remember(self, tool: str, subject: str, scope: Scope) -> str | None:
        """Remember an "allow for the session" / "always allow" answer; returns a problem
        to tell the user (rules.lua could not be written), if any."""
        from uji.tools.remembered import remember

        return remember(self.policy.remembered, self.rules_lua, tool, subject, scope)
