"""The command line. Only argument parsing lives here, and imports stay lazy so that
`uji --version` and `uji --help` load neither Lua nor any HTTP library."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs --version ~10 ms
if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace
    from typing import Any, NoReturn

    from uji.paths import Paths

HELP = """usage: uji [--config-dir DIR] [--data-dir DIR] [--db FILE] [COMMAND]

A coding agent for the terminal that you shape with Lua (~/.config/uji/init.lua).

commands:
  new                 open the terminal UI on a new session (the default)
  "PROMPT"            open the terminal UI on a new session and send PROMPT at once
  -p "PROMPT"         the same as `uji run "PROMPT"` (-p, --print)
  -c, --continue      reopen the latest session of this directory (as `uji resume`)
  --worktree [NAME]   run the session in its own git worktree and branch (new, run, resume):
                      <repo>/.uji/worktrees/NAME on branch uji/NAME, made if not there
  run PROMPT...       run one prompt headless and print the answer (PROMPT - or none: stdin)
  resume [--id ID]    reopen the latest conversation of this directory, or session ID
  list [--json] [--runs]
                      list the conversations of this directory (--runs: its one-shot `uji run`s)
  export [--id ID] [--format md|json|html|atif] [-o FILE]
                      write the latest session of this directory (or ID) to stdout or FILE
  acp                 serve the Agent Client Protocol on stdio (for editors: Zed, JetBrains, ...)
  delete ID           delete a session and its child sessions
  lua-types           print the directory of the LuaLS definitions of `uji.*` (docs/lua-api.md)
  mcp login NAME      sign in to MCP server NAME (OAuth, in the browser) and keep its token
  mcp logout NAME     forget the token kept for MCP server NAME

options (anywhere on the line, also as --opt=VALUE):
  -h, --help          show this help
  -V, --version       show the version
  --config-dir DIR    config directory (default: $UJI_CONFIG_DIR, $XDG_CONFIG_HOME/uji, ~/.config/uji)
  --data-dir DIR      data directory (default: $UJI_DATA_DIR, $XDG_DATA_HOME/uji, ~/.local/share/uji)
  --db FILE           session database (default: $UJI_DB, <data-dir>/uji.db)

examples:
  uji                                        # the terminal UI
  uji run "what does this repo do?"          # one prompt, the answer on stdout
  uji run -m ollama/qwen3 "fix the failing test"
  git diff | uji run "review this diff"      # stdin is added after the prompt
  uji run --json "list the TODOs" | jq .     # JSON events, one per line
  uji resume                                 # back to this directory's latest session

`uji run --help` lists the options of a headless run.
"""

RUN_EXAMPLES = """examples:
  uji run "what does this repo do?"
  uji run -m openai/gpt-5-mini --effort low "summarise README.md"
  git diff | uji run "review this diff"      # the prompt, a blank line, then stdin
  uji run - < task.md                        # the prompt is stdin
  uji run --json --tools read_file,run_command "where is main defined?"
  uji run --on-ask deny "clean up the build"  # calls that would ask are refused
  uji run --image shot.png "why is this button cut off?"
  uji run --json --input-format stream-json < messages.jsonl   # a turn per line, one session

