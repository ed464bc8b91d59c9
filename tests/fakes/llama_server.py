"""A fake that behaves as llama.cpp's server does where it differs from OpenAI's, on
127.0.0.1 (the Chat Completions format of openai_server, with four differences seen
against the real server):

- tools without `tool_choice` are left out of the prompt: the model never sees them, so
  a scripted step with calls is answered with plain text instead (`.blind` counts these);
- no usage chunk, whatever `stream_options` asks;
- a prompt over `n_ctx` tokens (characters / 4 of the messages) is refused with llama.cpp's
  400 `exceed_context_size_error`, which names both numbers;
- one slot: a request that arrives while a stream is still being sent stops that stream
  (its socket is closed mid-body; `.cut` counts them), as the real server drops a slot's
  task for the newer one.

    with FakeLlama(n_ctx=4096) as fake:
        fake.script(tool_call("read_file", {"path": "a"}, gap=0.02), text("done"))
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from typing import Any

from tests.fakes.base import Recorded, Step, status
from tests.fakes.openai_server import FakeOpenAI, text


class FakeLlama(FakeOpenAI):
    def __init__(self, n_ctx: int = 32768) -> None:
        super().__init__()
        self.n_ctx = n_ctx
        self.blind = 0
        self.cut = 0
        self._streaming: socket.socket | None = None
        self._slot = threading.Lock()

    def _choose(self, request: Recorded) -> tuple[Step, bool]:
        body = request.body if isinstance(request.body, dict) else {}
        with self._slot:
            if self._streaming is not None:  # one slot: the stream in progress stops
                self.cut += 1
                with contextlib.suppress(OSError):  # its writer sees the client gone
                    self._streaming.shutdown(socket.SHUT_RDWR)
                self._streaming = None
        prompt = len(json.dumps(body.get("messages", []))) // 4
        if prompt > self.n_ctx:
            with self._lock:
                self._requests.append(request)
            error = {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": prompt,
                "n_ctx": self.n_ctx,
            }
            return status(400, {"error": error}), True
        step, keep = super()._choose(request)
        if body.get("tools") and "tool_choice" not in body and any(b'"tool_calls"' in e for e in step.events):
            with self._lock:
                self.blind += 1
            step = text("I have no tools to call.")
        return step, keep

    def _answer(self, conn: socket.socket, request: Recorded, step: Step) -> bool:
        with self._slot:
            self._streaming = conn
        try:
            return super()._answer(conn, request, step)
        finally:
            with self._slot:
                if self._streaming is conn:
                    self._streaming = None

    def _side_step(self, body: dict[str, Any]) -> Step:
        step = super()._side_step(body)
        step.gap = 0.02  # a title takes a while to generate on a CPU, as the turn does
        return step

    def _tail(self, request: Recorded, step: Step) -> list[bytes]:
        return [b"data: [DONE]\n\n"] if step.done else []  # never a usage chunk
