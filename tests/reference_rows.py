"""The reference's documented surface (../shared/spec/reference/docs.md, the original uji),
one row per API function, hook, command, flag, key, provider, plugin and tool behaviour,
with how much of it this uji has: before issue 28's work (main at 2f8462e) and now.

`python -m tests.reference_rows` prints the counts; docs/parity.md shows the table.
Statuses: present (as documented), partial (some of it, or differently), missing."""

from __future__ import annotations

from collections import Counter
from typing import Literal

Status = Literal["present", "partial", "missing"]
P: Status = "present"
H: Status = "partial"
M: Status = "missing"

# (section, row, before, now[, note])
ROWS: list[tuple[str, str, Status, Status] | tuple[str, str, Status, Status, str]] = [
    # §1 CLI and headless mode
    ("cli", "uji / uji new", P, P),
    ("cli", "uji resume", P, P),
    ("cli", "uji resume --id <UUID>", P, P),
    ("cli", "uji list picker", P, P),
    ("cli", "uji delete <ID>", P, P),
    ("cli", "uji run <PROMPT>", P, P),
    ("cli", "-h/--help, -V/--version", P, P),
    ("cli", "--config-dir, --data-dir, --db", P, P),
    ("cli", "--flag=value and --flag value", P, P),
    ("cli", "uji: error: … and exit 1", P, P),
    ("cli", "run --json", P, P),
    ("cli", "run --model provider/id", P, P),
    ("cli", "run --effort (nearest level)", P, P),
    ("cli", "run --tools a,b", P, P),
    ("cli", "run --append-prompt", P, P),
    ("cli", "run --title", P, P),
    ("cli", "run --parent ID", P, P),
    ("cli", "run approves asks, policy denials apply", P, P),
    ("cli", "run exit codes 0/1", P, P),
    ("cli", "JSON session/message/progress/notice/done events", P, P),
    ("cli", "JSON tasks event", M, P),
    # §1 slash commands
    ("commands", "/login", P, P),
    ("commands", "/models", P, P),
    ("commands", "/effort", P, P),
    ("commands", "/thinking", P, P),
    ("commands", "/compact", P, P),
    ("commands", "/sessions", P, P),
    ("commands", "/new", P, P),
    ("commands", "/jobs", P, P, "with the opt-in jobs plugin (uji.tool.txt)"),
    ("commands", "/diagnostics", P, P),
    ("commands", "/sync", P, P),
    ("commands", "/reload", P, P),
    ("commands", "/help", P, P),
    ("commands", "/quit", P, P),
    ("commands", "/ opens the suggestion popup", P, P),
    # §1 composer and keys
    ("keys", "Enter sends; Shift+Enter, Alt+Enter, Ctrl+J newline", P, P),
    ("keys", "queued messages during a turn", P, P),
    ("keys", "Esc clears, interrupts on empty input", P, P),
    ("keys", "! shell lines (shell_started/finished, 130)", P, P),
    ("keys", "approval y / n / Esc", P, P),
    ("keys", "Ctrl+Z backgrounds the running command", M, P, "with the opt-in jobs plugin (uji.tool.txt)"),
    ("keys", "Ctrl+V image paste, image paths, @file.png", P, P),
    ("keys", "[image #N] markers", P, P),
    ("keys", "[paste #N +L lines] markers", P, P),
    ("keys", "key syntax <C-x> <A-x> <S-x>, named keys", P, P),
    ("keys", "key modes normal/suggest/select/prompt/confirm/overlay", P, P),
    ("keys", "default bindings table", P, P),
    ("keys", "action names", P, P),
    ("keys", "PageUp/PageDown and wheel scroll", P, P),
    ("keys", "mouse selection copy, OSC 52 fallback", H, P),
    # §1 files
    ("files", "config dir and its overrides", P, P),
    ("files", "data dir and its overrides", P, P),
    ("files", "session DB and --db/UJI_DB", P, P),
    ("files", "packs in <data>/site/<name>", P, P),
    ("files", "uji-lock.json", P, P),
    ("files", "auth.toml 0600", P, P),
    ("files", "keychain credentials (auth.configure{keychain})", M, P),
    ("files", "diagnostics.log trimmed", P, P),
    ("files", "overrides.json / module overrides from packs", M, P),
    ("files", "plugin data via uji.data", P, P),
    ("files", "UJI_RUNTIME", M, P),
    ("files", "init.lua replaces the defaults; uji.builtin.defaults", P, P),
    ("files", "plugin/*.lua sorted, config dir then each pack", H, P),
    ("files", "lua/ on the require path (config and packs)", P, P),
    ("files", "native/ modules", M, P),
    ("files", "plugin errors become notices", P, P),
    ("files", "DB schema, WAL, busy_timeout, foreign keys", P, P),
    ("files", ".uji/<folder> project files, per-plugin trust", P, P),
    # §2 general contract
    ("contract", "callback-or-wait convention", P, P),
    ("contract", "background starters return a stop function", P, P),
    ("contract", "bad arguments raise at the call", P, P),
    ("contract", "uji.* falls back to runtime modules", M, P),
    # §2 uji.tool
    ("tool", "uji.tool.add", P, P),
    ("tool", "spec.description/parameters/run", P, P),
    ("tool", "spec.resolve", H, P, "was accepted and ignored"),
    ("tool", "spec.subject string|fn", P, P),
    ("tool", "spec.policy", P, P),
    ("tool", "spec.path = true", H, P, "was accepted and ignored"),
    ("tool", "display.label", H, P, "display.verb only"),
    ("tool", "display.question", P, P),
    ("tool", "display.preview(args) -> uji.diff", H, P, "was accepted and ignored"),
    ("tool", "add errors: missing run, bad policy, bad subject", P, P),
    ("tool", "run returns string or {text, images}", P, P),
    ("tool", "run result {diff, summary} (UI only)", H, P, "was dropped"),
    ("tool", "ctx.done later / cancel function", P, P),
    ("tool", "other return types and thrown errors", P, P),
    ("tool", "bad images dropped with a note", P, P),
    ("tool", "ctx.progress", P, P),
    ("tool", "ctx.task with :update/:done/:fail", M, P),
    ("tool", "uji.tool.display", M, P),
    ("tool", "uji.tool.remove / list", P, P),
    ("tool", "uji.tool.disable / enable", P, P),
    ("tool", "uji.tool.policy rules and order", P, P),
    ("tool", "named policy sets (opts.name)", M, P, "85128c2"),
    ("tool", "unreadable rule becomes ask with a notice", P, P),
    ("tool", "before_tool overrides the policy", P, P),
    ("tool", "uji.tool.confine / roots (older)", P, P),
    ("tool", "uji.diff", M, P),
    # §2 command, keymap, action
    ("command", "uji.command.add (fn or {handler, desc})", P, P),
    ("command", "uji.command.remove", P, P),
    ("command", "uji.command.list with the built-ins", H, P, "listed only added commands"),
    ("keymap", "uji.keymap.add", P, P),
    ("keymap", "uji.keymap.remove / reset / list", P, P),
    ("action", "uji.action.add / remove / list", P, P),
    # §2 events
    ("events", "uji.on (priority, name)", P, P),
    ("events", "uji.off", P, P),
    ("events", "uji.emit runs handlers within the call", H, P, "ran them after the caller"),
    ("events", "payload.event set", P, P),
    ("events", "session_created / session_resumed", P, P),
    ("events", "session_titled", P, P),
    ("events", "session_compacted", P, P),
    ("events", "message_submitted", P, P),
    ("events", "message_appended", P, P),
    ("events", "queue_changed", P, P),
    ("events", "shell_started / shell_finished", P, P),
    ("events", "tool_started", P, P),
    ("events", "turn_finished", P, P),
    ("events", "model_changed", P, P),
    ("events", "status_changed", P, P),
    ("events", "before_quit", P, P),
    ("events", "before_turn hook", P, P),
    ("events", "before_tool hook decisions", P, P),
    ("events", "after_tool hook", P, P),
    ("events", "before_stop hook", P, P),
    ("events", "render_message hook", M, P),
    # §2 session
    ("session", "uji.session.info", P, P),
    ("session", "uji.session.messages", P, P),
    ("session", "uji.session.usage", P, P),
    ("session", "uji.session.context", P, P),
    ("session", "uji.session.queue / state / elapsed", P, P),
    ("session", "uji.session.set_title", P, P),
    ("session", "uji.session.submit", P, P),
    ("session", "uji.session.interrupt", P, P),
    ("session", "uji.session.compact", P, P),
    ("session", "uji.session.list", P, P),
    ("session", "uji.session.delete", P, P),
    ("session", "uji.status.* footer registry (older)", M, P),
    # §2 context, model
    ("context", "uji.context.add (string, {at='turn'}, nil)", P, P),
    ("context", "uji.context.remove", P, P),
    ("context", "uji.context.list returns names", H, P, "returned rows"),
    ("context", "uji.context.configure cache/compaction", P, P),
    ("model", "uji.model.current", P, P),
    ("model", "uji.model.use", P, P),
    ("model", "uji.model.efforts", P, P),
    # §2 providers
    ("provider", "22 built-in providers", P, P),
    ("provider", "uji.provider.add fields and merge", P, P),
    ("provider", "models function, lazy, merged", P, P),
    ("provider", "provider oauth field", H, P, "no built-in provider ships settings"),
    ("provider", "provider loop (custom loop class)", M, P),
    ("provider", "uji.provider.remove", P, P),
    ("provider", "uji.provider.list rows and STATE", P, P),
    ("provider", "uji.provider.get / load", P, P),
    ("provider", "uji.api.openai/responses/anthropic/gemini classes", M, P),
    ("provider", "uji.api.stream.run, the shared SSE helper", M, P),
    ("provider", "uji.class", M, P),
    ("provider", "OpenAI options and overridable methods", M, P),
    ("provider", "uji.wire (older)", P, P),
    # §2 auth
    ("auth", "uji.auth.configure{keychain}", M, P),
    ("auth", "uji.auth.authenticated", P, P),
    ("auth", "uji.auth.save_key", P, P),
    ("auth", "uji.auth.login (browser OAuth)", M, P),
    # §2 ui
    ("ui", "uji.ui.toolbar", M, P),
    ("ui", "uji.ui.size", P, P),
    ("ui", "uji.ui.select", P, P),
    ("ui", "uji.ui.pick with preview and on_query", H, P),
    ("ui", "uji.ui.prompt", P, P),
    ("ui", "uji.ui.confirm", P, P),
    ("ui", "uji.ui.overlay", M, P),
    ("ui", "uji.ui.Markdown", M, P),
    ("ui", "uji.ui.toggle_thinking", P, P),
    ("ui", "uji.ui.exec", M, P),
    ("ui", "uji.ui.open", M, P),
    ("ui", "uji.ui.configure", M, P),
    ("ui", "uji.ui.theme / save_theme", M, P),
    ("ui", "replaceable view classes", M, P),
    (
        "ui",
        "older open_win/set_lines window model",
        M,
        P,
        "messages and input windows sit above the composer; render_message takes line lists too",
    ),
    # §2 input
    ("input", "uji.input.get / set / append / clear", P, P),
    ("input", "uji.input.attach", M, P),
    ("input", "uji.input.capture / release", M, P),
    # §2 job, jobs
    ("job", "uji.job.start", P, P),
    ("jobs", "uji.jobs.list / stop", P, P),
    ("jobs", "uji.jobs.configure validation", H, P, "unknown keys were ignored"),
    # §2 fs, config, data, diagnostics, http, json, pack
    ("fs", "uji.fs.read", P, P),
    ("fs", "uji.fs.lines", P, P),
    ("fs", "uji.fs.write", P, P),
    ("fs", "uji.fs.list", P, P),
    ("fs", "uji.fs.glob", P, P),
    ("fs", "uji.fs.join", P, P),
    ("config", "uji.config.files", P, P),
    ("data", "uji.data.read / write", P, P),
    ("diagnostics", "uji.diagnostics.list", P, P),
    ("http", "uji.http.request", P, P),
    ("json", "uji.json.encode / decode / array / null", P, P),
    ("pack", "uji.pack.add spec forms", P, P),
    ("pack", "uji.pack.list", P, P),
    ("pack", "uji.pack.update", P, P),
    ("pack", "one-time restart for lua/uji overrides", M, P),
    # §2 timers and app
    ("app", "uji.schedule", P, P),
    ("app", "uji.defer", P, P),
    ("app", "uji.notify", P, P),
    ("app", "uji.quit", P, P),
    ("app", "uji.reload", P, P),
    # §2 runtime
    ("runtime", "uji.task.spawn and task:cancel", M, P),
    ("runtime", "uji.sleep", M, P),
    ("runtime", "uji.task.race", M, P),
    ("runtime", "uji.task.timeout", M, P),
    ("runtime", "uji.promise", M, P),
    ("runtime", "waiting outside a task raises", P, P),
    ("runtime", "uji.net.request", M, P),
    ("runtime", "uji.net.open streamed lines", M, P),
    ("runtime", "uji.net.listen server and connections", M, P),
    ("runtime", "uji.proc.spawn", M, P),
    ("runtime", "process killed when no longer referenced", M, P),
    ("runtime", "uji.db.open / exec / query / transaction / close / null", M, P),
    ("runtime", "uji.os values (platform, executable, argv, roots, carry, library)", M, P),
    ("runtime", "uji.os functions (env, cwd, home, now, clock, expand)", M, P),
    ("runtime", "uji.os.restart / exit", M, P),
    ("runtime", "uji.message", M, P),
    ("runtime", "uji.modules", M, P),
    ("runtime", "uji.keychain.get / set / delete", M, P),
    ("runtime", "uji.clipboard.get / set / image", M, P),
    ("runtime", "uji.regex", M, P),
    ("runtime", "uji.glob", M, P),
    ("runtime", "uji.fuzzy", M, P),
    ("runtime", "uji.markdown events", M, P),
    ("runtime", "uji.width / uji.lossy", M, P),
    ("runtime", "uji.base64", M, P),
    ("runtime", "uji.toml", M, P),
    ("runtime", "uji.sha256 / uji.random", M, P),
    ("runtime", "uji.image.fit", M, P),
    (
        "runtime",
        "uji.tty.open / ito.open",
        M,
        P,
        "screen:paint(view) needs the terminal UI; uji run draws text, spans and lines",
    ),
    ("runtime", "native modules", M, P),
    # §3 messages, request, retries (internals)
    ("messages", "stored message types", P, P),
    ("messages", "what the model is sent (compaction, context, shell)", P, P),
    ("messages", "missing tool answers filled", P, P),
    ("messages", "retries with backoff", P, P),
    # §4 tools
    ("tools", "read_file", P, P),
    ("tools", "edit_file", P, P),
    ("tools", "write_file", P, P),
    ("tools", "run_command", P, P),
    ("tools", "run_command timeout moves to the background (jobs plugin)", P, P),
    ("tools", "job_output with id", H, P, "took `job`"),
    ("tools", "stop_job with id", H, P, "took `job`"),
    ("tools", "finished jobs reported through turn context", P, P),
    ("tools", "transcript rendering of calls and diffs", P, P),
    # §5 plugins
    ("plugins", "statusline segments (Cwd Model Effort Context Tokens Cache Turns Logo)", M, P),
    ("plugins", "statusline.Bar / Default", M, P),
    ("plugins", "planmode /plan /approve", P, P),
    ("plugins", "planmode Ctrl+B, badge, confirm picker", M, P),
    ("plugins", "readonly", M, P, "a before_tool hook, not a named policy set"),
    ("plugins", "subagent tool (tasks, concurrency, output)", P, P),
    ("plugins", "subagent agent files (agents/*.md, .uji/agents)", M, P),
    ("plugins", "subagent chain", M, P),
    ("plugins", "/agent and /subagents", M, P),
    ("plugins", "workflow", M, P),
    ("plugins", "mcp servers, /mcp", P, P),
    ("plugins", "telescope (/find, live grep, history)", M, P),
    ("plugins", "websearch (web_search, web_fetch)", M, P),
    ("plugins", "skills", P, P),
    # §6 ito, toolbars, themes
    ("ito", "require('ito') views and stacks", M, P),
    ("ito", "controls (TextField, List, ScrollView, Spinner)", M, P),
    ("ito", "modifiers", M, P),
    (
        "ito",
        "state (state, remember, observable, Local, PreferenceKey)",
        M,
        P,
        "bodies run again on every redraw",
    ),
    ("ito", "colours and TextStyle", M, P),
    ("ito", "ToolbarItem / ToolbarHost / ToolbarItems", M, P),
    ("ito", "Window", M, P),
    ("ui", "default screen layout (top bar, transcript, activity, composer, bottom bar)", H, P),
    ("ui", "seven themes and /theme with live preview", M, P),
    ("ui", "theme builder require('uji.themes.default'){...}", M, P),
    (
        "ui",
        "theme text strings and limits",
        H,
        P,
        "diff_context: the tools' diffs keep 3 lines of context",
    ),
    ("ui", "Markdown rendering (headings, lists, tables, code, rules)", P, P),
]


def counts(which: int) -> Counter[str]:
    """which: 2 = before, 3 = now."""
    return Counter(str(row[which]) for row in ROWS)


def summary() -> str:
    lines = []
    for label, which in (("before", 2), ("now", 3)):
        c = counts(which)
        total = sum(c.values())
        parts = ", ".join(
            f"{c[s]} {s} ({100 * c[s] / total:.0f} %)" for s in ("present", "partial", "missing")
        )
        lines.append(f"{label}: {total} rows: {parts}")
    return "\n".join(lines)


def table() -> str:
    out = ["| Section | Row | Before | Now | Note |", "|---|---|---|---|---|"]
    for row in ROWS:
        note = row[4] if len(row) > 4 else ""
        out.append(f"| {row[0]} | {row[1]} | {row[2]} | {row[3]} | {note} |")
    return "\n".join(out)


if __name__ == "__main__":
    print(summary())
