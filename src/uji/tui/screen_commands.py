"""The built-in slash commands (reference §1). A `uji.command` of the same name
replaces one: `run()` looks at `app.commands` first."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from uji.command_registry import CommandError
from uji.lua.runtime import LuaError
from uji.record import Struct
from uji.tui.composer import Suggestion
from uji.tui.login import login

if TYPE_CHECKING:
    from uji.agent.loop import Agent
    from uji.agent.rewind import RewindPoint, Rewound
    from uji.agent.window import Window
    from uji.mcp import Server
    from uji.tools.gate import Gate
    from uji.tui.command_view import CommandView

Handler = Callable[["CommandView", str], Awaitable[None]]


class Builtin(Struct):
    desc: str
    run: Handler


async def models(tui: CommandView, args: str) -> None:
    app = tui.conversation.app
    assert app is not None
    choices = await app.models.model_choices()
    current_pair = (app.models.provider_id or "", app.models.model_id or "")
    if not choices:
        tui.show_notice("no models to pick from: sign in to a provider with /login first")
        return
    labels = [f"{p}/{m}" for p, m in choices]
    wanted = args.strip()
    index = labels.index(wanted) if wanted in labels else None
    if index is None:
        current = choices.index(current_pair) if current_pair in choices else None
        index = await tui.select("Pick the model", labels, current)
    if index is None:
        return
    provider_id, model_id = choices[index]
    try:
        app.models.use_model(provider_id, model_id)
    except ValueError as e:
        tui.show_notice(str(e))
        return
    tui.show_notice(f"model: {provider_id}/{model_id}")
    tui.state_changed()


async def effort(tui: CommandView, args: str) -> None:
    app = tui.conversation.app
    assert app is not None
    efforts = app.models.model_efforts()
    if not efforts:
        name = f"{app.models.provider_id}/{app.models.model_id}" if app.models.model_id else "this model"
        tui.show_notice(f"{name} has no reasoning effort to pick")
        return
    wanted = args.strip()
    index = efforts.index(wanted) if wanted in efforts else None
    if index is None:
        current = efforts.index(app.models.effort) if app.models.effort in efforts else None
        index = await tui.select("Reasoning effort", efforts, current)
    if index is None:
        return
    app.models.use_model(app.models.provider_id, app.models.model_id, efforts[index])
    tui.show_notice(f"effort: {efforts[index]}")
    tui.state_changed()


async def thinking(tui: CommandView, args: str) -> None:
    app = tui.conversation.app
    assert app is not None
    app.ui.toggle_thinking()


def _idle_agent(tui: CommandView, command: str) -> Agent | None:
    """The session's agent for a command that changes its history, or None with a notice
    saying why not (no session, or one busy)."""
    conv = tui.conversation
    if conv.agent is None:
        tui.show_notice(f"/{command}: no session is open")
        return None
    problem = conv.refusal()
    if problem:
        tui.show_notice(f"/{command}: {problem}")
        return None
    return conv.agent


async def compact(tui: CommandView, args: str) -> None:
    agent = _idle_agent(tui, "compact")
    if agent is None:
        return
    tui.show_notice("compacting the conversation…")
    result = await agent.compactor.compact(manual=True)
    done, why = result if isinstance(result, tuple) else (bool(result), None)
    if not done:  # a compaction shows as its own saved row ("compacted"): one line, not two
        tui.show_notice(f"nothing compacted: {why}")
    tui.state_changed()


async def rewind(tui: CommandView, args: str) -> None:
    """The last turns with the files each changed; the chosen one is undone: its files,
    its conversation, or both, back to before it."""
    from uji.agent.rewind import points

    agent = _idle_agent(tui, "rewind")
    if agent is None:
        return
    conv = tui.conversation
    turns = points(agent)
    if not turns:
        tui.show_notice("nothing to rewind yet: no turn in this session")
        return
    labels = [_rewind_label(turn) for turn in turns]
    index = await tui.select("Rewind to before which turn? (newest first)", labels)
    if index is None:
        return
    chosen = turns[index]
    actions = [("Restore the files and the conversation", True, True)] if chosen.has_files else []
    actions.append(("Restore the conversation only", False, True))
    if chosen.has_files:
        actions.append(("Restore the files only", True, False))
    pick = await tui.select(f"Back to before “{labels[index][:24].strip()}”", [a[0] for a in actions])
    if pick is None:
        return
    _, restore_files, conversation = actions[pick]
    done = await _go_back(tui, agent, chosen.seq, restore_files, conversation)
    if done is None:
        return
    conv.rewound(done.text if conversation else None)
    tui.show_notice(f"rewound to before “{labels[index][:24].strip()}”: {done.summary()}")


def _rewind_label(turn: RewindPoint) -> str:
    """A turn as /rewind lists it: its prompt, how long ago, the files it changed."""
    prompt = " ".join(turn.text.split())
    prompt = prompt if len(prompt) <= 24 else prompt[:23] + "…"
    if turn.files is None:
        files = "files: no checkpoint"
    elif not turn.files:
        files = "no file changed"
    else:
        shown = ", ".join(f.stat() for f in turn.files[:3])
        more = f" and {len(turn.files) - 3} more" if len(turn.files) > 3 else ""
        files = f"{len(turn.files)} file(s): {shown}{more}"
    when = _ago(int(turn.time * 1000)) if turn.time is not None else ""
    return f"{prompt:<24} {when:>8}  {files}"


async def _go_back(
    tui: CommandView, agent: Agent, seq: int, files: bool, conversation: bool
) -> Rewound | None:
    """The rewind done; files changed since the checkpoint are overwritten only if the user
    says so. None (said) when it was cancelled or refused."""
    from uji.agent.rewind import RewindRefused
    from uji.agent.rewind import rewind as go_back

    try:
        return await go_back(agent, seq, files=files, conversation=conversation)
    except RewindRefused as e:
        answer = await tui.select(f"{e}. Overwrite them?", ["Cancel", "Overwrite them"])
        if answer != 1:
            tui.show_notice("rewind cancelled: nothing changed")
            return None
        try:
            return await go_back(agent, seq, files=files, conversation=conversation, force=True)
        except (RewindRefused, ValueError) as e2:
            tui.show_notice(f"/rewind: {e2}")
            return None
    except ValueError as e:
        tui.show_notice(f"/rewind: {e}")
        return None


async def new(tui: CommandView, args: str) -> None:
    problem = tui.conversation.new_session()
    if problem:
        tui.show_notice(f"/new: {problem}")
    else:
        tui.show_notice("new session")


def _ago(ms: int) -> str:
    seconds = max(0, time.time() - ms / 1000)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


async def sessions(tui: CommandView, args: str) -> None:
    conv = tui.conversation
    app = conv.app
    assert app is not None
    # Conversations; `/sessions runs` the one-shot `uji run`s, which scripts make by the dozen.
    runs = args.strip() == "runs"
    rows = app.store.list_sessions(app.cwd, kind="run" if runs else "conversation")
    if not rows:
        others = len(app.store.list_sessions(app.cwd, kind="conversation" if runs else "run"))
        said = "no one-shot runs" if runs else "no conversations"
        more = f"; /sessions{'' if runs else ' runs'} lists {others} {'conversations' if runs else 'one-shot runs'}"
        tui.show_notice(f"{said} in this directory yet" + (more if others else ""))
        return
    labels = [f"{r['title'][:40]:<40}  {_ago(r['updated']):>9}  {r['id']}" for r in rows]
    current = next((i for i, r in enumerate(rows) if r["id"] == conv.session_id), None)
    title = "One-shot runs (uji run) in this directory" if runs else "Conversations in this directory"
    from uji.tui.panel_views import RowsView

    own = RowsView(
        "Sessions", tuple({"title": r["title"], "ago": _ago(r["updated"]), "id": r["id"]} for r in rows)
    )
    index = await tui.select(title, labels, current, rows=own)
    if index is None:
        return
    chosen = rows[index]
    if chosen["id"] == conv.session_id:
        tui.show_notice("that is the open session")
        return
    action = await tui.select(f"“{chosen['title']}”", ["Resume it", "Delete it"])
    if action == 0:
        problem = conv.resume(chosen["id"])
        tui.show_notice(f"/sessions: {problem}" if problem else f"resumed “{chosen['title']}”")
    elif action == 1:
        app.store.delete_session(chosen["id"])
        tui.show_notice(f"deleted “{chosen['title']}”")


async def reload(tui: CommandView, args: str) -> None:
    problem = await tui.conversation.reload()
    if problem:
        tui.show_notice(f"/reload: {problem}")
    tui.state_changed()


async def help_(tui: CommandView, args: str) -> None:
    lines = ["commands:"]
    lines += [f"  /{s.name:<12} {s.desc}" for s in suggestions(tui)]
    lines += [
        "keys: Enter send · Esc interrupt · Ctrl+C clear the draft, twice to quit · ↑/Ctrl+P history",
        "      Ctrl+R search · Shift+Tab mode · Ctrl+O whole output · PageUp/PageDown scroll · ! shell",
        "      (all of them: the README's key table, or uji.keymap.list())",
    ]
    tui.show_notice("\n".join(lines))


async def rules(tui: CommandView, args: str) -> None:
    """The remembered approvals, where each comes from; choosing one forgets it."""
    from uji.tools.remembered import forget

    app = tui.conversation.app
    assert app is not None
    remembered = list(app.gate.policy.remembered.rules)
    path = app.paths.rules_lua
    if not remembered:
        tui.show_notice(
            "no remembered approvals: answer a question with a (allow for this session) "
            f"or A (always allow, saved in {path})"
        )
        return
    labels = [f"{r.tool}  {' '.join(r.subject.split())}  ({r.where()})" for r in remembered]
    index = await tui.select(f"Remembered approvals ({path}) · Enter forgets one", labels)
    if index is None:
        return
    chosen = remembered[index]
    # A yes/no question, not a list: a list's filter field took the y or n typed next.
    body = f"{chosen.tool} `{' '.join(chosen.subject.split())}` ({chosen.where()})"
    if await tui.confirm(
        f"Forget `{chosen.subject}`?", body, labels=("Forget it", "Keep it"), asked_for=True
    ):
        tui.show_notice(forget(app.gate.policy.remembered, path, chosen))


async def mcp(tui: CommandView, args: str) -> None:
    """The MCP servers (uji.mcp.add) and their state; choosing one shows its tools, its
    last error and log, and what can be done: reconnect, disable or enable it for the
    session, log in."""
    app = tui.conversation.app
    assert app is not None
    service = app.mcp
    servers = list(service.servers.values())
    if not servers:
        tui.show_notice("\n".join(["MCP servers:", *(f"  {line}" for line in service.lines())]))
        return
    width = max(len(s.name) for s in servers)
    labels = [f"{s.name:<{width}}  {s.label():<12}  {_count(len(s.tools), 'tool')}" for s in servers]
    title = "MCP servers · Enter: its tools, last error and actions"
    if service.project_state:
        title += f" · {service.project_state}"
    index = await tui.select(title, labels)
    if index is None:
        return
    server = servers[index]
    tui.show_notice("\n".join(mcp_details(server)))
    actions = ["Reconnect" if not server.disabled else "Enable and connect"]
    if not server.disabled:
        actions.append("Disable for this session")
    if server.config.url is not None:
        actions.append("Log in")
    pick = await tui.select(f"{server.name}: {server.label()}", actions)
    if pick is None:
        return
    chosen = actions[pick]
    if chosen == "Log in":
        from uji.mcp.auth import LoginError
        from uji.mcp.auth import login as authorize

        try:
            tui.show_notice(await authorize(service, server.name, tui.show_notice))
        except LoginError as e:
            tui.show_notice(f"/mcp: {e}")
    elif chosen == "Disable for this session":
        await service.disable(server.name)
        tui.show_notice(f"MCP server {server.name} disabled for this session: its tools are not offered")
    else:
        tui.show_notice(f"MCP server {server.name}: connecting…")
        await service.reconnect(server.name)
        tui.show_notice(f"MCP server {server.name} after reconnecting: {server.describe()}")
    tui.state_changed()


def mcp_details(server: Server) -> list[str]:
    """A server's state, tools, last error and last log lines, for /mcp."""
    lines = [f"MCP server {server.name}: {server.describe()}"]
    where = server.config.url or " ".join(server.config.command or [])
    lines.append(f"  {'url' if server.config.url else 'command'}: {where}")
    if server.tools:
        lines.append(f"  tools: {', '.join(t.name for t in server.tools)}")
    if server.last_error and server.state != "failed":
        lines.append(f"  last error: {server.last_error}")
    lines.extend(f"  log: {line}" for line in server.log[-3:])
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


