"""The command line. Only argument parsing lives here, and imports stay lazy so that
`uji --version` and `uji --help` load neither Lua nor any HTTP library."""

from __future__ import annotations

import sys

HELP = """usage: uji [--config-dir DIR] [--data-dir DIR] [--db FILE] [COMMAND]

A coding agent for the terminal that you shape with Lua (~/.config/uji/init.lua).

commands:
  new                 open the terminal UI on a new session (the default)
  run PROMPT...       run one prompt headless and print the answer
  resume [--id ID]    reopen the latest session of this directory, or session ID
  list                list the sessions of this directory
  delete ID           delete a session and its child sessions

options:
  -h, --help          show this help
  -V, --version       show the version
  --config-dir DIR    config directory (default: $UJI_CONFIG_DIR, $XDG_CONFIG_HOME/uji, ~/.config/uji)
  --data-dir DIR      data directory (default: $UJI_DATA_DIR, $XDG_DATA_HOME/uji, ~/.local/share/uji)
  --db FILE           session database (default: $UJI_DB, <data-dir>/uji.db)

`uji run --help` lists the options of a headless run.
"""

EFFORTS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def _parser() -> object:
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # type: ignore[override]
            self.print_usage(sys.stderr)
            print(f"uji: error: {message}", file=sys.stderr)
            raise SystemExit(2)

    p = Parser(prog="uji", add_help=False)
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("-V", "--version", action="store_true")
    for flag in ("--config-dir", "--data-dir", "--db"):
        p.add_argument(flag)
    sub = p.add_subparsers(dest="command", parser_class=Parser)
    sub.add_parser("new", help="open the terminal UI on a new session")
    run = sub.add_parser("run", help="run one prompt headless")
    run.add_argument("prompt", nargs="+", help="the prompt (its words are joined with spaces)")
    run.add_argument("--json", action="store_true", help="print JSON events, one per line")
    run.add_argument("--model", help="PROVIDER/MODEL for this run")
    run.add_argument("--effort", choices=EFFORTS, help="reasoning effort for this run")
    run.add_argument("--tools", help="offer only these tools (comma-separated)")
    run.add_argument("--append-prompt", help="text added to the system prompt")
    run.add_argument("--title", help="the session title (default: the prompt's first line)")
    run.add_argument("--parent", help="save the run as a child of this session")
    run.add_argument("--session", help="continue this session instead of starting one")
    run.add_argument(
        "--on-ask",
        choices=("allow", "deny"),
        default="allow",
        help="what a call that would ask becomes with nobody to answer (default: allow)",
    )
    resume = sub.add_parser("resume", help="reopen a session")
    resume.add_argument("--id")
    sub.add_parser("list", help="list the sessions of this directory")
    delete = sub.add_parser("delete", help="delete a session")
    delete.add_argument("id")
    return p


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
    opts = _parser().parse_args(args)  # type: ignore[attr-defined]
    if opts.version:
        from uji import __version__

        print(f"uji {__version__}")
        return 0
    if opts.help and opts.command is None:
        sys.stdout.write(HELP)
        return 0
    from uji.paths import resolve

    paths = resolve(opts.config_dir, opts.data_dir, opts.db)
    command = opts.command or "new"
    if command == "run":
        import asyncio

        from uji.headless import run

        code = asyncio.run(run(paths, opts))
        if argv is None:  # the real command line; a caller in this process keeps its interpreter
            fast_exit(code)
        return code
    if command in ("list", "delete"):
        from uji.sessions_cli import delete, listing

        return listing(paths) if command == "list" else delete(paths, opts.id)
    if command in ("new", "resume"):
        from uji.tui import main as screen

        if command == "resume":
            return screen(paths, resume=opts.id, latest=opts.id is None)
        return screen(paths)
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
    flush_c_streams = None
    if "lupa" in sys.modules:
        try:
            import ctypes

            flush_c_streams = ctypes.CDLL(None).fflush
        except (ImportError, OSError, AttributeError):
            return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: nothing more can be said
            code = code or 1
    if flush_c_streams is not None:
        flush_c_streams(None)
    os._exit(code)
