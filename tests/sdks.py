"""The providers' SDK types that the request-body checks hold uji's bodies against, each
imported when a test first uses it (`sdks.MessageCreateParamsStreaming`).

The SDKs take seconds of CPU to import, and every test worker imports every test file
to collect it: imported at the top of those files, each worker would pay for them.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest

# The tests that use an SDK run on one worker (`--dist loadgroup`), so only that one loads them.
ON_ONE_WORKER = pytest.mark.xdist_group("sdks")

# Name -> the module that defines it (a module itself when the name is the module's).
_WHERE = {
    "CompletionCreateParamsStreaming": "openai.types.chat.completion_create_params",
    "ResponseCreateParamsStreaming": "openai.types.responses.response_create_params",
    "MessageCreateParamsStreaming": "anthropic.types.message_create_params",
    "ChatCompletionStreamRequest": "mistralai.client.models",
    "genai": "google.genai.types",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = importlib.import_module(where)
    value = module if name == "genai" else getattr(module, name)
    globals()[name] = value
    return value
