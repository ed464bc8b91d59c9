"""The `uji.*` Lua API, declared once: every namespace, function, value and table shape
that a config sees, with its parameter and return types (LuaLS type syntax) and one doc
line.

`uji.lua.typegen` renders it, with the events of uji.events.catalog, as `docs/lua-api.md`
and as the LuaLS definition file `src/uji/lua/meta/uji.lua`; tests/test_lua_surface.py walks the `uji` table of a real
runtime and checks that what is installed and what is declared are the same. Nothing on
the start-up path imports this module.

Add a function here when you add one to `runtime/uji/api/*.lua`, then run
`python -m uji.devtools.gen_docs` to write the generated files again.
"""

from __future__ import annotations

from uji.record import Record, field


class Param(Record):
    name: str
    type: str  # a LuaLS type expression
    optional: bool = False


class Return(Record):
    type: str
    name: str = ""


class Function(Record):
    name: str  # the full name, such as "uji.tool.add"
    params: tuple[Param, ...]
    returns: tuple[Return, ...]
    doc: str
    # The callback-or-wait convention: the type of what a final callback `cb(result, err)`
    # receives. The call waits for it inside a task; with the callback it returns a cancel
    # function at once.
    waits: str | None = None
    # Other call forms, each the LuaLS `fun(...)` text.
    overloads: tuple[str, ...] = ()


class Value(Record):
    name: str
    type: str
    doc: str


class Field(Record):
    name: str
    type: str
    doc: str = ""
    optional: bool = False


class Shape(Record):
    """A table that a function takes or returns (a LuaLS `---@class`)."""

    name: str
    doc: str
    fields: tuple[Field, ...] = ()


class Alias(Record):
    name: str
    type: str
    doc: str


class Namespace(Record):
    name: str  # "uji" for the top level
    doc: str
    members: list[Function | Value] = field(default_factory=list)


