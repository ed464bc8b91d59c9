"""`uji run`'s start-up and exit trims, seen from outside: no CA bundle read for an http://
model, https still verified, and the fast exit loses nothing (database, atexit cleanups)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Home, unmeasured
from tests.fakes.openai_server import text, tool_call
from tests.loopback import pump, serving

# Runs uji's real command line with the ways a CA store gets loaded recorded in a file.
TRACED = """
import os, ssl, sys
log = os.environ["CA_LOG"]
def traced(name):
    real = getattr(ssl.SSLContext, name)
    def wrapper(self, *args, **kwargs):
        with open(log, "a") as f:
            f.write(name + "\\n")
        return real(self, *args, **kwargs)
    setattr(ssl.SSLContext, name, wrapper)
for name in ("load_verify_locations", "load_default_certs", "set_default_verify_paths"):
    traced(name)
import atexit
atexit.register(lambda: open(log + ".modules", "w").write("\\n".join(sorted(sys.modules))))
sys.argv = ["uji", *sys.argv[1:]]
from uji.cli import main
raise SystemExit(main())
"""


def traced_run(home: Home, *args: str, env: dict[str, str] | None = None) -> tuple[list[str], str, list[str]]:
    log = home.root / "ca.log"
    log.unlink(missing_ok=True)
    proc = subprocess.run(
        [sys.executable, "-c", TRACED, "run", *args],
        cwd=home.work,
        env=unmeasured(home.env(CA_LOG=str(log), **(env or {}))),
        capture_output=True,
        text=True,
        timeout=60,
    )
    loads = log.read_text().splitlines() if log.exists() else []
    modules = Path(f"{log}.modules")
    return loads, proc.stdout + proc.stderr, modules.read_text().splitlines() if modules.exists() else []


def self_signed(folder: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cert, key = folder / "cert.pem", folder / "key.pem"
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    subject = ["-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    subprocess.run(
        ["openssl", "req", "-x509", *ec, "-keyout", str(key), "-out", str(cert), "-days", "1", *subject],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return cert, key


@contextlib.contextmanager
def tls_front(port: int, cert: Path, key: Path) -> Iterator[int]:
    """A TLS-terminating forwarder on 127.0.0.1 to the plain fake on `port`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)

    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(ssl.SSLError):
            tls = ctx.wrap_socket(conn, server_side=True)
            upstream = socket.create_connection(("127.0.0.1", port), timeout=30)
            back = threading.Thread(target=pump, args=(upstream, tls), daemon=True)
            back.start()
            pump(tls, upstream)
            back.join(30)
            tls.close()
            upstream.close()

    with serving(serve) as front:
        yield front


def https_init(home: Home, port: int) -> None:
    home.init(
        f"""
        uji.provider.add({{ id = "tls", name = "TLS", wire = "openai-chat",
          base_url = "https://127.0.0.1:{port}/v1", models = {{ "m" }} }})
        uji.model.use({{ provider = "tls", model = "m" }})
        """,
        provider=False,
    )


def test_a_run_against_an_http_model_reads_no_ca_bundle(home: Home) -> None:
    home.init("")
    home.fake.script(text("plain"))
    loads, out, modules = traced_run(home, "hi")
    assert "plain" in out
    assert loads == []
    # What a headless run has no use for is not imported (the list is written by an atexit
    # handler, so it also shows that the fast exit runs them).
    assert "uji.wires.sse" in modules
    assert [m for m in modules if m.split(".")[0] in ("textual", "tomllib", "difflib")] == []
    assert [m for m in modules if m.startswith("uji.tui")] == []


