"""Just enough of a Language Server Protocol client to get a language server's
diagnostics for one file (tests/test_lua_surface.py)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

DEADLINE = 60.0


class Client:
    def __init__(self, command: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.next_id = 0
        self.progress_done = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                text = line.decode().strip()
                if not text:
                    break
                key, _, value = text.partition(":")
                if key.lower() == "content-length":
                    length = int(value)
            if length is None:
                return
            self.inbox.put(json.loads(out.read(length)))

    def _write(self, message: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._write({"method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        mine = self.next_id
        self._write({"id": mine, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == mine and "method" not in m).get("result")

    def wait(self, want: Any, limit: float = DEADLINE) -> dict[str, Any]:
        """Messages until one `want` accepts; the server's own requests are answered."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                m = self.inbox.get(timeout=max(0.01, min(1.0, end - time.monotonic())))
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"the language server exited ({self.proc.returncode})") from None
                continue
            if "method" in m and "id" in m:  # workspace/configuration, progress tokens: no answer to give
                result: Any = (
                    [None] * len(m["params"].get("items", []))
                    if m["method"] == "workspace/configuration"
                    else None
                )
                self._write({"id": m["id"], "result": result})
            if want(m):
                return m
        raise TimeoutError(f"no answer from the language server within {limit:.0f} s")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def diagnostics(server: str, root: Path, file: Path) -> list[tuple[int, str, str]]:
    """(line from 1, code, message) of each diagnostic the server gives `file`, once it
    has loaded the workspace (its `workspace.library` included)."""
    client = Client([server], root)
    try:
        uri = root.as_uri()
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "workspaceFolders": [{"uri": uri, "name": root.name}],
                "capabilities": {
                    "workspace": {"workspaceFolders": True, "configuration": True},
                    "window": {"workDoneProgress": True},
                    "textDocument": {"publishDiagnostics": {}, "diagnostic": {}},
                },
            },
        )
        client.notify("initialized", {})
        doc = file.as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": doc, "languageId": "lua", "version": 1, "text": file.read_text()}},
        )
        # The workspace has loaded when its progress ends.
        client.wait(lambda m: m.get("method") == "$/progress" and m["params"]["value"].get("kind") == "end")
        result = client.request("textDocument/diagnostic", {"textDocument": {"uri": doc}})
        items = (result or {}).get("items", [])
        return [(d["range"]["start"]["line"] + 1, str(d.get("code", "")), d["message"]) for d in items]
    finally:
        client.close()