def split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at `sep` outside brackets: "a: fun(x: a, y: b), c" -> two parts."""
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def params(signature: str) -> tuple[Param, ...]:
    """ "name: string, opts?: table" -> its Params."""
    out = []
    for part in split_top(signature):
        name, _, type_ = part.partition(":")
        name, type_ = name.strip(), type_.strip()
        if not name or not type_:
            raise ValueError(f"bad parameter {part!r} in {signature!r}")
        optional = name.endswith("?")
        out.append(Param(name.rstrip("?"), type_, optional))
    return tuple(out)


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += ch in "([{<"
        depth -= ch in ")]}>"
    return depth == 0


def returns(*items: str) -> tuple[Return, ...]:
    """ "string? err" -> Return("string?", "err"); a last word that is a name names the value."""
    out = []
    for item in items:
        head, _, last = item.rpartition(" ")
        if head and last.isidentifier() and _balanced(head):
            out.append(Return(head.strip(), last))
        else:
            out.append(Return(item))
    return tuple(out)


def fields(*specs: tuple[str, str] | tuple[str, str, str]) -> tuple[Field, ...]:
    """("name?", "type", "doc") triples -> Fields; a trailing `?` marks an optional field."""
    out = []
    for spec in specs:
        name, type_ = spec[0], spec[1]
        doc = spec[2] if len(spec) > 2 else ""
        out.append(Field(name.rstrip("?"), type_, doc, name.endswith("?")))
    return tuple(out)


def fn(
    name: str,
    signature: str,
    doc: str,
    *,
    ret: tuple[str, ...] = (),
    waits: str | None = None,
    overloads: tuple[str, ...] = (),
) -> Function:
    return Function(name, params(signature), returns(*ret), doc, waits, overloads)


# Shared types ------------------------------------------------------------------

ALIASES: list[Alias] = [
    Alias("uji.Policy", '"allow"|"ask"|"deny"', "What a tool call gets when no rule decides."),
    Alias(
        "uji.Effort",
        '"off"|"minimal"|"low"|"medium"|"high"|"xhigh"|"max"',
        "A reasoning effort; each turn maps it to the nearest level the model accepts.",
    ),
    Alias(
        "uji.KeyMode",
        '"normal"|"suggest"|"select"|"prompt"|"confirm"|"overlay"',
        "Where a key binding applies.",
    ),
    Alias(
        "uji.KeyBinding",
        "string|{command: string}|{action: string}|fun()",
        'An action name, `{command = "name"}`, `{action = "name"}` or a function.',
    ),
    Alias(
        "uji.ToolRun",
        "fun(args: table, ctx: uji.ToolContext): string|uji.ToolResult|fun()|nil",
        "Returns the result, or nothing (then `ctx.done`), or a cancel function (then `ctx.done`).",
    ),
    Alias("uji.PackSpec", "string|uji.PackTable", '"owner/repo", a git URL, or a table with options.'),
    Alias("uji.Cancel", "fun()", "Stops what was started; calling it again does nothing."),
    Alias(
        "uji.SandboxMode",
        '"workspace-write"|"read-only"|"off"',
        "What the model's commands may write: the working directory and the roots, nothing, or anything.",
    ),
]

SHAPES: list[Shape] = [
    Shape("uji.json.Null", "The type of `uji.json.null`, JSON null."),
    Shape(
        "uji.SandboxOptions",
        "What `uji.sandbox.configure` takes; a key left out keeps its setting.",
        fields(
            ("mode?", "uji.SandboxMode", "default workspace-write"),
            ("network?", "boolean", "false: commands cannot open TCP connections (default true)"),
            ("writable?", "string[]", "folders commands may also write"),
            (
                "deny_read?",
                "string[]",
                "places commands may not read, besides ~/.ssh, ~/.aws, … and uji's data",
            ),
        ),
    ),
    Shape(
        "uji.SandboxStatus",
        "What `uji.sandbox.status` returns.",
        fields(
            ("mode", "uji.SandboxMode", "the mode in force"),
            (
                "available",
                "boolean",
                "commands really run sandboxed (the mode is not off and the kernel can)",
            ),
            ("reason", "string", "why not, or what the kernel offers"),
            ("network", "boolean", "commands may use the network"),
            ("writable", "string[]", "the extra writable folders"),
            ("deny_read", "string[]", "the extra denied places"),
        ),
    ),
    Shape(
        "uji.ToolSpec",
        "What `uji.tool.add` takes.",
        fields(
            ("description?", "string", "what the tool does; the model reads it"),
            ("parameters?", "table", "a JSON Schema for the arguments, as a Lua table"),
            ("run", "uji.ToolRun", "runs a call"),
            ("subject?", "string|fun(args: table): string", "what policy rules match and the screen shows"),
            ("policy?", "uji.Policy", "the fallback when no rule matches"),
            ("display?", "uji.ToolDisplay", "how the transcript and the approval show a call"),
            ("timeout?", "number", "seconds to wait for ctx.done (default 600)"),
            (
                "command?",
                "boolean",
                "the subject is a shell command line: rules judge each part of it, as run_command's",
            ),
            (
                "resolve?",
                "fun(args: table): table?, string?",
                "gives the arguments the call runs with, or nil and an error that becomes its result; "
                "runs before the policy",
            ),
            (
                "path?",
                "boolean",
                "the subject is a path: rules match it like the file tools' (its full form too)",
            ),
        ),
    ),
    Shape(
        "uji.ToolHandle",
        "What `uji.tool.get` gives: the tool registered at the time, which a wrapper that "
        "replaces it can still call.",
        fields(
            ("name", "string"),
            ("description", "string"),
            ("parameters", "table"),
            ("policy?", "uji.Policy", "the policy it declares"),
            (
                "run",
                "fun(args: table, ctx: uji.ToolContext): uji.ToolResult",
                "runs a call with the ctx of the call running now (no policy check: that call had "
                "its own); waits",
            ),
            (
                "start?",
                "fun(args: table, ctx: uji.ToolContext): uji.Process|nil, string?",
                "run_command only: starts the command as `run` would and returns at once; waits "
                "for the start. nil and the error result when it could not start",
            ),
        ),
    ),
    Shape(
        "uji.Process",
        "A command started with `start`; it runs until it ends or is stopped, and uji kills "
        "its process group when the session ends (even if uji is killed). "
        "`p.wait(x)` and `p:wait(x)` both work.",
        fields(
            ("pid", "integer", "the process id, which leads its process group"),
            (
                "wait",
                "fun(seconds?: number, ctx?: uji.ToolContext): uji.ToolResult|nil",
                "its result (as `run` gives it) once it ends, or nil if it still runs after "
                "`seconds`; `ctx` shows its last line meanwhile; an interrupt of the wait kills it",
            ),
            ("status", "fun(): uji.ProcessStatus"),
            (
                "output",
                "fun(): string",
                "its output so far, as `run` would show it (the last 2000 lines or 50 KB)",
            ),
            (
                "read",
                "fun(since?: integer): uji.ProcessOutput",
                "the output after line `since` (default: after the previous read)",
            ),
            ("stop", "fun(): boolean", "kills its process group; false if it had ended"),
            (
                "release",
                "fun(): boolean",
                "ends the wait under way (or the next) as if its time were up, the process running on (Ctrl+Z); "
                "false if it had ended",
            ),
        ),
    ),
    Shape(
        "uji.ProcessStatus",
        "What `process:status()` gives.",
        fields(
            ("running", "boolean"),
            ("code?", "integer", "the exit code once it ended (128 + N for signal N)"),
            ("seconds", "number", "how long it has run (or ran)"),
            ("stopped", "boolean", "stop() ended it"),
            ("pid", "integer"),
        ),
    ),
    Shape(
        "uji.ProcessOutput",
        "What `process:read()` gives. The whole output is kept in a log file of at most 8 MB; "
        "over that, older lines are dropped.",
        fields(
            ("text", "string", "at most the last 2000 lines or 50 KB of what was asked for"),
            ("first", "integer", "the number of the first line in `text`"),
            ("last", "integer", "the number of the last complete line in `text`"),
            ("skipped", "integer", "lines asked for but left out of `text` by the size limit"),
            ("dropped", "integer", "lines asked for that the log no longer holds"),
            ("path", "string", "the log file (deleted when the session ends)"),
            ("cap", "string", 'the log\'s cap, such as "8.0MB"'),
        ),
    ),
    Shape(
        "uji.OAuthSettings",
        "A provider's subscription sign-in (`uji.auth.login`): the authorization code flow with PKCE.",
        fields(
            ("client_id", "string"),
            ("authorize_url", "string"),
            ("token_url", "string"),
            ("scopes?", "string"),
            ("redirect_port?", "integer", "the loopback port (0: any free one)"),
            ("redirect_path?", "string", "default /callback"),
            ("token_body?", '"form"|"json"'),
            ("state?", '"random"|"verifier"', "verifier: the PKCE verifier is the state"),
            ("authorize_params?", "table<string, string>", "added to the authorization URL"),
            ("request_headers?", "table<string, string>", "sent with each request signed in this way"),
            ("identity_prompt?", "string", "Anthropic: a system block before the prompt"),
            (
                "exchange?",
                "{grant_type: string, requested_token: string, subject_token_type: string, subject?: string}",
                "trade the sign-in for an API key",
            ),
        ),
    ),
    Shape(
        "uji.ToolDisplay",
        "How a tool's calls are shown.",
        fields(
            ("verb?", "string", 'the transcript line, such as "Read", followed by the subject'),
            ("label?", "string", "the newer docs' name for `verb`"),
            ("question?", "string", "the title of the approval question"),
            (
                "preview?",
                "fun(args: table): uji.Diff|string",
                "what the approval shows (a `uji.diff` or text)",
            ),
        ),
    ),
    Shape(
        "uji.ToolContext",
        "The second argument of a tool's `run`.",
        fields(
            (
                "done",
                "fun(result: string|uji.ToolResult)",
                "gives the result of a call that returned nothing",
            ),
            (
                "progress",
                "fun(line: string)",
                "shows a line under the running tool (several lines: one per line of the text)",
            ),
            (
                "usage",
                "fun(spent: {input?: integer, output?: integer, cache_read?: integer, cache_write?: integer, "
                "cost?: number})",
                "adds tokens and dollars spent for the session elsewhere (a child session's) to its totals "
                "and budgets",
            ),
            (
                "task",
                'fun(label: string, opts?: {status?: "queued"|"running"|"done"|"failed", group?: string, '
                "line?: string, detail?: string}): uji.TaskHandle",
                "adds a task (running unless `status` says otherwise) shown under the call and sent as "
                "`tasks` JSON events, with its timing",
            ),
        ),
    ),
    Shape(
        "uji.TaskHandle",
        "What `ctx.task` gives.",
        fields(
            (
                "update",
                "fun(self, fields: {label?: string, status?: string, line?: string, detail?: string, group?: string})",
            ),
            ("done", "fun(self, detail?: string)"),
            ("fail", "fun(self, detail?: string)"),
        ),
    ),
    Shape(
        "uji.ToolResult",
        "A tool result with images.",
        fields(
            ("text", "string", "what the model reads"),
            ("images?", "table[]", "images the model gets with the text ({media_type, data})"),
        ),
    ),
    Shape(
        "uji.ToolRules",
        "Rules for one tool in `uji.tool.policy`: exact strings, globs, /regexes/, or `uji.Rule` tables.",
        fields(
            ("allow?", "(string|uji.Rule)[]", "calls that run without asking"),
            ("ask?", "(string|uji.Rule)[]", "calls that ask first"),
            ("deny?", "(string|uji.Rule)[]", "calls uji refuses"),
            ("default?", "uji.Policy", "when no rule of this tool matches"),
        ),
    ),
    Shape(
        "uji.Rule",
        "A rule with a message (the original uji's form), in any list of `uji.ToolRules`.",
        fields(
            ("pattern", "string", "an exact string, a glob, or a /regex/"),
            ("message?", "string", "a deny's reason the model reads; an ask's question"),
        ),
    ),
    Shape(
        "uji.PolicyOptions",
        "The second argument of `uji.tool.policy`.",
        fields(
            (
                "name?",
                "string",
                'the rule set to change (default: your unnamed one); uji\'s own rules are "defaults"',
            ),
        ),
    ),
    Shape(
        "uji.CommandSpec",
        "What `uji.command.add` takes besides a bare function.",
        fields(
            ("handler", "fun(args: string)", "runs `/name args`"),
            ("desc?", "string", "shown in the command suggestions"),
        ),
    ),
    Shape(
        "uji.ContextOptions",
        "Options of `uji.context.add`.",
        fields(("priority?", "number", "lower comes first (default 50)")),
    ),
    Shape(
        "uji.TurnContext",
        "A hidden message sent with this turn, from a context provider.",
        fields(("text", "string"), ("at", '"turn"')),
    ),
    Shape(
        "uji.ContextConfig",
        "What `uji.context.configure` takes.",
        fields(
            ("cache?", '"off"|"short"|"long"', "prompt caching for models that support it"),
            (
                "compaction?",
                "{enabled?: boolean, reserve?: integer, keep_recent?: integer}",
                "when to compact",
            ),
            (
                "instructions?",
                "string[]|boolean",
                "instruction file names, the first found per directory wins "
                '(default {"AGENTS.md", "CLAUDE.md"}); false turns them off',
            ),
        ),
    ),
    Shape(
        "uji.ContextPart",
        "One part of the next request, from `uji.context.list`.",
        fields(
            (
                "name",
                "string",
                'a provider\'s name, an instruction file\'s path, "base prompt", "tools", "other prompt text", '
                '"compaction summary", "conversation" or "images"',
            ),
            ("kind", '"base"|"tools"|"instructions"|"context"|"other"|"summary"|"conversation"|"images"'),
            (
                "tokens",
                "integer",
                "its size: characters / 4 (images by their size), times the provider's count of the "
                "last request over that estimate of it",
            ),
            ("path?", "string", "an instruction file's absolute path"),
            ("at?", '"system"|"turn"', "where a provider's text went at the last turn"),
            ("count?", "integer", "how many tools, messages or images; the messages a summary folded"),
        ),
    ),
    Shape(
        "uji.DecodeOptions",
        "Options of `uji.json.decode`.",
        fields(("nulls?", "boolean", "false drops JSON nulls instead of giving uji.json.null")),
    ),
    Shape(
        "uji.LinesOptions",
        "Options of `uji.fs.lines`.",
        fields(
            ("offset?", "integer", "the first line, from 1"),
            ("limit?", "integer", "at most this many lines"),
            ("max_line?", "integer", "cut longer lines to this many characters"),
        ),
    ),
    Shape(
        "uji.Lines",
        "What `uji.fs.lines` gives.",
        fields(
            ("lines", "string[]"),
            ("cut", "table<integer, true>", "the lines that were cut to max_line"),
            ("total", "integer", "the file's number of lines"),
        ),
    ),
    Shape("uji.Written", "What `uji.fs.write` gives.", fields(("created", "boolean", "the file is new"))),
    Shape(
        "uji.DirEntry",
        "One entry of `uji.fs.list`.",
        fields(("name", "string"), ("type", '"file"|"dir"|"link"|"other"')),
    ),
    Shape(
        "uji.HttpRequest",
        "What `uji.http.request` takes.",
        fields(
            ("url", "string", "http or https"),
            ("method?", "string", 'default "GET"'),
            ("headers?", "table<string, string>"),
            ("body?", "string"),
            ("timeout?", "number", "seconds for the whole request"),
            ("idle?", "number", "seconds without a line before a streaming request fails"),
            ("on_line?", "fun(line: string)", "streams the body line by line"),
        ),
    ),
    Shape(
        "uji.HttpResponse",
        "What `uji.http.request` gives.",
        fields(("status", "integer"), ("headers", "table<string, string>"), ("body", "string")),
    ),
    Shape(
        "uji.JobSpec",
        "What `uji.job.start` takes.",
        fields(
            ("cmd", "string|string[]", "a shell command (sh -c) or an argv list"),
            ("cwd?", "string"),
            ("timeout?", "number", "seconds before the job is stopped"),
            ("on_stdout?", "fun(line: string)"),
            ("on_stderr?", "fun(line: string)"),
            ("on_exit?", 'fun(code: integer, why?: "timeout"|"stopped")', "comes last"),
            (
                "uji?",
                "boolean",
                "`cmd` is a list of uji's arguments: runs this uji (same config, data and database), "
                "provider keys kept",
            ),
        ),
    ),
    Shape(
        "uji.McpServerSpec",
        "What `uji.mcp.add` takes: `command` (stdio) or `url` (streamable HTTP, or HTTP+SSE with `transport`).",
        fields(
            ("command?", "string[]", "the program and its arguments, for a stdio server"),
            ("env?", "table<string, string>", "variables added to the environment"),
            ("cwd?", "string", "the directory it runs in (default: uji's)"),
            ("url?", "string", "a streamable-HTTP server's endpoint"),
            ("headers?", "table<string, string>", "sent with each HTTP request (a token, say)"),
            (
                "transport?",
                '"http"|"sse"',
                'for a `url`: streamable HTTP (default) or "sse", the legacy HTTP+SSE',
            ),
            ("trust_read_only?", "boolean", "tools the server marks read-only default to allow, not ask"),
            (
                "wait?",
                "number",
                "seconds a turn waits for it while it connects (default: uji.mcp.configure's, 10)",
            ),
            (
                "oauth?",
                "uji.McpOAuth|false",
                "how uji gets a `url` server's token (default: discovered; `uji mcp login NAME`); "
                "false: none",
            ),
        ),
    ),
    Shape(
        "uji.McpOAuth",
        "A `url` server's OAuth (`uji mcp login NAME`; the token is kept in <data>/mcp-auth.json, 0600).",
        fields(
            (
                "grant?",
                '"authorization_code"|"client_credentials"|"identity_assertion"',
                "a user's sign-in in the browser (default), the client's own credentials, or an "
                "enterprise IdP's ID token (SEP-990)",
            ),
            ("client_id?", "string", "a pre-registered client (default: dynamic registration)"),
            ("client_secret?", "string"),
            (
                "token_endpoint_auth_method?",
                '"none"|"client_secret_basic"|"client_secret_post"',
                "how a pre-registered client authenticates",
            ),
            ("scope?", "string", "asked for besides what the server's challenge names"),
            (
                "client_metadata_url?",
                "string",
                "an https URL serving uji's client metadata, used where the server supports it",
            ),
            ("callback_port?", "integer", "the loopback redirect's port (default: any free one)"),
            ("private_key?", "string", "PEM: client_credentials with private_key_jwt"),
            ("signing_algorithm?", "string", 'for private_key (default "RS256")'),
            ("issuer?", "string", "the authorization server the credentials belong to"),
            (
                "idp?",
                "{token_endpoint: string, client_id: string, id_token: string}",
                "identity_assertion: the IdP's token endpoint, uji's client id there, the user's ID token",
            ),
        ),
    ),
    Shape(
        "uji.TrustSpec",
        "What `uji.project.trust` takes; the decision is kept per project, kind and file content.",
        fields(
            (
                "files",
                "string[]",
                "files or folders, relative to the root; a change asks again, none there: false",
            ),
            ("title?", "string", "the question"),
            ("body?", "string", "what the user is approving; the files (and what the folders hold) follow"),
        ),
    ),
    Shape(
        "uji.McpServerRow",
        "One row of `uji.mcp.list`.",
        fields(
            ("name", "string"),
            (
                "state",
                '"idle"|"connecting"|"ready"|"failed"|"stopped"',
                "idle: its tools are known from its last start; it starts on their first call",
            ),
            ("tools?", "integer", "how many tools, when ready or idle"),
            ("why?", "string", "why it failed"),
            ("needs_login?", "boolean", "it failed for want of `uji mcp login NAME`"),
        ),
    ),
    Shape(
        "uji.Job",
        "A running background process; `job.send(x)` and `job:send(x)` both work.",
        fields(
            ("send", "fun(text: string): boolean", "writes text and a newline to stdin"),
            ("close", "fun(): boolean", "closes stdin"),
            ("stop", "fun(): boolean", "kills the process group"),
            (
                "interrupt",
                "fun(): boolean",
                "sends SIGINT to the process group, as Ctrl+C would; false if it is not running",
            ),
        ),
    ),
    Shape(
        "uji.Diagnostic",
        "One entry of `uji.diagnostics.list`.",
        fields(
            ("time", "string", '"YYYY-MM-DD HH:MM:SS", local time'),
            ("source", "string", '"lua" (config, hooks, timers, packs) or "config" (a missing function)'),
            ("text", "string"),
        ),
    ),
    Shape(
        "uji.ConfigFile",
        "One file of `uji.config.files`.",
        fields(
            ("name", "string"),
            ("path", "string"),
            ("text", "string"),
            ("project?", "true", "from the project's `.uji/<folder>`"),
        ),
    ),
    Shape(
        "uji.PackTable",
        'A pack with options: `[1]` ("owner/repo" or a git URL) or `url` is the repository.',
        fields(
            ("url?", "string", "a git URL"),
            ("dir?", "string", "a local directory, never cloned"),
            ("name?", "string", "the directory under `<data>/site` (default: the repository's name)"),
            ("tag?", "string"),
            ("branch?", "string"),
            ("commit?", "string"),
        ),
    ),
    Shape(
        "uji.ModeOptions",
        "The third argument of `uji.mode.add`.",
        fields(
            ("desc?", "string", "shown by `uji.mode.list` and /mode"),
            ("on_enter?", "fun(from: string)", "called after the mode is switched to"),
            ("on_leave?", "fun(to: string)", "called after another mode is switched to"),
        ),
    ),
    Shape(
        "uji.ModeRow",
        "One row of `uji.mode.list`.",
        fields(
            ("name", "string"),
            ("desc", "string"),
            ("current", "boolean"),
            ("policy", "table", "the layer's rules, as `uji.tool.policy` takes them"),
            ("origin?", "string", '"built-in", or the file:line that added it'),
        ),
    ),
    Shape(
        "uji.KeyRow",
        "One row of `uji.keymap.list`.",
        fields(
            ("mode", "uji.KeyMode"),
            ("key", "string"),
            ("action?", "string"),
            ("command?", "string"),
            ("unbound?", "true"),
        ),
    ),
    Shape(
        "uji.WireSpec",
        "What `uji.wire.add` takes.",
        fields(
            (
                "stream",
                "fun(request: table, reply: uji.WireReply): uji.Cancel?",
                "streams one answer; may return a cancel function",
            ),
        ),
    ),
    Shape(
        "uji.WireReply",
        "The reply a wire's `stream` fills in.",
        fields(
            ("text", "fun(delta: string)"),
            ("reasoning", "fun(delta: string)"),
            ("done", "fun(answer: string|table)", "{text, reasoning?, tool_calls?, usage?}"),
            ("fail", "fun(failure: string|table)", '{kind = "http"|"auth"|"provider", message, status?}'),
        ),
    ),
    Shape(
        "uji.ModelSpec",
        "A model of a provider.",
        fields(
            ("id", "string"),
            ("name?", "string"),
            ("context?", "integer", "the context window in tokens"),
            ("output?", "integer", "the output limit in tokens"),
            ("reasoning?", "boolean"),
            (
                "cache?",
                "boolean",
                "false: send no prompt-cache breakpoints (Anthropic wire; every model gets them otherwise)",
            ),
            ("images?", "boolean"),
            ("efforts?", "uji.Effort[]"),
            ("wire?", "string", "another wire for this model"),
            ("cost?", "uji.ModelCost", "list prices, for the cost shown and max_cost"),
        ),
    ),
    Shape(
        "uji.ModelCost",
        "A model's prices in dollars per million tokens (the models.dev shape); a cache "
        "price left out is charged as input.",
        fields(
            ("input", "number"),
            ("output", "number"),
            ("cache_read?", "number"),
            ("cache_write?", "number"),
        ),
    ),
    Shape(
        "uji.ProviderSpec",
        "What `uji.provider.add` takes; an existing id is merged into.",
        fields(
            ("id", "string"),
            ("name?", "string", "required for a new provider"),
            ("wire?", "string", "the wire it speaks, such as openai-chat (`api` is the same)"),
            ("api?", "string|uji.Api", "a wire's name, or an api object (uji.api)"),
            ("base_url?", "string", "required for a new provider without a `loop`"),
            ("auth_env?", "string[]", "environment variables that hold its key"),
            (
                "models?",
                "(string|uji.ModelSpec)[]|fun(): (string|uji.ModelSpec)[]",
                "a list, or a lazy function",
            ),
            ("context_window?", "integer"),
            ("idle?", "number", "seconds a stream may stall (default 120)"),
            ("needs_key?", "boolean"),
            ("compat?", "table", "openai-chat dialect options"),
            (
                "loop?",
                "table",
                "a class (uji.class) with `run`: the provider runs its turns (`Loop(agent, turn)`)",
            ),
            ("oauth?", "uji.OAuthSettings", "subscription sign-in (uji.auth.login)"),
        ),
    ),
    Shape(
        "uji.ToolDisplay",
        "What `uji.tool.display` takes.",
        fields(
            ("label?", "string", "the transcript's label before the subject"),
            ("subject?", "string|fun(args: table): string", "what policy rules match; default the name"),
            ("question?", "string", "the approval question's title"),
            ("preview?", "fun(args: table): uji.Diff|string", "shown in the approval question"),
        ),
    ),
    Shape(
        "uji.Apis",
        "The API classes (`uji.api`).",
        fields(
            ("openai", "fun(opts?: uji.ApiOptions): uji.Api", "Chat Completions"),
            ("responses", "fun(opts?: uji.ApiOptions): uji.Api", "OpenAI Responses (cache_key on)"),
            ("anthropic", "fun(opts?: table): uji.Api", "Anthropic Messages"),
            ("gemini", "fun(opts?: table): uji.Api", "Gemini streamGenerateContent"),
        ),
    ),
    Shape(
        "uji.ApiOptions",
        "Options of an OpenAI api object (Responses takes `cache_key`); other keys are kept "
        "on the object for its own methods.",
        fields(
            ("max_tokens_field?", "string|false", "the output limit's field (max_tokens); false omits it"),
            ("finish_reason?", "boolean", "false accepts a stream that ends without one"),
            ("cache_key?", "boolean", "send the session id as prompt_cache_key"),
            ("tool_result_name?", "boolean", "tool messages carry the tool's name"),
            ("bridge_tool_images?", "boolean", "an assistant line before the tool images (Mistral)"),
        ),
    ),
    Shape(
        "uji.Api",
        "An api object. A subclass overrides any of these; the built-in one is "
        "`uji.api.<name>.<method>(self, ...)`.",
        fields(
            ("url?", "fun(self: uji.Api, request: table): string"),
            ("headers?", "fun(self: uji.Api, request: table): table<string, string>"),
            ("body?", "fun(self: uji.Api, request: table): table"),
            ("thinking?", "fun(self: uji.Api, body: table, request: table)", "OpenAI: sets the effort"),
            ("user?", "fun(self: uji.Api, item: table, request: table): table", "OpenAI: a message"),
            ("assistant?", "fun(self: uji.Api, item: table, request: table): table", "OpenAI"),
            ("tool?", "fun(self: uji.Api, item: table, request: table): table", "OpenAI"),
            ("reasoning?", "fun(self: uji.Api, delta: table): string?", "OpenAI: a delta's reasoning"),
            ("stream?", "fun(self: uji.Api, request: table, reply: table): table?", "one call; waits"),
        ),
    ),
    Shape(
        "uji.ProviderRow",
        "A provider as `uji.provider.list` and `get` show it.",
        fields(
            ("id", "string"),
            ("name", "string"),
            ("wire", "string"),
            ("api", "string"),
            ("base_url", "string"),
            ("auth_env", "string[]"),
            ("context_window?", "integer"),
            ("models", "uji.ModelSpec[]"),
            ("oauth", "boolean"),
            ("loop", "boolean"),
            ("state", '"idle"|"loading"|"loaded"|"failed"'),
            ("error?", "string"),
        ),
    ),
    Shape(
        "uji.ModelChoice",
        "What `uji.model.use` takes.",
        fields(
            ("provider?", "string"),
            ("model?", "string"),
            ("effort?", "uji.Effort"),
            ("base_url?", "string", '"" goes back to the provider\'s own'),
        ),
    ),
    Shape(
        "uji.CurrentModel",
        "What `uji.model.current` gives.",
        fields(
            ("provider", "string"),
            ("name", "string"),
            ("model", "string"),
            ("base_url", "string"),
            ("effort?", "uji.Effort"),
            ("images?", "boolean"),
        ),
    ),
    Shape(
        "uji.SessionInfo",
        "What `uji.session.info` gives.",
        fields(("id", "string"), ("title", "string"), ("directory", "string"), ("short_directory", "string")),
    ),
    Shape(
        "uji.SessionMessage",
        "One message of `uji.session.messages`.",
        fields(("type", "string"), ("text", "string"), ("name?", "string"), ("seq", "integer")),
    ),
    Shape(
        "uji.SessionMessagesOptions",
        "Options of `uji.session.messages`: a page of the messages.",
        fields(
            ("before?", "integer", "only messages with a lower seq"),
            ("limit?", "integer", "the last `limit` of those; default: all"),
            (
                "session?",
                "string",
                "another session's messages, such as a subagent's (default: the open one)",
            ),
        ),
    ),
    Shape(
        "uji.Usage",
        "Tokens spent in the session.",
        fields(
            ("input", "integer"),
            ("output", "integer"),
            ("cache_read", "integer"),
            ("cache_write", "integer"),
            ("total", "integer"),
            ("last", "table", "the last request's counts"),
            ("requests", "integer"),
            ("cost?", "number", "dollars, when the model's prices are known"),
            ("session", "table", "the session's totals over all its runs (the same keys, no last)"),
        ),
    ),
    Shape(
        "uji.SessionBudgets",
        "What `uji.session.configure` takes: the budgets of one turn, each a number > 0.",
        fields(
            ("max_steps?", "integer", "model calls (default 100)"),
            ("max_cost?", "number", "dollars (counted for models with prices)"),
            ("max_tokens?", "integer", "tokens: input, output and cache"),
            ("max_minutes?", "number", "minutes, checked between steps"),
        ),
    ),
    Shape(
        "uji.ContextUse",
        "What `uji.session.context` gives.",
        fields(("used", "integer", "an estimate"), ("window?", "integer")),
    ),
    Shape(
        "uji.RewindOptions",
        "Options of `uji.session.rewind`.",
        fields(
            ("files?", "boolean", "restore the files as they were before the turn (default true)"),
            (
                "conversation?",
                "boolean",
                "drop the turn and what followed from the conversation (default true)",
            ),
            ("force?", "boolean", "overwrite files changed outside uji since the checkpoint (default false)"),
        ),
    ),
    Shape(
        "uji.Rewound",
        "What `uji.session.rewind` did.",
        fields(
            ("text", "string", "the prompt of the turn rewound"),
            ("restored", "string[]", "files written back, relative to the project"),
            ("removed", "string[]", "files the turns had created, deleted"),
            ("messages", "integer", "conversation messages dropped"),
        ),
    ),
    Shape(
        "uji.SessionRow",
        "One session of `uji.session.list`.",
        fields(("id", "string"), ("title", "string"), ("directory", "string"), ("updated", "integer", "ms")),
    ),
    Shape(
        "uji.SessionListOptions",
        "Options of `uji.session.list`.",
        fields(
            ("directory?", "string", "default: the working directory"),
            ("parent?", "string", "list this session's children (its subagents' sessions) instead"),
        ),
    ),
    Shape(
        "uji.SelectSpec",
        "What `uji.ui.select` takes.",
        fields(
            ("title?", "string"),
            ("items", "any[]"),
            ("current?", "any", "the item the list opens on"),
            ("label?", "fun(item: any): string", "the text of an item that is not a string"),
        ),
    ),
    Shape(
        "uji.PickSpec",
        "What `uji.ui.pick` takes.",
        fields(
            ("title?", "string"),
            ("items", "any[]"),
            ("current?", "any", "the item the list opens on"),
            ("label?", "fun(item: any): string", "the text of an item that is not a string"),
            (
                "preview?",
                "fun(item: any): string[]|string",
                'lines shown for the highlighted item (default: a "path:line:" item shows that file there)',
            ),
            (
                "on_query?",
                "fun(query: string, show: fun(items: any[])): any[]?",
                "a live list: the items for what is typed, asked when typing pauses (returned, or given to show)",
            ),
        ),
    ),
    Shape(
        "uji.PromptSpec",
        "What `uji.ui.prompt` takes.",
        fields(("title?", "string"), ("value?", "string"), ("hidden?", "boolean", "for secrets")),
    ),
    Shape(
        "uji.UiConfig",
        "What `uji.ui.configure` takes (unknown keys raise).",
        fields(
            (
                "theme?",
                "string|table",
                "a theme's name (`lua/uji/themes/<name>.lua` in the config, a pack or uji) or a theme "
                "table; one that fails to load keeps the theme in use",
            ),
            ("show_thinking?", "boolean", "show the model's reasoning"),
            ("suggest?", "{enabled?: boolean}", "the `/` command suggestions (default on)"),
            (
                "notify?",
                '"auto"|"osc9"|"osc777"|"bell"|"off"|false|fun(reason: "turn_done"|"question", text: string): string?',
                "what the terminal is sent when a turn ends or a question waits and the terminal "
                "is not focused (default auto: OSC 9, OSC 777 or BEL by terminal); a function is "
                "called instead, and a style it returns is sent too",
            ),
        ),
    ),
    Shape(
        "uji.ToolbarHandle",
        "What `uji.ui.toolbar` returns.",
        fields(("remove", "fun(self): boolean", "takes its items away; false if already gone")),
    ),
    Shape(
        "uji.OverlayHandle",
        "What `uji.ui.overlay` returns.",
        fields(
            ("close", "fun(self, value?: any): boolean", "closes it; `wait()` then gives `value`"),
            (
                "wait",
                "fun(self): any",
                "waits until it is closed: the value (nil for Esc, or with no screen)",
            ),
        ),
    ),
    Shape(
        "uji.KeyEvent",
        "A key as `uji.input.capture`'s handler gets it.",
        fields(
            ("key", "string", 'the key\'s name as in the key syntax: "a", "CR", "Esc", "Up", "F1"'),
            ("char?", "string", "the character it types, if any"),
            ("ctrl", "boolean"),
            ("alt", "boolean"),
            ("shift", "boolean"),
        ),
    ),
    Shape(
        "uji.ConfirmSpec",
        "What `uji.ui.confirm` takes.",
        fields(
            ("title?", "string"),
            ("body?", "string"),
            ("timeout?", "number", "seconds; then the answer is nil"),
            ("preview?", "string", "a diff or text shown with the question"),
        ),
    ),
]


# Namespaces ----------------------------------------------------------------------

# The replaceable views (reference §6, `uji.ui.<View>`): name, what it draws, its props
# (None: a transcript message's, as render_message gets it).
_ROW = "{label: string, index: integer, selected: boolean, current: boolean, width: integer}"  # a list's row
MESSAGE_PROPS = "{type: string, text: string, width: integer, name?: string, tool_calls?: table[]}"
REPLACEABLE_VIEWS: list[tuple[str, str, str | None]] = [
    ("UserMessage", "a user message", None),
    ("ToolCall", "a tool call waiting for its result", None),
    ("ToolOutput", "a tool call with its result", None),
    ("Shell", "a `!` shell line", None),
    ("SystemMessage", "an info message", None),
    ("ErrorMessage", "an error", None),
    ("Notice", "a notice", None),
    ("Thinking", "the model's reasoning", None),
    ("Queued", "a message queued during a turn", None),
    (
        "Running",
        "a tool call while it runs (`progress`: its live lines)",
        "{type: string, name: string, text: string, progress: string, width: integer}",
    ),
    (
        "Diff",
        "the diff a tool's result shows (`text`: a unified diff)",
        "{type: string, text: string, name: string, path?: string, width: integer}",
    ),
    (
        "Partial",
        "the answer while it streams (`text`: the markdown so far)",
        "{type: string, text: string, width: integer}",
    ),
    (
        "Compaction",
        "where older messages were summarised",
        "{type: string, text: string, summary: string, width: integer}",
    ),
    (
        "Job",
        "a background job that ended (the jobs plugin's notice)",
        "{type: string, id: integer, command: string, status: string, text: string, width: integer}",
    ),
    (
        "Jump",
        "the label under the transcript while the reader is scrolled up and more came",
        "{type: string, count: integer, text: string, width: integer}",
    ),
    (
        "Paragraph",
        "a top-level paragraph of an answer's markdown (`text` plain, `markdown` its source; lists and quotes draw as uji draws them)",
        "{type: string, text: string, markdown: string, width: integer}",
    ),
    (
        "Heading",
        "a top-level heading of an answer's markdown",
        "{type: string, level: integer, text: string, width: integer}",
    ),
    (
        "CodeBlock",
        'a top-level fenced or indented code block of an answer (`language` is "" when none)',
        "{type: string, language: string, text: string, width: integer}",
    ),
    (
        "MathBlock",
        "a top-level `$$ ... $$` block of an answer (`text`: the TeX)",
        "{type: string, text: string, width: integer}",
    ),
    (
        "TableRow",
        "a row of a top-level table in an answer (`header`: the first row; `widths`: each column's)",
        "{type: string, cells: string[], header: boolean, widths: integer[], width: integer}",
    ),
    ("Rule", "a top-level horizontal rule of an answer", "{type: string, width: integer}"),
    (
        "Activity",
        'the activity row while a turn or a `!` command runs ("Working (3s)")',
        "{type: string, text: string, seconds: integer, spinner: string, hint: string, width: integer}",
    ),
    (
        "Flash",
        'a short note in the activity row ("copied 2 lines")',
        "{type: string, text: string, width: integer}",
    ),
    (
        "Screen",
        "the screen: return an `ito.VStack` of the regions `screen` gives (uji's own widgets) in any "
        "order, with ito views of your own between them; a region left out is hidden, one without the "
        "transcript, modals or composer gives the default screen",
        "{top_bar: fun(): table, transcript: fun(): table, activity: fun(): table, modals: fun(): table, "
        "keyboard: fun(): table, composer: fun(): table, bottom_bar: fun(): table}",
    ),
    (
        "Input",
        "what sits above the composer's text, in place of its rules (the editing stays uji's)",
        "{width: integer, placeholder: string}",
    ),
    ("SelectList", "a row of `uji.ui.select`'s list", _ROW),
    ("Picker", "a row of `uji.ui.pick`'s list", _ROW),
    (
        "Sessions",
        'a row of `/sessions` (`ago`: "3m ago")',
        "{title: string, ago: string, id: string, label: string, index: integer, selected: boolean, "
        "current: boolean, width: integer}",
    ),
    (
        "Suggestions",
        "a row of the `/` command suggestions",
        "{name: string, desc: string, selected: boolean, width: integer}",
    ),
    (
        "Approval",
        "the approval question (and `uji.ui.confirm`), frame and all (`selected`: the highlighted "
        "choice; y, n, the numbers and Enter still answer it)",
        "{title: string, body: string, preview?: string, choices: {label: string, key: string, kind: string}[], "
        "selected: integer, hint: string, width: integer}",
    ),
    (
        "PromptField",
        "what sits above a prompt's text field (`uji.ui.prompt`), in place of its frame",
        "{title: string, hidden: boolean, width: integer}",
    ),
]

NAMESPACES: list[Namespace] = [
    Namespace(
        "uji",
        "The top level: notices, timers and events.",
        [
            fn("uji.notify", "message: any", "Shows a notice (`print` does the same)."),
            fn("uji.schedule", "fn: fun()", "Runs `fn` soon, in a task of its own."),
            fn(
                "uji.defer",
                "seconds: number, fn: fun()",
                "Runs `fn` after `seconds`; returns a function that cancels it.",
                ret=("uji.Cancel",),
            ),
            fn(
                "uji.on",
                "event: string, handler: fun(e: table): any, opts?: uji.OnOptions",
                "Runs `handler` on `event`; returns the handler's name (for uji.off).",
                ret=("string name",),
            ),
            fn(
                "uji.off",
                "event: uji.EventName, name: string",
                "Removes the handler `name` of `event`; true if there was one.",
                ret=("boolean",),
            ),
            fn(
                "uji.emit",
                "event: uji.EventName, payload?: table",
                "Fires `event` for its handlers (`payload.event` is set to the name); inside a task they "
                "have all run when it returns.",
            ),
            fn(
                "uji.quit",
                "",
                "Ends uji: the screen fires before_quit and exits; `uji run` ends cleanly once this code "
                "returns (no prompt runs after it).",
            ),
            fn(
                "uji.reload",
                "",
                "Restarts Lua on the same session, keeping the draft; `uji run` reads the config again "
                "before its prompt, once. Not while the config loads on the screen.",
            ),
        ],
    ),
    Namespace(
        "uji.json",
        "JSON in and out.",
        [
            Value("uji.json.null", "uji.json.Null", "JSON null (nil cannot be stored in a table)."),
            fn(
                "uji.json.array",
                "t: table",
                "Marks `t` as an array, so that it encodes as [] even when empty.",
                ret=("table",),
            ),
            fn(
                "uji.json.encode",
                "value: any",
                "The value as compact JSON; raises on functions.",
                ret=("string",),
            ),
            fn(
                "uji.json.decode",
                "text: string, opts?: uji.DecodeOptions",
                "The value of JSON text; raises on invalid JSON.",
                ret=("any",),
            ),
        ],
    ),
    Namespace(
        "uji.tool",
        "The tools the model can call, and which calls need your approval.",
        [
            fn(
                "uji.tool.add",
                "name: string, spec: uji.ToolSpec",
                "Registers a tool, or replaces the tool of that name.",
            ),
            fn(
                "uji.tool.get",
                "name: string",
                "The tool registered now under `name` (nil if none), to call from a tool that replaces it.",
                ret=("uji.ToolHandle?",),
            ),
            fn(
                "uji.tool.display",
                "name: string, opts: uji.ToolDisplay",
                "Describes a tool uji does not run (a provider's own loop runs it): how the gate judges "
                "its calls and the screen shows them.",
            ),
            fn("uji.tool.remove", "name: string", "Removes a tool; true if it existed.", ret=("boolean",)),
            fn("uji.tool.list", "", "The names of every registered tool.", ret=("string[]",)),
            fn(
                "uji.tool.disable",
                "names: string|string[]",
                "Turns tools off: the model still sees them, and every call is denied.",
            ),
            fn("uji.tool.enable", "names: string|string[]", "Turns tools back on."),
            fn(
                "uji.tool.policy",
                "rules: table<string, uji.ToolRules|uji.Policy>, opts?: uji.PolicyOptions",
                "Sets the allow/ask/deny rules of the tools it names (`default` for all) in one rule set; "
                "every set's rules apply, uji's defaults included.",
            ),
            fn(
                "uji.tool.write_flags",
                "flags?: table<string, string[]|true>",
                "Sets the flags that make an allowed command ask (they write or run programs); returns them.",
                ret=("table<string, string[]|true>",),
            ),
            fn(
                "uji.tool.allow",
                "tool: string, subject: string",
                "Remembers an approval: calls of `tool` with exactly this subject no longer ask.",
            ),
            fn(
                "uji.tool.confine",
                "enabled?: boolean",
                "Limits the file tools to the working directory and the roots; returns the setting.",
                ret=("boolean",),
            ),
            fn(
                "uji.tool.on_ask",
                "",
                'What a call that would ask gets with nobody to answer (`uji run --on-ask`): "allow", '
                '"deny" or "sandbox" (the default: only if it runs inside the sandbox); nil when a person answers.',
                ret=('"allow"|"deny"|"sandbox"|nil',),
            ),
            fn(
                "uji.tool.available",
                "",
                "The tools a call can use in this run: offered to the model (`uji run --tools`) and not "
                "disabled.",
                ret=("string[]",),
            ),
            fn(
                "uji.tool.roots",
                "paths?: string|string[]",
                "Sets the directories the file tools may reach besides the working one; returns them.",
                ret=("string[]",),
            ),
            fn(
                "uji.tool.read_roots",
                "paths?: string|string[]",
                "Sets the directories the file tools and uji.fs may read (never write); returns them.",
                ret=("string[]",),
            ),
            fn(
                "uji.tool.inherit_keys",
                "keep?: boolean|string|string[]",
                "Which provider key variables commands and jobs inherit (false: none); returns it.",
                ret=("boolean|string[]",),
            ),
        ],
    ),
    Namespace(
        "uji.mode",
        "The gate's modes (Shift+Tab cycles them): policy layers over the rules as written.",
        [
            fn(
                "uji.mode.add",
                "name: string, policy: table<string, uji.ToolRules|uji.Policy>, opts?: uji.ModeOptions",
                "Adds a mode, or replaces one: its policy can allow what would ask and deny anything.",
            ),
            fn("uji.mode.set", "name: string", "Switches to a mode (ask, accept_edits, plan, or one added)."),
            fn("uji.mode.get", "", "The current mode's name.", ret=("string",)),
            fn("uji.mode.list", "", "Every mode, in Shift+Tab order.", ret=("uji.ModeRow[]",)),
        ],
    ),
    Namespace(
        "uji.sandbox",
        "The OS sandbox (Linux Landlock) of every process started for the model: run_command, jobs, "
        "subagents' commands, uji.job.start inside a tool call.",
        [
            fn(
                "uji.sandbox.configure",
                "opts: uji.SandboxOptions",
                "Sets the sandbox of the model's commands; returns its status.",
                ret=("uji.SandboxStatus",),
            ),
            fn(
                "uji.sandbox.status",
                "",
                "The sandbox in force and whether the kernel can hold it.",
                ret=("uji.SandboxStatus",),
            ),
        ],
    ),
    Namespace(
        "uji.command",
        "Slash commands, `/name args`.",
        [
            fn(
                "uji.command.add",
                "name: string, spec: fun(args: string)|uji.CommandSpec",
                "Adds a command, or replaces one of that name (built-ins included).",
            ),
            fn(
                "uji.command.remove",
                "name: string",
                "Removes a command; true if it existed.",
                ret=("boolean",),
            ),
            fn(
                "uji.command.list", "", "Every command's name, built-in and added, sorted.", ret=("string[]",)
            ),
        ],
    ),
    Namespace(
        "uji.context",
        "What each turn adds to the system prompt, or sends as hidden context.",
        [
            fn(
                "uji.context.add",
                "name: string, provide: fun(): string|uji.TurnContext|nil, opts?: uji.ContextOptions",
                "Calls `provide` at the start of each turn: a string joins the system prompt.",
            ),
            fn(
                "uji.context.remove",
                "name: string",
                "Removes a provider; true if it existed.",
                ret=("boolean",),
            ),
            fn(
                "uji.context.list",
                "",
                "The names of the providers added with `add`, in the order they run.",
                ret=("string[]",),
            ),
            fn(
                "uji.context.parts",
                "",
                "Every part of the next request with its size: the base prompt, the tools, each "
                "instruction file, each provider in the order added (what it gave at the last turn), "
                "other prompt text, then with a session open the compaction summary, the conversation "
                "and its images. Sizes are characters / 4 calibrated on the provider's count of the "
                "last request, so they add up to about what it will count.",
                ret=("uji.ContextPart[]",),
            ),
            fn(
                "uji.context.configure",
                "opts: uji.ContextConfig",
                "Sets prompt caching, compaction and the instruction files; raises on unknown keys.",
            ),
        ],
    ),
    Namespace(
        "uji.wire",
        "Wires: how a provider's API is spoken.",
        [
            fn("uji.wire.add", "name: string, spec: uji.WireSpec", "Adds a wire written in Lua."),
            fn(
                "uji.wire.remove", "name: string", "Removes a Lua wire; true if it existed.", ret=("boolean",)
            ),
            fn("uji.wire.list", "", "The names of the wires.", ret=("string[]",)),
        ],
    ),
    Namespace(
        "uji.api",
        "Provider APIs as classes: a provider's `api` object (the late-era form of uji.wire).",
        [
            Value(
                "uji.api",
                "uji.Apis",
                "`openai` (Chat Completions), `responses`, `anthropic`, `gemini`: call one for an "
                "object (`uji.api.openai{ max_tokens_field = false }`), or subclass it with uji.class "
                "and override methods. Any other name requires `uji.builtin.apis.<name>`; "
                "`uji.api.stream.run{url, headers, body, reply, read(event, parts), finished?, settle?}` "
                "is the shared SSE helper for a class of one's own (README: API objects).",
            ),
        ],
    ),
    Namespace(
        "uji.provider",
        "Model providers.",
        [
            Value(
                "uji.provider.STATE",
                '{IDLE: "idle", LOADING: "loading", LOADED: "loaded", FAILED: "failed"}',
                "The states of a provider's model list.",
            ),
            fn(
                "uji.provider.add",
                "spec: uji.ProviderSpec",
                "Adds a provider, or merges into one of that id.",
            ),
            fn(
                "uji.provider.get",
                "id: string",
                "A provider's row, or nil; never loads its models.",
                ret=("uji.ProviderRow?",),
            ),
            fn(
                "uji.provider.load",
                "id: string",
                "Loads a provider's lazy model list if needed; gives its row.",
                ret=("uji.ProviderRow?", "string? err"),
                waits="uji.ProviderRow",
            ),
            fn(
                "uji.provider.remove",
                "id: string",
                "Removes a provider; true if it existed.",
                ret=("boolean",),
            ),
            fn("uji.provider.list", "", "Every provider's row.", ret=("uji.ProviderRow[]",)),
        ],
    ),
    Namespace(
        "uji.model",
        "The model the session uses.",
        [
            fn(
                "uji.model.use",
                "spec: uji.ModelChoice",
                "Chooses the provider, model or effort, and saves the choice.",
            ),
            fn("uji.model.current", "", "The current choice.", ret=("uji.CurrentModel",)),
            fn(
                "uji.model.efforts",
                "",
                "The efforts the current model accepts, least first; empty if it does not reason.",
                ret=("uji.Effort[]",),
            ),
        ],
    ),
    Namespace(
        "uji.auth",
        "Credentials: saved in auth.toml (or the keychain) or found in a provider's `auth_env`; "
        "subscription sign-in.",
        [
            fn(
                "uji.auth.configure",
                "opts: {keychain?: boolean}",
                "Keeps credentials in the system keychain (service `uji`, the provider's id as account; "
                "`security` on macOS, `secret-tool` elsewhere); a save it refuses goes to auth.toml. "
                "Without a keychain, a notice says so and they stay in auth.toml.",
            ),
            fn(
                "uji.auth.login",
                "id: string",
                "Signs in to a provider with `oauth` in the browser (PKCE, a loopback redirect) and "
                "saves the sign-in; true, or nil and the error.",
                ret=("true?", "string? err"),
                waits="true",
            ),
            fn(
                "uji.auth.save_key",
                "id: string, key: string",
                "Saves a provider's API key; true, or nil and the error.",
                ret=("true?", "string? err"),
            ),
            fn(
                "uji.auth.authenticated",
                "id: string",
                "Whether a key is saved, or an `auth_env` variable is set, for the provider.",
                ret=("boolean",),
            ),
        ],
    ),
    Namespace(
        "uji.session",
        "The open session.",
        [
            fn(
                "uji.session.info",
                "",
                "The open session, or nil before one is open.",
                ret=("uji.SessionInfo?",),
            ),
            fn(
                "uji.session.messages",
                "opts?: uji.SessionMessagesOptions",
                "The session's messages, oldest first, read from the store (all, or a page).",
                ret=("uji.SessionMessage[]",),
            ),
            fn("uji.session.usage", "", "The tokens and dollars spent so far.", ret=("uji.Usage?",)),
            fn(
                "uji.session.configure",
                "opts: uji.SessionBudgets",
                "Sets the budgets of a turn; at one the user is asked whether to go on. Raises on "
                "unknown keys or bad values.",
            ),
            fn("uji.session.context", "", "How full the context window is.", ret=("uji.ContextUse?",)),
            fn("uji.session.queue", "", "The messages waiting for the turn to end.", ret=("string[]",)),
            fn("uji.session.state", "", "Whether a turn is running.", ret=('"working"|"idle"',)),
            fn("uji.session.elapsed", "", "Seconds since the turn started, or nil.", ret=("number?",)),
            fn("uji.session.set_title", "title: string", "Saves the session's title."),
            fn(
                "uji.session.submit",
                "text: string",
                "Sends `text` as if typed; queued while a turn runs.",
            ),
            fn(
                "uji.session.interrupt",
                "",
                "Stops the turn or the `!` command; true if there was one.",
                ret=("boolean",),
            ),
            fn(
                "uji.session.compact",
                "",
                "Summarises older messages now; true, or false and the reason.",
                ret=("boolean ok", "string? why"),
                waits="boolean",
            ),
            fn(
                "uji.session.rewind",
                "n?: integer, opts?: uji.RewindOptions",
                "Back to before the `n`-th last turn (default 1): its files as they were, and "
                "the conversation without it; true and what it did, or nil, why, and the files "
                "changed outside uji that refused it.",
                ret=("true?", "uji.Rewound|string", "string[]?"),
                waits="uji.Rewound",
            ),
            fn(
                "uji.session.list",
                "opts?: uji.SessionListOptions",
                "The directory's sessions, newest first (child sessions left out; `parent` lists "
                "one session's children).",
                ret=("uji.SessionRow[]",),
            ),
            fn(
                "uji.session.delete",
                "id: string",
                "Deletes a session and its children; true, or nil and why.",
                ret=("true?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.keymap",
        "Key bindings per mode.",
        [
            fn(
                "uji.keymap.add",
                "mode: uji.KeyMode|uji.KeyMode[], key: string, binding: uji.KeyBinding",
                'Binds a key such as "<C-x>" in one mode or several.',
            ),
            fn(
                "uji.keymap.remove",
                "mode: uji.KeyMode|uji.KeyMode[], key: string",
                "Marks the key unbound in the mode, defaults included.",
            ),
            fn("uji.keymap.reset", "", "Drops every binding made by the config."),
            fn("uji.keymap.list", "", "Every binding, defaults included.", ret=("uji.KeyRow[]",)),
        ],
    ),
    Namespace(
        "uji.ui",
        "Questions on the screen; with no screen (`uji run`) they answer nil, with a notice.",
        [
            fn(
                "uji.ui.select",
                "spec: uji.SelectSpec",
                "Asks to choose one of `items`; gives the item, or nil.",
                ret=("any",),
                waits="any",
            ),
            fn(
                "uji.ui.pick",
                "spec: uji.PickSpec",
                "The picker: like select, with a preview of the highlighted item; it filters as you "
                "type, or with `on_query` asks for the items of what is typed.",
                ret=("any",),
                waits="any",
            ),
            fn(
                "uji.ui.prompt",
                "spec: uji.PromptSpec",
                "Asks for a line of text; gives it, or nil when cancelled.",
                ret=("string?",),
                waits="string",
            ),
            fn(
                "uji.ui.confirm",
                "spec: uji.ConfirmSpec",
                "Asks yes or no; gives true, false, or nil on timeout.",
                ret=("boolean?",),
                waits="boolean",
            ),
            fn(
                "uji.ui.configure",
                "spec: uji.UiConfig",
                "Sets the theme, whether reasoning shows, the `/` suggestions and the bell when a turn "
                "ends or a question waits unfocused; raises on unknown keys.",
            ),
            fn("uji.ui.theme", "", "The theme in use: its name.", ret=("string",)),
            fn(
                "uji.ui.save_theme",
                "name: string",
                "Saves the theme choice (raises if it does not load); it applies before the config runs.",
            ),
            fn(
                "uji.ui.toolbar",
                "items: table[]",
                "Puts `ito.ToolbarItem`s in the top bar (top_bar_leading, top_bar_trailing), above the "
                "input (keyboard) or in the bottom bar (bottom_bar, under the status line; the statusline plugin's "
                'bar, id "statusline", takes its place). An item '
                "that raises draws nothing and says so once. Without a screen they are kept, not drawn.",
                ret=("uji.ToolbarHandle",),
            ),
            fn(
                "uji.ui.overlay",
                "content: table|fun(handle: uji.OverlayHandle): table, opts?: {float?: boolean}",
                "Shows an ito view above the composer until closed: keys go to its controls; Esc closes "
                "it, Enter too when no control used it. Without a screen it is closed at once (a notice).",
                ret=("uji.OverlayHandle",),
            ),
            fn("uji.ui.Markdown", "text: string", "A view of `text` drawn as markdown.", ret=("table",)),
            *(
                fn(
                    f"uji.ui.{name}",
                    "props: " + (props or MESSAGE_PROPS),
                    f"The view of {what}: replace it (`uji.ui.{name} = function(props) ... end`, or a "
                    "theme's `views`) to draw them your way; the default draws as uji does. One that "
                    "raises falls back to uji's drawing, logged in the diagnostics.",
                    ret=("table",),
                )
                for name, what, props in REPLACEABLE_VIEWS
            ),
            fn("uji.ui.redraw", "", "Draws the ito views again (a state change does it by itself)."),
            fn(
                "uji.ui.open_win",
                'opts?: {view?: "messages"|"input"|"modal", title?: string, height?: integer, lines?: (string|table)[]}',
                "The older window model: opens a window of lines and gives its id. A `modal` one is an "
                "overlay (Esc closes it); `messages` and `input` ones sit above the composer. A line is "
                "a string or a list of spans `{text, style}`.",
                ret=("integer",),
            ),
            fn("uji.ui.set_lines", "id: integer, lines: (string|table)[]", "Replaces a window's lines."),
            fn("uji.ui.clear", "id: integer", "Empties a window."),
            fn("uji.ui.set_size", "id: integer, height: integer", "Sets a window's height in rows."),
            fn("uji.ui.set_title", "id: integer, title: string", 'Sets a window\'s title ("" for none).'),
            fn("uji.ui.close_win", "id: integer", "Closes a window; whether it was open.", ret=("boolean",)),
            fn("uji.ui.list_wins", "", "The open windows' ids, oldest first.", ret=("integer[]",)),
            fn(
                "uji.ui.toggle_thinking",
                "",
                "Shows or hides the model's reasoning; returns whether it is shown.",
                ret=("boolean",),
            ),
            fn(
                "uji.ui.size",
                "",
                "The screen's width and height, or nothing without a screen.",
                ret=("integer? width", "integer? height"),
            ),
            fn(
                "uji.ui.exec",
                "cmd: string|string[]",
                "Hands the terminal to a program (a string runs in `sh -c`, a list is argv) and waits "
                "for it: its exit code. Without a screen its output goes to stderr.",
                ret=("integer",),
            ),
            fn(
                "uji.ui.open",
                "target: string",
                "Opens a file or URL with open, xdg-open or explorer: true, or nil and why.",
                ret=("boolean?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.action",
        'Named actions that keys bind to (`uji.keymap.add(mode, key, "name")`).',
        [
            fn(
                "uji.action.add",
                "name: string, fn: fun()",
                "Adds the action `name` (raises if it is a built-in one); a key bound to it runs `fn`.",
            ),
            fn(
                "uji.action.remove",
                "name: string",
                "Removes a config's action; true if there was one.",
                ret=("boolean",),
            ),
            fn("uji.action.list", "", "Every action name, built-ins included, sorted.", ret=("string[]",)),
        ],
    ),
    Namespace(
        "uji.config",
        "The config dir and the files in its folders.",
        [
            Value("uji.config.dir", "string", "The config dir (`init.lua` is in it)."),
            fn(
                "uji.config.files",
                "folder: string, opts?: {project?: boolean}",
                "The files directly in `<config>/<folder>`, then each pack's `<folder>`, then with "
                "`project = true` the project's `.uji/<folder>`; raises on an empty, absolute or `..` folder.",
                ret=("uji.ConfigFile[]",),
                waits="uji.ConfigFile[]",
            ),
        ],
    ),
    Namespace(
        "uji.data",
        "A plugin's private files in the data dir.",
        [
            Value("uji.data.dir", "string", "The data dir."),
            fn(
                "uji.data.read",
                "name: string",
                "The text of `<data>/<name>` (a plain file name), or nil when there is none.",
                ret=("string?",),
            ),
            fn(
                "uji.data.write",
                "name: string, text: string",
                "Writes `<data>/<name>` (a plain file name), readable by the user only.",
            ),
        ],
    ),
    Namespace(
        "uji.pack",
        "Plugin repositories: cloned with git into `<data>/site/<name>`, their `lua/` on the "
        "`require` path, each pinned to a commit in `<config>/uji-lock.json`.",
        [
            fn(
                "uji.pack.add",
                "specs: uji.PackSpec[]",
                "Installs the packs that are missing (at their locked commit) and puts them on the path; "
                "a pack that fails is a notice. Returns the roots installed.",
                ret=("string[]",),
            ),
            fn("uji.pack.list", "", "The roots: the config dir first, then each pack.", ret=("string[]",)),
            fn(
                "uji.pack.update",
                "",
                "What `/sync` does: fetches every pack, moves it to its newest commit and rewrites the lock; "
                "one line per pack.",
                ret=("string[]",),
                waits="string[]",
            ),
        ],
    ),
    Namespace(
        "uji.diagnostics",
        "The log of what went wrong (`<data>/diagnostics.log`; `/diagnostics` shows it).",
        [
            fn(
                "uji.diagnostics.list",
                "",
                "The entries, newest first, each once.",
                ret=("uji.Diagnostic[]",),
                waits="uji.Diagnostic[]",
            ),
        ],
    ),
    Namespace(
        "uji.input",
        "The composer's text.",
        [
            fn("uji.input.get", "", "The text being typed.", ret=("string",)),
            fn(
                "uji.input.set",
                "text: string",
                'Replaces the text, cursor at the end ("/x" opens suggestions).',
            ),
            fn("uji.input.append", "text: string", "Adds to the text."),
            fn("uji.input.clear", "", "Empties the text."),
            fn(
                "uji.input.attach",
                "path: string",
                "Puts an image file (png, jpeg, gif, webp) in the draft as `[image #N]`: true, or nil and "
                "why. Relative paths start at the session's directory; waits.",
                ret=("boolean?", "string? err"),
            ),
            fn(
                "uji.input.capture",
                "handler: fun(key: uji.KeyEvent)",
                "Every key goes to `handler` instead of the keymap until `release()`, or until it raises.",
            ),
            fn(
                "uji.input.release",
                "",
                "Keys go back to the keymap; true if a handler had them.",
                ret=("boolean",),
            ),
        ],
    ),
    Namespace(
        "uji.fs",
        "Files, with the same checks as the file tools; relative paths start at the working directory.",
        [
            fn(
                "uji.fs.read",
                "path: string",
                "A file's text.",
                ret=("string?", "string? err"),
                waits="string",
            ),
            fn(
                "uji.fs.lines",
                "path: string, opts?: uji.LinesOptions",
                "Some lines of a text file.",
                ret=("uji.Lines?", "string? err"),
                waits="uji.Lines",
                overloads=("fun(path: string, cb: fun(result: uji.Lines?, err: string?)): uji.Cancel",),
            ),
            fn(
                "uji.fs.write",
                "path: string, content: string",
                "Writes a file, making its directories.",
                ret=("uji.Written?", "string? err"),
                waits="uji.Written",
            ),
            fn(
                "uji.fs.list",
                "path: string",
                "A directory's entries, sorted by name.",
                ret=("uji.DirEntry[]",),
            ),
            fn(
                "uji.fs.glob",
                "pattern: string",
                "The sorted paths matching `* ? [] **`.",
                ret=("string[]",),
            ),
            fn(
                "uji.fs.join",
                "base: string, ...: string",
                "Joins path parts; an absolute part starts over.",
                ret=("string",),
            ),
        ],
    ),
    Namespace(
        "uji.http",
        "HTTP requests.",
        [
            fn(
                "uji.http.request",
                "spec: uji.HttpRequest",
                "Sends a request; gives the response, or nil and the error.",
                ret=("uji.HttpResponse?", "string? err"),
                waits="uji.HttpResponse",
            ),
        ],
    ),
    Namespace(
        "uji.mcp",
        "MCP servers; each tool becomes the uji tool `server__tool` (policy `ask` by default).",
        [
            fn(
                "uji.mcp.add",
                "name: string, spec: uji.McpServerSpec",
                "Adds (or replaces) a server; it connects in the background.",
            ),
            fn(
                "uji.mcp.remove",
                "name: string",
                "Removes a server and its tools; true if it existed.",
                ret=("boolean",),
            ),
            fn("uji.mcp.list", "", "Each server's state.", ret=("uji.McpServerRow[]",)),
            fn(
                "uji.mcp.configure",
                "opts: {project?: boolean, wait?: number}",
                "`project = false`: never read the project's `.mcp.json` (else used once approved); "
                "`wait`: seconds a turn waits for servers still connecting, every server without a `wait` "
                "of its own (10).",
            ),
        ],
    ),
    Namespace(
        "uji.project",
        "The project (the repository's top, else the working directory) and what the user trusts in it.",
        [
            fn("uji.project.root", "", "The project's root directory.", ret=("string",)),
            fn(
                "uji.project.trusted",
                "kind: string, files: string[]",
                "The remembered decision for these files as they are now; nil if never asked or changed.",
                ret=("boolean?",),
            ),
            fn(
                "uji.project.trust",
                "kind: string, spec: uji.TrustSpec",
                "The remembered decision, else asks once (false with a notice when nobody can answer).",
                waits="boolean",
            ),
        ],
    ),
    Namespace(
        "uji.status",
        "The original's older footer segments: added ones draw in the bottom bar, by priority.",
        [
            fn("uji.status.provider", "", "The provider in use.", ret=("string?",)),
            fn("uji.status.model", "", "The model in use.", ret=("string?",)),
            fn("uji.status.effort", "", "The reasoning effort, if any.", ret=("string?",)),
            fn("uji.status.context", "", 'How full the context window is ("12%").', ret=("string?",)),
            fn("uji.status.queue", "", "How many messages wait.", ret=("integer",)),
            fn("uji.status.state", "", "Whether a turn runs.", ret=('"working"|"idle"',)),
            fn("uji.status.elapsed", "", "Seconds since the turn started, or nil.", ret=("number?",)),
            fn("uji.status.loader_frame", "", "The spinner's frame now.", ret=("string",)),
            fn(
                "uji.status.add",
                "name: string, render: fun(): string?, opts?: {priority?: number}",
                "Adds (or replaces) a segment; lower priorities come first (default 50).",
            ),
            fn(
                "uji.status.remove",
                "name: string",
                "Removes a segment; true if there was one.",
                ret=("boolean",),
            ),
            fn("uji.status.list", "", "The segments' names, in order.", ret=("string[]",)),
            fn(
                "uji.status.render",
                "names?: string[]",
                'The segments\' texts (those named) joined by " · ".',
                ret=("string",),
            ),
        ],
    ),
    Namespace(
        "uji.job",
        "Background processes for plugins.",
        [
            fn(
                "uji.job.start",
                "spec: uji.JobSpec",
                "Starts a process with line callbacks; returns its handle.",
                ret=("uji.Job",),
            ),
        ],
    ),
]


# The original's runtime (docs.md §2 "Runtime"): tasks, text, encodings, the system,
# processes, SQLite and sockets.
NAMESPACES += [
    Namespace(
        "uji.task",
        "Cooperative tasks: one runs at a time, until it waits.",
        [
            fn(
                "uji.task.spawn",
                "fn: function, ...: any",
                "Starts `fn(...)` as a task once the current one waits; returns the task (`task:cancel()` "
                "stops it where it waits). Its errors show as notices.",
                ret=("uji.Task",),
            ),
            fn(
                "uji.task.race",
                "...: function",
                "Runs the functions at once and waits for the first to finish: its position, then what it "
                "returned; the others stop. Its error is raised again.",
                ret=("integer", "any ..."),
            ),
            fn(
                "uji.task.timeout",
                "seconds: number, fn: function",
                "Runs `fn` for at most `seconds` (`math.huge`: no limit): `true` and its results, or `false` "
                "when it had to stop.",
                ret=("boolean", "any ..."),
            ),
        ],
    ),
    Namespace(
        "uji.base64",
        "Base64 of any bytes.",
        [
            fn(
                "uji.base64.encode",
                "data: string, opts?: {url?: boolean, pad?: boolean}",
                "The bytes as base64 (`url`: the URL-safe alphabet; `pad = false`: no `=`).",
                ret=("string",),
            ),
            fn(
                "uji.base64.decode",
                "text: string, opts?: {url?: boolean}",
                "The bytes, or nil and why.",
                ret=("string?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.toml",
        "TOML in and out.",
        [
            fn(
                "uji.toml.encode",
                "value: table",
                "The table as TOML text; raises on what TOML cannot hold.",
                ret=("string",),
            ),
            fn(
                "uji.toml.decode",
                "text: string",
                "The table of TOML text (dates as text); raises on invalid TOML.",
                ret=("table",),
            ),
        ],
    ),
    Namespace(
        "uji.os",
        "The machine and the run. `uji.os.carry` is what the start before this one carried "
        "(`uji.os.restart{carry = ...}`), nil when nothing was.",
        [
            Value("uji.os.platform", '"macos"|"linux"|"windows"|"other"', "The system."),
            Value("uji.os.executable", "string?", "The program running uji."),
            Value("uji.os.argv", "string[]", "The arguments uji started with, the program first."),
            Value(
                "uji.os.roots",
                "string[]",
                "The config dir, the roots a restart handed over, then each pack: where `lua/` is searched.",
            ),
            Value("uji.os.library", '"so"|"dylib"', "A native module's file extension here."),
            fn(
                "uji.os.env",
                "name: string",
                "An environment variable; nil when unset or empty.",
                ret=("string?",),
            ),
            fn("uji.os.cwd", "", "The directory uji started in.", ret=("string",)),
            fn("uji.os.home", "", "The home directory, or nil.", ret=("string?",)),
            fn("uji.os.now", "", "Milliseconds since the Unix epoch.", ret=("integer",)),
            fn("uji.os.clock", "", "Seconds since uji started.", ret=("number",)),
            fn("uji.os.expand", "path: string", "`~` and `$VARS` expanded.", ret=("string",)),
            fn(
                "uji.os.restart",
                "opts?: {args?: string[], roots?: string[], carry?: any}",
                "Starts uji again once the code that asked returns (from the config: once it has loaded): "
                "in this process, the screen keeping its session and draft, or with `args` as the process "
                "`uji ARGS`. `carry` (what uji.json.encode takes) is the next start's `uji.os.carry` (nil "
                "when nothing was carried); each of `roots` has its `lua/` and `native/` searched before "
                "uji's own Lua there. At most 8 restarts in a row.",
            ),
            fn(
                "uji.os.exit",
                "code?: integer",
                "Ends uji as uji.quit does, with exit status `code` (0 to 255; default 0).",
            ),
        ],
    ),
    Namespace(
        "uji.keychain",
        "Secrets in the system keychain (`security` on macOS, `secret-tool` elsewhere).",
        [
            fn(
                "uji.keychain.get",
                "service: string, account: string",
                "The secret, or nil when there is none; waits.",
                ret=("string?", "string? err"),
            ),
            fn(
                "uji.keychain.set",
                "service: string, account: string, secret: string",
                "Saves the secret: true, or nil and why; waits.",
                ret=("boolean?", "string? err"),
            ),
            fn(
                "uji.keychain.delete",
                "service: string, account: string",
                "Removes the secret: true, or nil and why; waits.",
                ret=("boolean?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.clipboard",
        "The system clipboard (wl-clipboard, xclip or pbcopy/pbpaste).",
        [
            fn("uji.clipboard.get", "", "Its text, or nil and why; waits.", ret=("string?", "string? err")),
            fn(
                "uji.clipboard.set",
                "text: string",
                "Puts text on it: true, or nil and why; waits.",
                ret=("boolean?", "string? err"),
            ),
            fn(
                "uji.clipboard.image",
                "edge: integer, bytes: integer",
                "Its image fitted as `uji.image.fit` does, or nil and why; waits.",
                ret=("uji.Image?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.tty",
        "The terminal itself, for a program of its own drawn in Lua; uji's screen steps aside "
        "until `screen:close()`. Cells are 0-based. The screen: `width`, `height`, `:text(x, y, "
        "text, style?)`, `:spans(x, y, spans)`, `:line(y, text_or_spans)`, `:fill(x, y, w, h, char?, "
        "style?)`, `:paint(view)` (an ito view over the screen), `:clicked(x, y)`, `:key(event)`, "
        "`:wheel(x, y, delta)` (the scroll view under the cell), `:select(x0, y0, x1, y1, style?)` / "
        "`:select(nil)`, `:selection()`, `:copy(text)` (OSC 52), `:cursor(shape, x?, "
        "y?)`, `:write(raw)`, `:flush()`, `:suspend()`, `:resume()`, `:close()`. The input: "
        "`:read(timeout?)` and `:events()`, giving `{type = key|mouse|paste|resize|focus, ...}`.",
        [
            fn(
                "uji.tty.open",
                "",
                "Takes the terminal (raw, on the alternate screen, mouse and paste on): its screen and "
                "input. Raises when there is no terminal. `ito.open()` is the same.",
                ret=("table screen", "table input"),
            ),
        ],
    ),
    Namespace(
        "uji.image",
        "Images.",
        [
            fn(
                "uji.image.fit",
                "data: string, edge: integer, bytes: integer",
                "Checks the format, applies EXIF orientation, scales the long edge to `edge`, then JPEG and "
                "halving until it fits `bytes`; an image that fits keeps its bytes. Or nil and why.",
                ret=("uji.Image?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.proc",
        "Processes read line by line.",
        [
            fn(
                "uji.proc.spawn",
                'argv: string[], opts?: {cwd?: string, env?: table<string, string>, stdio?: "pipe"|"inherit"}',
                "Starts a program in its own process group without a terminal: the process, or nil and why; "
                "waits for the start. A process whose handle nothing references any more is killed when Lua "
                "collects the handle.",
                ret=("uji.Proc?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.db",
        "SQLite databases.",
        [
            Value("uji.db.null", "uji.json.Null", "SQL NULL in rows and parameters (the JSON null)."),
            fn(
                "uji.db.open",
                "path: string",
                "Opens (creates) a database: it, or nil and why.",
                ret=("uji.Db?", "string? err"),
            ),
        ],
    ),
    Namespace(
        "uji.net",
        "HTTP and sockets.",
        [
            fn(
                "uji.net.request",
                "spec: uji.HttpRequest",
                "uji.http.request.",
                ret=("uji.HttpResponse?", "string? err"),
                waits="uji.HttpResponse",
            ),
            fn(
                "uji.net.open",
                "spec: uji.HttpRequest",
                "Sends a request and gives the response once its head arrives, to read its body line by line "
                "(`:line()` nil at the end, false after `idle` seconds without one; `:lines()`, `:read()`); "
                "or nil and why. Waits.",
                ret=("uji.NetResponse?", "string? err"),
            ),
            fn(
                "uji.net.listen",
                "port: integer",
                "A TCP server on 127.0.0.1 (port 0: a free one) with `.port`, `:accept()` and `:close()`; "
                "connections have `:line()`, `:lines()`, `:read(n)`, `:write(data)`, `:close()`. Waits.",
                ret=("uji.NetServer?", "string? err"),
            ),
        ],
    ),
]

_TOP = NAMESPACES[0].members
_TOP += [
    fn(
        "uji.sleep",
        "seconds: number",
        "Pauses the task (`0`: lets the others run; `math.huge`: until cancelled).",
    ),
    fn(
        "uji.promise",
        "",
        "A promise: `:resolve(...)` (true the first time), `:await()`, `.settled`.",
        ret=("uji.Promise",),
    ),
    fn(
        "uji.regex",
        "pattern: string",
        "A matcher (`:test(text)`, `:find(text)` → start, end), or nil and why.",
        ret=("uji.Matcher?", "string? err"),
    ),
    fn(
        "uji.glob",
        "pattern: string, opts?: {separator?: boolean}",
        "A matcher for the whole text (`separator`: `*` does not match `/`), or nil and why.",
        ret=("uji.Matcher?", "string? err"),
    ),
    fn(
        "uji.fuzzy",
        "query: string, items: string[]",
        "Positions of the matching items, best first (all, for an empty query).",
        ret=("integer[]",),
    ),
    fn(
        "uji.markdown",
        "source: string",
        "Markdown as events `{kind, details..., start, end}`: start, end, text, code, html, math, break, rule, task.",
        ret=("table[]",),
    ),
    fn("uji.width", "text: string", "The terminal columns `text` takes.", ret=("integer",)),
    fn("uji.lossy", "data: string", "`data` as valid UTF-8 (U+FFFD for each bad sequence).", ret=("string",)),
    fn("uji.sha256", "data: string", "The SHA-256 of `data`: 32 raw bytes.", ret=("string",)),
    fn("uji.random", "n: integer", "`n` random bytes from the system's secure source.", ret=("string",)),
    fn(
        "uji.diff",
        "old: string, new: string, path?: string",
        "`{path, changes}`: hunks of lines `{kind, old?, new?, parts}` (3 lines of context).",
        ret=("uji.Diff",),
    ),
    fn(
        "uji.class",
        "parent?: table",
        "A class: calling it makes an object and runs `init`; methods are inherited.",
        ret=("table",),
    ),
    fn("uji.message", "err: any", "The text of a caught error, without its stack trace.", ret=("string",)),
    fn(
        "uji.modules",
        "namespace: string",
        "The modules directly inside `namespace` on the require path, sorted.",
        ret=("string[]",),
    ),
    Value(
        "uji.sys",
        "table<string, any>",
        'The runtime modules: `uji.sys.<name>` is `require("uji.sys.<name>")`. The runtime helpers '
        "(uji.task, uji.os, uji.regex, ...) are these modules, and a name `uji` lacks falls back to one: "
        "`lua/uji/sys/<name>.lua` or `native/uji/sys/<name>.so` in the config dir or a pack loaded from "
        "boot answers `uji.<name>`.",
    ),
]

SHAPES += [
    Shape(
        "uji.Task",
        "A task from `uji.task.spawn`.",
        fields(("cancel", "fun(self)", "stops it where it waits")),
    ),
    Shape(
        "uji.Promise",
        "What `uji.promise()` gives.",
        fields(
            ("resolve", "fun(self, ...: any): boolean", "settles it; true the first time"),
            ("await", "fun(self): any", "waits until it is settled; its values"),
            ("settled", "boolean"),
        ),
    ),
    Shape(
        "uji.Matcher",
        "A compiled regex or glob.",
        fields(
            ("test", "fun(self, text: string): boolean"),
            ("find", "fun(self, text: string): integer?, integer?", "byte positions of the first match"),
        ),
    ),
    Shape(
        "uji.Image",
        "An image as messages hold it.",
        fields(
            ("data", "string", "base64"),
            ("media_type", "string"),
            ("width", "integer"),
            ("height", "integer"),
        ),
    ),
    Shape(
        "uji.Diff",
        "What `uji.diff` gives.",
        fields(
            ("path?", "string"),
            ("changes", "table[][]", "hunks of `{kind, old?, new?, parts = {{text, changed}}}`"),
        ),
    ),
    Shape(
        "uji.Proc",
        "A process from `uji.proc.spawn`.",
        fields(
            ("pid", "integer"),
            ("line", "fun(self): string?, string?", "the next line and its stream, nil once both ended"),
            ("lines", "fun(self): fun(): string?, string?"),
            ("write", "fun(self, data: string): boolean?, string?"),
            ("close", "fun(self)", "closes its input"),
            ("kill", "fun(self)", "kills it and what it started"),
            ("wait", "fun(self): {code: integer, signal: string?, success: boolean}"),
        ),
    ),
    Shape(
        "uji.Db",
        "A database from `uji.db.open`.",
        fields(
            ("exec", "fun(self, sql: string, params?: table): integer", "rows changed"),
            ("query", "fun(self, sql: string, params?: table): table[]"),
            (
                "transaction",
                "fun(self, fn: fun(db: uji.Db): any): any",
                "committed, or rolled back when fn raises",
            ),
            ("close", "fun(self)"),
        ),
    ),
    Shape(
        "uji.NetResponse",
        "A streamed response from `uji.net.open`.",
        fields(
            ("status", "integer"),
            ("headers", "table<string, string>"),
            ("line", "fun(self): string|false|nil"),
            ("lines", "fun(self): fun(): string?"),
            ("read", "fun(self): string"),
            ("close", "fun(self)"),
        ),
    ),
    Shape(
        "uji.NetServer",
        "A server from `uji.net.listen`.",
        fields(("port", "integer"), ("accept", "fun(self): table"), ("close", "fun(self)")),
    ),
]


def functions() -> list[Function]:
    return [m for ns in NAMESPACES for m in ns.members if isinstance(m, Function)]


def values() -> list[Value]:
    return [m for ns in NAMESPACES for m in ns.members if isinstance(m, Value)]
