"""Which wire speaks for a provider: the built-in ones by name, made on first use, and
the ones a config adds (`uji.wire.add`, adapted by lua/wire.py).

Each built-in wire is a factory that imports its module when called: a run talks to one
provider, so it loads one wire. To add a wire, write a `Wire` (base.py; an `SSEWire`
subclass for HTTP + SSE, see common.py) and add its factory to `BUILTIN`.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Wire
from .http import Http

WireFactory = Callable[[Http], Wire]


def _anthropic(http: Http) -> Wire:
    from .anthropic import AnthropicWire

    return AnthropicWire(http)


def _gemini(http: Http) -> Wire:
    from .gemini import GeminiWire

    return GeminiWire(http)


def _openai_chat(http: Http) -> Wire:
    from .openai_chat import OpenAIChatWire

    return OpenAIChatWire(http)


def _responses(http: Http) -> Wire:
    from .responses import ResponsesWire

    return ResponsesWire(http)


BUILTIN: dict[str, WireFactory] = {
    "anthropic": _anthropic,
    "gemini": _gemini,
    "openai-chat": _openai_chat,
    "responses": _responses,
}


class Wires:
    """The wires of one run. A wire added under a built-in name replaces it until removed."""

    def __init__(self, http: Http) -> None:
        self.http = http
        self._wires: dict[str, Wire] = {}

    def names(self) -> list[str]:
        return sorted({*BUILTIN, *self._wires})

    def get(self, name: str) -> Wire:
        """The wire called `name`; LookupError (naming the known ones) if there is none."""
        wire = self._wires.get(name)
        if wire is None:
            factory = BUILTIN.get(name)
            if factory is None:
                raise LookupError(f"no wire named {name!r} (known: {', '.join(self.names())})")
            wire = self._wires[name] = factory(self.http)
        return wire

    def add(self, name: str, wire: Wire) -> None:
        self._wires[name] = wire

    def remove(self, name: str) -> bool:
        """Forget the wire added as `name`; True if there was one."""
        return self._wires.pop(name, None) is not None
