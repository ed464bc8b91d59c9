"""`uji sandbox [--network | --no-network] [--read-only] -- CMD [ARG...]`: one command,
in the current directory, under exactly the sandbox uji gives the model's commands (the
config's `uji.sandbox.configure` and `uji.tool.roots` included; with the mode off, none),
so a rule can be tried before it is trusted. The exit status is the command's; 126 with
one line on stderr when the kernel cannot sandbox it."""

from __future__ import annotations

import sys

from uji.paths import Paths

EXIT_CANNOT = 126  # as a shell says for a command found but not runnable
EXIT_NOT_FOUND = 127


async def run_sandboxed(paths: Paths, argv: list[str], *, network: bool | None, read_only: bool) -> int:
    from uji.app import App
    from uji.sandbox.spawn import SandboxUnavailable, start
    from uji.ui.headless import HeadlessUi

    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("uji: error: uji sandbox: no command (uji sandbox -- CMD [ARG...])", file=sys.stderr)
        return 2

    def notice(text: str) -> None:
        print(f"uji: {text}", file=sys.stderr)

    app = App(paths, notice=notice, ui=HeadlessUi(notice))
    try:
        await app.load_config()
        gate = app.gate
        if network is not None:
            gate.os_sandbox.network = network
        if read_only:
            gate.os_sandbox.mode = "read-only"
        state = gate.sandbox_status()
        if not state.available and state.mode != "off":  # off: run as uji would, unsandboxed
            print(f"uji: sandbox: {state.reason}", file=sys.stderr)
            return EXIT_CANNOT
        policy = gate.command_sandbox()
        env = gate.env()
        if policy is not None:
            env.update(policy.temp_vars())
        sys.stdout.flush()
        try:
            child = await start(argv, cwd=gate.cwd, env=env, stdout=None, stderr=None, policy=policy)
        except SandboxUnavailable as e:
            print(f"uji: sandbox: {e}", file=sys.stderr)
            return EXIT_CANNOT
        except FileNotFoundError:
            print(f"uji: sandbox: {argv[0]}: command not found", file=sys.stderr)
            return EXIT_NOT_FOUND
        except PermissionError:
            print(f"uji: sandbox: {argv[0]}: permission denied", file=sys.stderr)
            return EXIT_CANNOT
        code = await child.wait()
        return 128 - code if code < 0 else code
    finally:
        await app.close()