With no PROMPT (stdin not a terminal) or PROMPT `-`, stdin is the prompt. With a PROMPT
and stdin a pipe or file, stdin is appended to it. With --input-format stream-json, each
stdin line is a user message ({"type":"user","message":{"role":"user","content":...}},
content a string or text and image parts) run as its own turn of one session. Nobody is
there to answer a call that would ask: it runs when it runs inside the sandbox (a
command, under the kernel's sandbox; a file tool, confined to the working directory), and
is refused otherwise; --on-ask allow allows every such call, --on-ask deny refuses them all.

--max-steps and --max-cost override uji.session.configure. At a budget the run stops with
exit code 3 and says which budget on stderr.

exit codes: 0 answered, 1 the turn failed, 2 bad usage, 3 a budget stopped the turn,
130 interrupted, 141 stdout's reader went away
"""

INPUT_FORMATS = ("text", "stream-json")
EFFORTS = (
    "off",
    "minimal",
    "low",
    "medium",
    "high",
    "xhigh",
    "max",
)  # uji.wires.base.EFFORTS (a test keeps them equal)
SANDBOX_MODES = ("workspace-write", "read-only", "off")  # uji.sandbox.policy.MODES (a test keeps them equal)
GLOBAL_OPTIONS = ("--config-dir", "--data-dir", "--db")
GC_YOUNG = 20_000  # see main()


def _positive_number(kind: Any, text: str) -> Any:
    """`text` as a finite number of `kind` (int or float) above 0, or None."""
    try:
        value = kind(text)
    except ValueError:
        return None
    return value if value > 0 and value != float("inf") else None


def _positive(kind: Any) -> Any:
    """An argparse type: a number of `kind` above 0."""

    def parse(text: str) -> Any:
        import argparse

        value = _positive_number(kind, text)
        if value is None:
            what = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expects {what} > 0, got {text!r}")
        return value

    return parse


def _parser() -> Any:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            if message.startswith("argument command: invalid choice: "):
                word = message.split(": ")[2].split(" (")[0]
                message = f"unknown command {word}; to send it as a prompt: uji run {word}"
            self.print_usage(sys.stderr)
            print(f"uji: error: {message}", file=sys.stderr)
            raise SystemExit(2)

    # The global options are accepted after the subcommand too: each subparser knows them,
    # with defaults suppressed so that one given before the subcommand is not reset.
    shared = Parser(add_help=False)
    for flag in GLOBAL_OPTIONS:
        shared.add_argument(flag, default=argparse.SUPPRESS, metavar="DIR" if "dir" in flag else "FILE")

    p = Parser(prog="uji", add_help=False, allow_abbrev=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-V", "--version", action="store_true")
    for flag in GLOBAL_OPTIONS:
        p.add_argument(flag)

    def command(name: str, text: str, **kw: Any) -> Any:
        return sub.add_parser(name, help=text, description=text, parents=[shared], allow_abbrev=False, **kw)

    sub = p.add_subparsers(dest="command", parser_class=Parser)
    command("new", "open the terminal UI on a new session")
    run = command(
        "run",
        "run one prompt headless and print the answer",
        epilog=RUN_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "prompt", nargs="*", help="the prompt (its words are joined with spaces; `-` or none: stdin)"
    )
    run.add_argument("--json", action="store_true", help="print JSON events, one per line")
    run.add_argument(
        "--input-format",
        choices=INPUT_FORMATS,
        default="text",
        help="stream-json: user messages on stdin, one JSON object a line, a turn each (Claude Code's format)",
    )
    run.add_argument("-m", "--model", help="PROVIDER/MODEL for this run")
    run.add_argument("--effort", choices=EFFORTS, help="reasoning effort for this run")
    run.add_argument("--tools", help="offer only these tools (comma-separated)")
    run.add_argument("--append-prompt", help="text added to the system prompt")
    run.add_argument("--title", help="the session title (default: the prompt's first line)")
    run.add_argument("--parent", help="save the run as a child of this session")
    run.add_argument("--session", help="continue this session instead of starting one")
    run.add_argument(
        "--max-steps",
        type=_positive(int),
        metavar="N",
        help="model calls the turn may make (default 100, or uji.session.configure{max_steps})",
    )
    run.add_argument(
        "--max-cost",
        type=_positive(float),
        metavar="DOLLARS",
        help="dollars the turn may spend (counted for models with prices)",
    )
    run.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="PATH",
        help="attach a png, jpeg, gif or webp image to the prompt (repeatable)",
    )
    run.add_argument(
        "--on-ask",
        choices=("allow", "deny", "sandbox"),
        default=None,
        help="what a call that would ask becomes with nobody to answer (default: allowed "
        "only where it runs inside the sandbox)",
    )
    run.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        help="the OS sandbox of the model's commands for this run (as uji.sandbox.configure{mode})",
    )
    run.add_argument(
        "--trust-project",
        action="store_true",
        help="approve (and remember) what this project brings: its .mcp.json servers, its skills",
    )
    run.add_argument(  # taken out of the line before parsing (_take_worktree): here for --help
        "--worktree",
        nargs="?",
        metavar="NAME",
        help="work in a git worktree and branch of its own: <repo>/.uji/worktrees/NAME on branch "
        "uji/NAME (made if not there, kept at the end; --json's session line says where)",
    )
    run.add_argument("--mode", help="start in this mode (as uji.mode.set), such as plan")
    run.add_argument(
        "--confine",
        choices=("on", "off"),
        help="limit the file tools to the working directory and the roots, or not (as uji.tool.confine)",
    )
    run.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        help="a directory the file tools may reach besides the working directory (repeatable; "
        "replaces the config's uji.tool.roots)",
    )
    resume = command("resume", "reopen a session")
    resume.add_argument("--id")
    listing = command("list", "list the conversations of this directory")
    listing.add_argument("--json", action="store_true", help="one JSON object per session and line")
    listing.add_argument(
        "--runs", action="store_true", help="the one-shot `uji run`s instead of the conversations"
    )
    delete = command("delete", "delete a session")
    delete.add_argument("id")
    export = command("export", "write a session as Markdown, JSON lines, HTML or an ATIF trajectory")
    export.add_argument("--id", help="the session (default: the latest of this directory)")
    export.add_argument("--format", choices=("md", "json", "html", "atif"), default="md")
    export.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    command("acp", "serve the Agent Client Protocol on stdin/stdout, for editors")
    mcp = command("mcp", "an HTTP MCP server's authorization (OAuth)")
    mcp_actions = mcp.add_subparsers(
        dest="mcp_command", required=True, metavar="login|logout", parser_class=Parser
    )
    for action, text in (
        ("login", "sign in to the server (in the browser) and keep its token in <data>/mcp-auth.json"),
        ("logout", "forget the token kept for the server"),
    ):
        mcp_actions.add_parser(action, help=text, description=text, parents=[shared]).add_argument(
            "name", help="the server's name (uji.mcp.add)"
        )
    command("lua-types", "print the directory of the LuaLS definitions of uji.* (for .luarc.json)")
    sandbox = command(
        "sandbox",
        "run one command in the current directory under the sandbox uji gives the model's commands",
        usage="uji sandbox [--network | --no-network] [--read-only] -- CMD [ARG...]",
    )
    sandbox.add_argument("--network", action=argparse.BooleanOptionalAction, default=None)
    sandbox.add_argument("--read-only", action="store_true")
    sandbox.add_argument("argv", nargs=argparse.REMAINDER)
    return p


# `uji run`'s options for the quick parse: option -> (attribute, kind). A kind is "flag",
# "value", "append", int or float (a number above 0), or the tuple of the values it takes. Kept equal to
# `_parser`'s by a test that parses the same command lines both ways.
RUN_OPTIONS: dict[str, tuple[str, Any]] = {
    "--json": ("json", "flag"),
    "--trust-project": ("trust_project", "flag"),
    "-m": ("model", "value"),
    "--model": ("model", "value"),
    "--effort": ("effort", EFFORTS),
    "--input-format": ("input_format", INPUT_FORMATS),
    "--tools": ("tools", "value"),
    "--append-prompt": ("append_prompt", "value"),
    "--title": ("title", "value"),
    "--parent": ("parent", "value"),
    "--session": ("session", "value"),
    "--max-steps": ("max_steps", int),
    "--max-cost": ("max_cost", float),
    "--image": ("image", "append"),
    "--on-ask": ("on_ask", ("allow", "deny", "sandbox")),
    "--sandbox": ("sandbox", SANDBOX_MODES),
    "--mode": ("mode", "value"),
    "--confine": ("confine", ("on", "off")),
    "--root": ("root", "append"),
    **{flag: (flag[2:].replace("-", "_"), "value") for flag in GLOBAL_OPTIONS},
}
RUN_DEFAULTS: dict[str, Any] = {
    **{flag[2:].replace("-", "_"): None for flag in GLOBAL_OPTIONS},
    "help": False,
    "version": False,
    "command": "run",
    "prompt": [],
    "json": False,
    "model": None,
    "effort": None,
    "input_format": "text",
    "tools": None,
    "append_prompt": None,
    "title": None,
    "parent": None,
    "session": None,
    "max_steps": None,
    "max_cost": None,
    "image": [],
    "on_ask": None,
    "sandbox": None,
    "trust_project": False,
    "mode": None,
    "confine": None,
    "root": None,
    "worktree": None,  # taken out of the line before parsing (_take_worktree)
}


def _quick_run(args: list[str]) -> SimpleNamespace | None:
    """`uji run` parsed without argparse (building its parser costs a headless turn ~5 ms),
    or None for anything but a plain, valid `uji run` line: argparse then parses it,
    with its help and its errors."""
    values = dict(RUN_DEFAULTS, prompt=[], image=[])
    i, n, command = 0, len(args), False
    while i < n:
        word = args[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if command:
                values["prompt"].append(word)
            elif word == "run":
                command = True
            else:
                return None
            continue
        name, eq, value = word.partition("=")
        spec = RUN_OPTIONS.get(name)
        if spec is None or (not command and name not in GLOBAL_OPTIONS) or (eq and name == "-m"):
            return None
        dest, kind = spec
        if kind == "flag":
            if eq:
                return None
            values[dest] = True
            continue
        if not eq:
            if i >= n or args[i].startswith("-"):
                return None
            value = args[i]
            i += 1
        if kind == "append":
            values[dest] = [*(values[dest] or []), value]
            continue
        taken = _quick_value(kind, value)
        if taken is None:
            return None
        values[dest] = taken
    if not command:
        return None
    from types import SimpleNamespace  # a small module the run imports anyway (asyncio, enum)

    return SimpleNamespace(**values)


def _quick_value(kind: Any, value: str) -> Any:
    """An option's value as `uji run` takes it (a number > 0, one of a choice, text), or
    None when argparse should say what is wrong with it."""
    if kind is int or kind is float:
        return _positive_number(kind, value)
    if isinstance(kind, tuple) and value not in kind:
        return None
    return value


COMMANDS = ("new", "run", "resume", "list", "delete", "export", "acp", "lua-types", "mcp")


def _habits(args: list[str]) -> tuple[list[str], str | None]:
    """The peers' habits, as the command line they stand for, and the prompt to send at
    once: `uji "PROMPT"` (the screen, PROMPT sent), `uji -p PROMPT` (`uji run PROMPT`),
    `uji -c [PROMPT]` (`uji resume`, PROMPT sent). Global options may come first."""
    i = 0
    while i < len(args) and args[i].partition("=")[0] in GLOBAL_OPTIONS:
        i += 1 if "=" in args[i] else 2
    if i >= len(args):
        return args, None
    head, word, rest = args[:i], args[i], args[i + 1 :]
    if word in ("-p", "--print"):
        return [*head, "run", *rest], None
    words_only = all(not w.startswith("-") for w in rest)
    if word in ("-c", "--continue") and words_only:
        return [*head, "resume"], " ".join(rest) or None
    if not word.startswith("-") and word not in COMMANDS and words_only:
        return [*head, "new"], " ".join([word, *rest])
    return args, None


def _parse(args: list[str]) -> Any:
    quick = _quick_run(args)
    return quick if quick is not None else _parse_full(args)


def _parse_full(args: list[str]) -> Any:
    """Parse, then name the first word nobody took: an unknown option, or a stray argument
    (for `uji run` the prompt's words may sit between options, and are joined in order)."""
    p = _parser()
    opts, extras = p.parse_known_args(args)
    if opts.command == "run":
        words = [w for w in extras if not (w.startswith("-") and w != "-")]
        opts.prompt = [*opts.prompt, *words]
        extras = [w for w in extras if w not in words]
    if extras:
        where = f"uji {opts.command}" if opts.command else "uji"
        word = extras[0]
        kind = "unknown option" if word.startswith("-") else "unexpected argument"
        print(f"uji: error: {kind} {word!r} for `{where}` (see `{where} --help`)", file=sys.stderr)
        raise SystemExit(2)
    return opts


def tune_gc() -> None:
    """The cycle collector's young generation collected every GC_YOUNG container objects
    allocated, not 700: a streamed answer's frames made it 30 % of the screen's CPU per
    token, and the start-up's imports paid it too. Objects that die young are freed by
    their reference counts before any collection sees them."""
    import gc

    gc.set_threshold(GC_YOUNG)
    # Until the config is loaded, nothing is collected: what the start-up makes (modules,
    # classes, the Lua runtime, the config's tables) lives as long as the process, and the
    # collections during imports walked it for nothing. App.load_config then freezes it
    # (later collections skip it) and turns the collector back on.
    gc.disable()


class Worktree:
    """`--worktree [NAME]` as given: `name` None for a generated one."""

    def __init__(self, name: str | None) -> None:
        self.name = name


def _take_worktree(args: list[str]) -> tuple[list[str], Worktree | None]:
    """`--worktree`, `--worktree NAME` or `--worktree=NAME` taken out of the line (before
    `--`). The word after a bare `--worktree` is its NAME only if it looks like one (a
    prompt such as "add a test" does not): `--worktree=` is a generated name for sure."""
    from uji.worktree import valid_name

    out: list[str] = []
    wanted: Worktree | None = None
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            out += args[i - 1 :]
            break
        name, eq, value = word.partition("=")
        if name != "--worktree":
            out.append(word)
            continue
        if eq:
            wanted = Worktree(value or None)
        elif i < len(args) and valid_name(args[i]) and args[i] not in COMMANDS:
            wanted = Worktree(args[i])
            i += 1
        else:
            wanted = Worktree(None)
    return out, wanted


def _enter_worktree(paths: Any, command: str, wanted: Worktree | None, session: str | None) -> str | None:
    """Go into the session's worktree: the one `--worktree` names (made for new and run,
    which must exist for resume), or the one a resumed session ran in. A problem, if any."""
    import os

    from uji import worktree

    if wanted is not None and command not in ("new", "run", "resume"):
        return f"--worktree goes with uji, uji run or uji resume, not uji {command}"
    directory = None
    if wanted is not None:
        try:
            _, directory = worktree.enter(os.getcwd(), wanted.name, create=command != "resume")
        except worktree.WorktreeError as e:
            return f"--worktree: {e}"
    elif session is not None and command in ("run", "resume"):
        from uji.store.sessions import Store, StoreError

        try:
            with Store(paths.db) as store:
                row = store.get_session(session)
        except StoreError:
            return None  # told where the session is opened
        where = row["directory"] if row else None
        if where and os.path.isdir(where) and worktree.find(where) is not None:
            directory = where
    if directory is not None and os.path.realpath(directory) != os.path.realpath(os.getcwd()):
        os.chdir(directory)
        os.environ["PWD"] = directory  # the shells of the model's commands start there too
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    # Fast paths: no argparse, no Lua, no HTTP.
    if args in (["--version"], ["-V"]):
        from uji import __version__

        print(f"uji {__version__}")
        if argv is None:
            fast_exit(0)
        return 0
    if args in (["--help"], ["-h"]):
        sys.stdout.write(HELP)
        return 0
    tune_gc()
    args, wanted = _take_worktree(args) if "--worktree" in "".join(args) else (args, None)
    args, prompt = _habits(args)
    opts = _parse(args)
    if opts.version:
        from uji import __version__

        print(f"uji {__version__}")
        return 0
    if opts.help and opts.command is None:
        sys.stdout.write(HELP)
        return 0
    if opts.command == "lua-types":
        import os

        print(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lua", "meta"))
        return 0
    from uji.paths import resolve

    paths = resolve(opts.config_dir, opts.data_dir, opts.db)
    command = opts.command or "new"
    problem = _runtime_problem()
    if problem:
        print(f"uji: error: {problem}", file=sys.stderr)
        return 1
    session = getattr(opts, "session", None) if command == "run" else getattr(opts, "id", None)
    if wanted is not None or (session and command in ("run", "resume")):
        problem = _enter_worktree(paths, command, wanted, session)
        if problem:
            print(f"uji: error: {problem}", file=sys.stderr)
            return 2
    if command == "run":
        from uji.aio import import_asyncio

        import_asyncio()  # without ssl until a TLS connection needs it
        import asyncio

        from uji.headless import run

        try:
            code = asyncio.run(run(paths, opts))
        except KeyboardInterrupt:  # Ctrl+C while reading the prompt from stdin
            code = 130
        if argv is None:  # the real command line; a caller in this process keeps its interpreter
            fast_exit(code)
        return code
    return _other_command(paths, command, opts, prompt)


def _runtime_problem() -> str | None:
    """Why UJI_RUNTIME (a Lua tree of the user's instead of uji's own) cannot be used."""
    import os

    if not os.environ.get("UJI_RUNTIME"):
        return None
    from uji.lua.runtime import runtime_dir, runtime_problem

    return runtime_problem(runtime_dir())


def _other_command(paths: Paths, command: str, opts: argparse.Namespace, prompt: str | None) -> int:
    """Every command but `uji run`: each imports what it needs when it runs."""
    if command == "export":
        from uji.export.command import export_command

        return export_command(paths, opts.id, opts.format, opts.output)
    if command == "acp":
        import asyncio

        from uji.acp.server import serve

        return asyncio.run(serve(paths))
    if command == "mcp":
        from uji.mcp_cli import login_command, logout_command

        if opts.mcp_command == "logout":
            return logout_command(paths, opts.name)
        import asyncio

        return asyncio.run(login_command(paths, opts.name))
    if command == "sandbox":
        import asyncio

        from uji.sandbox_cli import run_sandboxed

        return asyncio.run(run_sandboxed(paths, opts.argv, network=opts.network, read_only=opts.read_only))
    if command in ("list", "delete"):
        from uji.sessions_cli import delete, listing

        return (
            listing(paths, as_json=opts.json, runs=opts.runs) if command == "list" else delete(paths, opts.id)
        )
    if command in ("new", "resume"):
        painted = None
        if command == "new":  # the first frame a new session had last time, before Textual loads
            from uji.early_frame import paint

            painted = paint(paths.data)
        try:
            from uji.aio import import_asyncio

            import_asyncio()  # before Textual's: without ssl until a TLS connection needs it
            from uji.tui import main as screen

            if command == "resume":
                return screen(paths, resume=opts.id, latest=opts.id is None, prompt=prompt)
            return screen(paths, prompt=prompt, early=painted)
        finally:
            if painted is not None:  # the screen never started: the terminal as it was
                painted.restore(screen_started=False)
    print(f"uji: error: `uji {command}` is not available yet; use `uji run PROMPT`", file=sys.stderr)
    return 2


def fast_exit(code: int) -> None:
    """Leave now that the work is done, skipping interpreter teardown (~30 ms of freeing
    modules). By now the database is closed (its WAL checkpointed on close), child processes
    are handled and the event loop is shut down. What remains is done here: the cleanups
    others registered with `atexit` (run_command's spill folder, logging), stdout and stderr
    flushed, and with Lua loaded C's stdio buffers (its io.write, files it never closed).
    Skipped: Lua `__gc` finalizers of objects still reachable at exit. Returns instead,
    leaving the normal exit to do its work, while any non-daemon thread is still running."""
    import atexit
    import os

    threading = sys.modules.get("threading")  # not imported: no other thread was started
    if threading is not None:
        main = threading.main_thread()
        if any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate()):
            return
    runtime = sys.modules.get("uji.lua.runtime")  # Lua ran: C's stdio may hold its output
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said
            code = code or 1
    if runtime is not None:
        try:
            runtime.flush_c_stdio()
        except (ImportError, OSError, AttributeError):
            return  # the normal exit flushes them
    os._exit(code)
