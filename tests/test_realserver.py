"""uji against a real OpenAI-compatible server it did not write: llama-cpp-python's server
(llama.cpp compiled from source) on 127.0.0.1, serving a tiny real model (Gemma 3 270M, Q4_K_M).

Not in the default run: `./test -m realserver` builds the server and the model into .cache/
first (tests/realserver/setup.sh: minutes the first time, cached after), then runs these tests.

A pass-through recorder sits between uji and the server, so the tests can check what uji
actually sent; everything it answers comes from the real server, byte for byte.
"""

from __future__ import annotations

import contextlib
import fcntl
import http.client
import json
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Home, Run

pytestmark = [pytest.mark.realserver, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".cache" / "realserver-venv"
MODEL_FILE = ROOT / ".cache" / "realserver-models" / "gemma-3-270m-q4_k_m.gguf"
MODEL = "gemma-3-270m"
CONTEXT = 8192
READY_SECONDS = 180.0  # loading a 250 MB model on a busy 2-core machine
TURN_SECONDS = 480.0  # CPU inference; uji caps the answer at 1024 tokens


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path) -> list[str]:
    """Poll GET /v1/models until the server answers; return the model ids it serves."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-4000:]}")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/v1/models")
            resp = conn.getresponse()
            if resp.status == 200:
                return [m["id"] for m in json.loads(resp.read())["data"]]
        except OSError:
            pass
        finally:
            conn.close()
        time.sleep(0.25)
    pytest.fail(f"llama_cpp.server not ready after {READY_SECONDS:.0f} s:\n{log.read_text()[-4000:]}")


@pytest.fixture
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real server on a free loopback port; yields its base URL (…/v1).

    One per test, started with a fixed seed, so what the model samples depends only on
    what uji sends. The GGUF carries no chat template and the model is Gemma's base
    (pretrained) one: in Gemma's own turn format it never emits <end_of_turn> and runs to
    the output limit, while in ChatML (plain text turns) it closes its turn with
    `<|im_end|>` by itself. uji sends `tool_choice: "auto"` with the tools (llama.cpp's
    servers leave the tools out of the prompt without one)."""
    python = VENV / "bin" / "python"
    if not python.exists() or not MODEL_FILE.exists():
        pytest.fail(
            "the realserver cache is missing: run `./test -m realserver`, which builds it "
            "(or tests/realserver/setup.sh)"
        )
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(python),
                "-m",
                "llama_cpp.server",
                "--model",
                str(MODEL_FILE),
                "--model_alias",
                MODEL,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                str(CONTEXT),
                "--chat_format",
                "chatml",
                "--seed",
                "1",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        assert wait_ready(proc, port, log) == [MODEL]
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


class Recorder:
    """A loopback pass-through to the real server that keeps each request's JSON body.
    Responses are streamed back unchanged as they arrive.

    `force_first_tool`: the test's own hand on the server, not uji's request: the first
    chat request reaches the server naming that tool as its `tool_choice`, so the tiny
    model (which seldom calls a tool of its own accord) answers with a real tool call,
    sampled under the server's grammar for the tool's parameters. `bodies` keeps what uji
    sent, unchanged."""

    def __init__(self, upstream: str) -> None:
        host_port = upstream.split("//", 1)[1].split("/", 1)[0]
        up_host, up_port = host_port.rsplit(":", 1)
        self.bodies: list[dict[str, Any]] = []
        self.force_first_tool: str | None = None
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with contextlib.suppress(ValueError):
                    recorder.bodies.append(json.loads(body))
                    if recorder.force_first_tool and len(recorder.bodies) == 1:
                        steered = dict(recorder.bodies[0])
                        steered["tool_choice"] = {
                            "type": "function",
                            "function": {"name": recorder.force_first_tool},
                        }
                        body = json.dumps(steered).encode()
                self._forward(body)

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(up_host, int(up_port), timeout=TURN_SECONDS)
                try:
                    headers = {
                        k: v
                        for k, v in self.headers.items()
                        if k.lower() not in ("host", "connection", "content-length")
                    }
                    conn.request(self.command, self.path, body=body or None, headers=headers)
                    resp = conn.getresponse()
                    self.send_response(resp.status)
                    for k, v in resp.getheaders():
                        if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                            self.send_header(k, v)
                    self.send_header("Connection", "close")
                    self.end_headers()
                    while chunk := resp.read1(65536):  # ends when the server closes the response
                        self.wfile.write(chunk)
                        self.wfile.flush()
                finally:
                    conn.close()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Recorder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def recorder(server: str) -> Iterator[Recorder]:
    with Recorder(server) as rec:
        yield rec