async def context(tui: CommandView, args: str) -> None:
    """Every part of the next request with its size in tokens, and their total: the
    prompt's parts (uji.context.list), the conversation, its images and what compaction
    folded, calibrated on the provider's count of the last request (agent/window.py)."""
    from uji.agent.window import window

    app = tui.conversation.app
    assert app is not None
    problems: list[str] = []
    agent = tui.conversation.agent
    if agent is not None:
        shown = agent.meter.window(problems.append)
    else:
        tools = [t.schema() for t in app.gate.registry.offered()]
        shown = window(app.context.parts(app.gate.cwd, tools, problems.append), None, None)
    tui.show_notice("\n".join([*context_lines(shown), *problems]))


def context_lines(shown: Window) -> list[str]:
    rows: list[tuple[str, int, str]] = []
    for part in shown.parts:
        if part.kind == "tools":
            rows.append((f"tools ({part.count})", part.tokens, ""))
        elif part.kind == "context":
            where = "hidden turn message" if part.at == "turn" else "" if part.at else "not run yet"
            rows.append((part.name, part.tokens, f"context provider{', ' + where if where else ''}"))
        elif part.kind == "summary":
            rows.append((part.name, part.tokens, f"{part.count} messages folded by compaction"))
        elif part.kind in ("conversation", "images"):
            unit = "message" if part.kind == "conversation" else "image"
            rows.append((part.name, part.tokens, f"{part.count} {unit}{'' if part.count == 1 else 's'}"))
        else:
            rows.append((part.name, part.tokens, "instructions" if part.kind == "instructions" else ""))
    rows.append(("total", shown.total, "the next request, before your message"))
    width = max(len(name) for name, _, _ in rows)
    if shown.ratio is None:
        how = "estimated as characters / 4; calibrated once a request reports its usage"
    else:
        how = f"characters / 4 times {shown.ratio:.2f}, the provider's count of the last request over that estimate"
    lines = [f"Context (tokens, {how}):"]
    return lines + [f"  {name:<{width}}  {tokens:>8,}  {kind}".rstrip() for name, tokens, kind in rows]


