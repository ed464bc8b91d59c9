"""`uji.on/off/emit`: notifications and the hooks that steer a turn.

Handlers run in priority order (lower first, then in the order they were added). A
handler that raises becomes a notice and never breaks the turn, except where a hook
guards something (`before_tool`): there the failure is the caller's to act on, and it
fails closed. An interrupt is a cancellation and always goes through.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, overload

from uji.record import Struct

if TYPE_CHECKING:
    from uji.events.catalog import Spec
    from uji.events.stream import AfterTool, BeforeStop, BeforeTool, BeforeTurn, Event, HookPayload


class Handler(Struct):
    event: str
    name: str
    priority: float
    seq: int
    fn: Any
    origin: str | None = None

    def label(self) -> str:
        where = f" ({self.origin})" if self.origin else ""
        return f"{self.event} handler {self.name!r}{where}"


Invoke = Callable[[Handler, dict[str, Any]], Awaitable[Any]]


class HookFailed(Exception):
    """A guarding hook raised; `error` carries the `file:line:` of the failure."""

    def __init__(self, handler: Handler, error: str) -> None:
        super().__init__(f"{handler.label()} failed: {error}")
        self.handler = handler
        self.error = error


_NOTIFICATIONS: dict[type, Spec] = {}


def _notifications() -> dict[type, Spec]:
    """The catalog's notifications by the type of event they are read from (imported on
    first use: the agent publishes every streamed delta, so this stays one lookup)."""
    if not _NOTIFICATIONS:
        from uji.events.catalog import NOTIFICATIONS

        _NOTIFICATIONS.update((spec.source, spec) for spec in NOTIFICATIONS)
    return _NOTIFICATIONS


class Events:
    def __init__(self, invoke: Invoke, notice: Callable[[str], None]) -> None:
        self._invoke = invoke
        self._notice = notice
        self._handlers: dict[str, list[Handler]] = {}
        self._seq = 0
        self._background: set[asyncio.Task[Any]] = set()

    def on(
        self, event: str, fn: Any, priority: float = 50, name: str | None = None, origin: str | None = None
    ) -> str:
        self._seq += 1
        name = name or f"{event}#{self._seq}"
        handlers = [h for h in self._handlers.get(event, []) if h.name != name]
        handlers.append(Handler(event, name, priority, self._seq, fn, origin))
        handlers.sort(key=lambda h: (h.priority, h.seq))
        self._handlers[event] = handlers
        return name

    def off(self, event: str, name: str) -> bool:
        handlers = self._handlers.get(event, [])
        kept = [h for h in handlers if h.name != name]
        self._handlers[event] = kept
        return len(kept) != len(handlers)

    def has(self, event: str) -> bool:
        return bool(self._handlers.get(event))

    def handlers(self, event: str) -> list[Handler]:
        return list(self._handlers.get(event, ()))

    async def _call(
        self, handler: Handler, payload: dict[str, Any], strict: bool = False
    ) -> tuple[bool, Any]:
        try:
            return True, await self._invoke(handler, dict(payload, event=handler.event))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if strict:
                raise HookFailed(handler, str(e)) from e
            self._notice(f"{handler.label()} failed: {e}")
            return False, None

    async def notify(self, event: str, payload: dict[str, Any] | None = None) -> None:
        """A notification: every handler runs, return values are ignored."""
        for handler in self.handlers(event):
            await self._call(handler, payload or {})

    def emit(self, event: str, payload: dict[str, Any] | None = None) -> None:
        """Fire and forget; costs nothing when nobody listens."""
        if not self._handlers.get(event):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self.notify(event, payload))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def publish(self, event: Event) -> None:
        """The Lua notification of a typed event (fire and forget), if the catalog
        declares one for its type and anyone listens."""
        spec = _notifications().get(type(event))
        if spec is None or not self._handlers.get(spec.name):
            return
        self.emit(spec.name, spec.payload(event))

    async def deliver(self, event: Event) -> None:
        """`publish`, awaited: every handler has run when it returns."""
        spec = _notifications().get(type(event))
        if spec is not None:
            await self.notify(spec.name, spec.payload(event))

    @overload
    async def hook(self, payload: BeforeTurn | AfterTool) -> tuple[str, None]: ...

    @overload
    async def hook(self, payload: BeforeTool | BeforeStop) -> tuple[Any, Handler | None]: ...

    async def hook(self, payload: HookPayload) -> tuple[Any, Handler | None]:
        """Run a hook's handlers and fold their results as the catalog declares: the
        chained value, or the first result that is not nil and the handler that gave it.
        A `strict` hook raises HookFailed when a handler raises."""
        from uji.events.catalog import BY_SOURCE

        spec = BY_SOURCE[type(payload)]
        data = spec.payload(payload)
        if spec.fold == "chain":
            assert spec.chained is not None
            value = data.pop(spec.chained)
            return await self.chain(spec.name, data, spec.chained, value), None
        return await self.first(spec.name, data, strict=spec.fold == "strict")

    async def drain(self) -> None:
        """Wait for notifications still running (before quitting)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def chain(self, event: str, payload: dict[str, Any], key: str, value: Any) -> Any:
        """Each handler sees the previous result in `payload[key]`; a string replaces it.
        Anything other than nil or a string is ignored with a notice."""
        for handler in self.handlers(event):
            ok, result = await self._call(handler, dict(payload, **{key: value}))
            if not ok or result is None:
                continue
            if isinstance(result, str):
                value = result
            else:
                self._notice(f"{handler.label()} returned a {type(result).__name__}, not a string; ignored")
        return value

    async def first(
        self, event: str, payload: dict[str, Any], strict: bool = False
    ) -> tuple[Any, Handler | None]:
        """The first handler returning something other than nil wins. With `strict`, a
        handler that raises stops here with HookFailed."""
        for handler in self.handlers(event):
            ok, result = await self._call(handler, payload, strict)
            if ok and result is not None:
                return result, handler
        return None, None