def test_https_verifies_the_certificate_and_loads_the_ca_store_on_first_use(home: Home) -> None:
    cert, key = self_signed(home.root)
    with tls_front(home.fake.port, cert, key) as port:
        https_init(home, port)
        # A self-signed certificate is refused by default...
        loads, out, _ = traced_run(home, "hi")
        assert "certificate verify failed" in out.lower(), out
        assert loads == ["load_verify_locations"]
        assert home.fake.turn_requests == []
        # ...and accepted once it is the trusted CA, so the store really is the one used.
        home.fake.script(text("secure"))
        loads, out, _ = traced_run(home, "hi", env={"SSL_CERT_FILE": str(cert)})
        assert "secure" in out, out
        assert loads == ["load_verify_locations"]
        assert len(home.fake.turn_requests) == 1


def test_after_a_run_the_database_is_whole_and_atexit_cleanups_ran(home: Home) -> None:
    home.init("")
    home.fake.script(tool_call("run_command", {"command": "seq 1 8000"}), text("counted"))
    run = home.run("count")
    assert run.rc == 0 and run.done["text"] == "counted"
    [result] = run.tool_results()
    spill = Path(next(w for w in result["content"].split() if "uji-output-" in w).rstrip("]"))
    assert spill.parent.name.startswith("uji-output-")
    assert not spill.parent.exists()  # run_command's atexit cleanup ran before the fast exit
    wal = home.db.with_name(home.db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed and closed
    saved = home.db_messages(run.session_id)
    assert [m["type"] for m in saved] == [m["type"] for m in run.messages]
    assert [m["type"] for m in saved] == ["user", "assistant", "tool", "assistant"]


def test_what_lua_wrote_through_c_stdio_is_flushed_at_exit(home: Home) -> None:
    log = home.root / "lua.log"
    home.init(
        f"""
        held = io.open("{log}", "w")  -- reachable to the end and never closed
        held:write("kept")
        io.write("from lua's io.write\\n")
        """
    )
    home.fake.script(text("answer"))
    run = home.uji("run", "hi", fresh=True, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert run.rc == 0, run.stderr
    assert log.read_text() == "kept"
    assert "from lua's io.write" in run.stdout
    # Flushed through LuaJIT's FFI: ctypes is not imported for it.
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "import time:" in line]
    assert "lupa" in imported and "ctypes" not in imported


def test_a_run_against_an_http_model_loads_no_ssl_and_https_still_verifies(home: Home) -> None:
    # asyncio is imported with ssl hidden (uji.aio): an http model never loads OpenSSL's
    # ssl module; an https one gets it before its first connection, verified as ever.
    home.init("")
    home.fake.script(text("plain"))
    run = home.uji("run", "hi", fresh=True, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert "plain" in run.stdout, run.stderr
    imported = [line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "import time:" in line]
    assert "asyncio" in imported and "_ssl" not in imported
    cert, key = self_signed(home.root)
    with tls_front(home.fake.port, cert, key) as port:
        https_init(home, port)
        refused = home.run("hi", fresh=True)
        home.fake.script(text("secure"))
        trusted = home.run("hi", fresh=True, env={"SSL_CERT_FILE": str(cert)})
    assert refused.rc == 1 and "certificate verify failed" in refused.done["error"].lower()
    assert trusted.done["text"] == "secure", trusted.stderr
    assert len(home.fake.turn_requests) == 2  # the http run's and the trusted one's


def test_a_run_imports_only_the_lua_namespaces_its_config_uses(home: Home) -> None:
    # The host functions behind `uji.*` are installed a namespace at a time, when Lua
    # first calls one (uji.lua.host.HostApi): a run whose config never touches uji.db or
    # uji.tty does not import them; a config calling uji.width gets its answer.
    out = home.root / "width.txt"
    home.init(f'local f = assert(io.open("{out}", "w")); f:write(uji.width("ab")); f:close()')
    home.fake.script(text("answer"))
    run = home.uji("run", "--json", "hi", fresh=True, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert run.rc == 0, run.stderr
    assert run.done["text"] == "answer"
    assert out.read_text() == "2"
    imported = {line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if "import time:" in line}
    assert "uji.lua.api.text" in imported
    assert imported.isdisjoint({"uji.lua.api.db", "uji.lua.api.tty", "uji.lua.api.net", "uji.lua.api.proc"})