async def mode(tui: CommandView, args: str) -> None:
    """`/mode`: the gate's modes and the policy layer of each; choosing one switches to
    it. `/mode NAME` switches at once."""
    from uji.lua.api.mode import switch_mode
    from uji.lua.runtime import ApiError

    app = tui.conversation.app
    assert app is not None
    modes = app.gate.modes
    name = args.strip()
    if not name:
        rows = modes.rows()
        lines = [
            f"{r['name'].replace('_', ' ')}{' (current)' if r['current'] else ''}: {r['desc'] or '-'}"
            f" · {_layer_text(r['policy'])}"
            for r in rows
        ]
        index = await tui.select("Modes (Shift+Tab cycles) · Enter switches", lines)
        if index is None:
            return
        name = rows[index]["name"]
    try:
        switch_mode(app.host, app.gate, name)
    except ApiError as e:
        tui.show_notice(f"/mode: {e}".replace("uji.mode.set: ", ""))
        return
    tui.show_notice(f"mode: {modes.get().label}")
    tui.state_changed()


async def export(tui: CommandView, args: str) -> None:
    """/export [md|json|html|atif] [FILE]: the session to FILE (default uji-<id>.<ext> here)."""
    import os

    from uji.export import FORMATS, SUFFIX
    from uji.export.command import export_text

    app, session_id = tui.conversation.app, tui.conversation.session_id
    assert app is not None
    words = args.split(maxsplit=1)
    fmt = next((f for f in FORMATS if words and words[0] == f), None)
    rest = words[1] if fmt and len(words) > 1 else "" if fmt else args.strip()
    fmt = fmt or "md"
    if session_id is None:
        return
    path = os.path.join(app.cwd, os.path.expanduser(rest or f"uji-{session_id[:8]}{SUFFIX[fmt]}"))
    text = export_text(app.store, app.paths, session_id, fmt)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        tui.show_notice(f"/export: {path}: {e.strerror or e}")
        return
    tui.show_notice(f"exported the session ({fmt}) to {path}")