@pytest.fixture
def home(tmp_path: Path, recorder: Recorder, request: pytest.FixtureRequest) -> Iterator[Home]:
    """uji configured for the server. The working directory is a fixed path: it is part of
    uji's system prompt, and a fixed prompt with the server's fixed seed makes what the
    model samples the same on every run (a lock keeps two runs on one machine apart)."""
    h = Home(tmp_path, None)
    base = Path(tempfile.gettempdir()) / "uji-realserver"
    base.mkdir(exist_ok=True)
    with (base / f"{request.node.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        h.work = base / request.node.name
        shutil.rmtree(h.work, ignore_errors=True)
        h.work.mkdir()
        h.init(
            f"""
            uji.provider.add({{ id = "llamacpp", name = "llama.cpp", wire = "openai-chat",
              base_url = "{recorder.base_url}",
              models = {{ {{ id = "{MODEL}", context = {CONTEXT}, output = 256 }} }} }})
            uji.model.use({{ provider = "llamacpp", model = "{MODEL}" }})
            """,
            provider=False,
        )
        try:
            yield h
        finally:
            shutil.rmtree(h.work, ignore_errors=True)


def timed_run(home: Home, prompt: str, *flags: str) -> Run:
    start = time.monotonic()
    run = home.run(prompt, *flags, timeout=TURN_SECONDS)
    print(
        f"\nuji run --json {shlex.join(flags)} {prompt!r}: {time.monotonic() - start:.1f} s, "
        f"rc {run.rc}, answer {run.done.get('text')!r}, usage {run.done.get('usage')}"
    )
    return run


def assert_completed(run: Run) -> None:
    assert run.rc == 0, f"rc={run.rc}\nstderr:\n{run.stderr}\nstdout:\n{run.stdout}"
    assert "error" not in run.done and not [m for m in run.messages if m["type"] == "error"], run.stdout
    assert isinstance(run.done.get("text"), str) and run.done["text"].strip(), run.stdout


def test_a_plain_turn_completes(home: Home, recorder: Recorder) -> None:
    run = timed_run(home, "What is in notes.txt? Guess in one sentence.", "--tools", "")
    assert_completed(run)
    [body] = recorder.bodies  # one request, no tools, streamed
    assert body["model"] == MODEL and body["stream"] is True and "tools" not in body
    assert body["messages"][-1] == {"role": "user", "content": "What is in notes.txt? Guess in one sentence."}
    # What uji kept of the streamed answer is what it saved as the assistant's message.
    assistant = [m for m in home.db_messages(run.session_id) if m["type"] == "assistant"]
    assert assistant[-1]["text"] == run.done["text"]


def test_a_turn_with_tools_offered_completes(home: Home, recorder: Recorder) -> None:
    (home.work / "notes.txt").write_text("The password is swordfish.\n")
    run = timed_run(home, "What is in notes.txt? Use the read_file tool.")
    assert_completed(run)
    first = recorder.bodies[0]
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"read_file", "write_file", "edit_file", "run_command"} <= offered
    # The tiny model may answer directly or call a tool; if it called one, the result went
    # back to the server in the next request and the turn still ended with an answer.
    calls = run.calls
    results = run.tool_results()
    print(f"tool calls: {[c.get('name') for c in calls]}")
    if not results:
        assert not calls and len(recorder.bodies) == 1
        return
    assert len(recorder.bodies) >= 2
    sent = [m for m in recorder.bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in sent] == [r["tool_call_id"] for r in results]


def test_a_tool_call_from_the_real_server_runs_end_to_end(home: Home, recorder: Recorder) -> None:
    # The server streams a real tool call (its own framing of `tool_calls` deltas); uji
    # parses it, runs the tool, sends the result back under the call's id, and the turn
    # ends with the model's answer.
    (home.work / "notes.txt").write_text("The password is swordfish.\n")
    recorder.force_first_tool = "read_file"
    run = timed_run(home, "What is in notes.txt? Use the read_file tool.", "--tools", "read_file")
    assert_completed(run)
    first = recorder.bodies[0]
    assert first["tool_choice"] == "auto" and [t["function"]["name"] for t in first["tools"]] == ["read_file"]
    call = run.calls[0]
    assert call["name"] == "read_file" and call["decision"] == "allow", run.calls
    print(f"the model called read_file with {call.get('args')!r}")
    [result, *_] = run.tool_results()
    # The next request carries the call as the server sent it and uji's result for it.
    second = recorder.bodies[1]["messages"]
    assistant = next(m for m in second if m["role"] == "assistant" and m.get("tool_calls"))
    [sent_call] = assistant["tool_calls"]
    assert sent_call["function"]["name"] == "read_file"
    assert isinstance(json.loads(sent_call["function"]["arguments"]), dict)
    [tool_message] = [m for m in second if m["role"] == "tool"]
    assert tool_message["tool_call_id"] == sent_call["id"] == result["tool_call_id"]
    assert tool_message["content"] == result["content"]
    assert recorder.bodies[1]["tool_choice"] == "auto"  # only the test steered the first