async def sandbox(tui: CommandView, args: str) -> None:
    """`/sandbox`: the OS sandbox of the model's commands, and what they may reach."""
    app = tui.conversation.app
    assert app is not None
    tui.show_notice(sandbox_text(app.gate))


def sandbox_text(gate: Gate) -> str:
    from uji.sandbox import private_tmpdir
    from uji.sandbox.policy import DEFAULT_DENY_READ

    state = gate.sandbox_status()
    settings = gate.sandbox_settings()
    if not state.available:
        head = f"Sandbox: none ({state.reason}); the model's commands run with your rights."
        return head if state.mode == "off" else head + " In uji run, calls that would ask are refused."
    writable = (
        ["the working directory", *gate.roots, *settings.writable] if state.mode == "workspace-write" else []
    )
    lines = [
        f"Sandbox: {state.mode} ({state.reason}); uji.sandbox.configure changes it.",
        f"  writes: {', '.join([*writable, f'its temporary folder {private_tmpdir()}'])}",
        f"  reads: everything but {', '.join([*DEFAULT_DENY_READ, *settings.deny_read])} and uji's data",
        f"  network: {'on' if settings.network else 'off'}",
        "  Try a command under it with `uji sandbox -- CMD`.",
    ]
    return "\n".join(lines)


async def worktree(tui: CommandView, args: str) -> None:
    """`/worktree [NAME]`: the session goes on in its own git worktree and branch (made if
    not there: <repo>/.uji/worktrees/NAME, branch uji/NAME); in one already, where it is."""
    import asyncio

    from uji import worktree as wt

    app = tui.conversation.app
    assert app is not None
    name = args.strip() or None
    current = wt.find(app.cwd)
    if current is not None and name in (None, current.name):
        try:
            held = (await asyncio.to_thread(wt.changes, current)).describe()
        except wt.WorktreeError as e:
            held = str(e)
        tui.show_notice(
            f"this session works in the worktree {current.describe()}: {held}; "
            "on leaving, uji asks whether to keep it"
        )
        return
    problem = tui.conversation.refusal()
    if problem:
        tui.show_notice(f"/worktree: {problem}")
        return
    try:
        found, directory = await asyncio.to_thread(wt.enter, app.cwd, name)
    except wt.WorktreeError as e:
        tui.show_notice(f"/worktree: {e}")
        return
    problem = await tui.conversation.move(directory)
    if problem:
        tui.show_notice(f"/worktree: {problem}")
        return
    tui.show_notice(f"this session now works in the worktree {found.describe()}")


async def theme(tui: CommandView, args: str) -> None:
    from uji.tui.theme import command

    await command(tui, args)


def _layer_text(policy: Mapping[str, object]) -> str:
    """A mode's policy layer in words: "edit_file deny, write_file deny" or
    "read_file allow inside the roots", "run_command ask; allow git status"."""
    if not policy:
        return "no layer"
    parts = []
    for tool, rules in sorted(policy.items()):
        if not isinstance(rules, dict):
            parts.append(f"{tool} {rules}")
            continue
        said = []
        if "default" in rules:
            said.append(str(rules["default"]))
        if "inside_roots" in rules:
            said.append(f"{rules['inside_roots']} inside the roots")
        for verdict in ("allow", "ask", "deny"):
            if isinstance(rules.get(verdict), list) and rules[verdict]:
                said.append(f"{verdict} {', '.join(map(str, rules[verdict]))}")
        parts.append(f"{tool} {'; '.join(said) or 'as written'}")
    return ", ".join(parts)


async def quit_(tui: CommandView, args: str) -> None:
    await tui.quit()


BUILTINS: dict[str, Builtin] = {
    "login": Builtin("add a provider's API key, or sign out", login),
    "models": Builtin("pick the model", models),
    "effort": Builtin("pick the reasoning effort", effort),
    "thinking": Builtin("show or hide the model's reasoning", thinking),
    "compact": Builtin("summarise older messages now", compact),
    "new": Builtin("start a fresh session (keeps the draft)", new),
    "rewind": Builtin("undo turns: their files, the conversation, or both", rewind),
    "sessions": Builtin(
        "resume or delete a conversation here (`/sessions runs`: the one-shot runs)", sessions
    ),
    "reload": Builtin("reload the config on the same session", reload),
    "rules": Builtin("see or forget the approvals uji remembers", rules),
    "mcp": Builtin("MCP servers: state, tools, errors; reconnect, disable, log in", mcp),
    "context": Builtin("what the prompt is made of, with sizes in tokens", context),
    "mode": Builtin("see the modes' policy layers, or switch: /mode [name]", mode),
    "export": Builtin("write the session to a file: /export [md|json|html|atif] [FILE]", export),
    "sandbox": Builtin("the sandbox of the model's commands: what they may write and read", sandbox),
    "worktree": Builtin("go on in a git worktree and branch of its own: /worktree [name]", worktree),
    "theme": Builtin("pick the theme, with a live preview: /theme [name]", theme),
    "help": Builtin("list the commands and keys", help_),
    "quit": Builtin("exit uji", quit_),
}


def suggestions(tui: CommandView) -> list[Suggestion]:
    """Every command, built-in or from Lua, sorted by name."""
    app = tui.conversation.app
    found = {name: Suggestion(name, b.desc) for name, b in BUILTINS.items()}
    if app is not None:
        for command in app.commands.all():
            found[command.name] = Suggestion(command.name, command.desc or "")
    return [found[name] for name in sorted(found)]


async def run(tui: CommandView, name: str, args: str) -> None:
    app = tui.conversation.app
    if app is None:
        tui.show_notice(f"/{name}: no session is open (see the error above)")
        return
    command = app.commands.get(name)
    if command is not None:
        try:
            if command.lua:
                await app.lua.call(command.handler, args)
            else:
                await command.handler(args)
        except (LuaError, CommandError) as e:
            tui.show_notice(f"/{name}: {e}")
        tui.state_changed()
        return
    builtin = BUILTINS.get(name)
    if builtin is None:
        tui.show_notice(f"unknown command /{name} — /help lists them")
        return
    await builtin.run(tui, args)
