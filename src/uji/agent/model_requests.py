"""The requests a session sends its model: the turn's steps, and side requests without
tools (titles, summaries). Each goes to the chosen model's wire with its key and
settings, through `model_call.call_model` (retries, the stall watchdog), and is counted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from uji.agent.messages import for_model
from uji.agent.model_call import Collector, call_model
from uji.agent.window import request_tokens
from uji.events.stream import discard
from uji.wires.base import STALL_SECONDS, Failure, WireRequest

if TYPE_CHECKING:
    from uji.agent.fill_meter import FillMeter
    from uji.agent.services import TurnServices
    from uji.agent.session_log import SessionLog
    from uji.agent.spending import Spending
    from uji.events.stream import Sink
    from uji.wires.base import Answer

# What a provider answers when a model cannot take images (reference internals §4).
TEXT_ONLY_STATUSES = frozenset({400, 413, 415, 422})


class TurnFailed(Exception):
    pass


class ModelRequests:
    def __init__(
        self,
        services: TurnServices,
        log: SessionLog,
        spending: Spending,
        meter: FillMeter,
        emit: Sink,
        max_output: int,
    ) -> None:
        self.services = services
        self.log = log
        self.spending = spending
        self.meter = meter
        self._emit = emit
        self.max_output = max_output  # when the model says none
        # The answer being streamed, for an interrupt to keep (agent/in_flight.py).
        self.track: Callable[[Collector | None], None] = lambda reply: None
        # A local server may run one stream at a time (llama.cpp's stops one when another
        # request arrives): its requests take turns through this lock, and a title waits
        # until the turn's first call has streamed (`streamed`), so it never goes first.
        self._slot = asyncio.Lock()
        self.streamed = asyncio.Event()

    async def step(self, system: str) -> Answer:
        """The turn's next model call, with its tools, over the live messages."""
        self.spending.step()
        models = self.services.models
        await models.ready_model()
        request, wire, idle = self._request(system)
        self.meter.sending(system)
        estimated = request_tokens(system, request.tools, request.messages)
        notice = self.services.notice

        async def stream() -> Answer:
            return await call_model(
                wire,
                request,
                idle,
                self._emit,
                notice,
                self.track,
                self._hint(),
                slot=self.one_stream_at_a_time,
            )

        try:
            try:
                answer = await stream()
            finally:
                self.streamed.set()
        except Failure as failure:
            if failure.usage is not None:
                self.spending.count(failure.usage)  # a refusal or a cut-off call still cost tokens
            if not _may_be_text_only(failure, request):
                raise
            # A model of unknown ability refused a request with images: once more without
            # them, and if that works, remember that it takes none.
            request.images = False
            answer = await stream()
            models.remember_text_only()
            notice(f"{models.model_id} does not take images; they are left out from now on")
        self.spending.count(answer.usage)
        self.meter.counted(answer.usage, estimated)
        if answer.limited:
            notice(f"the answer was cut off at the output limit ({request.max_output} tokens)")
        return answer

    async def side(self, system: str, text: str, max_output: int = 8192, quiet: bool = False) -> str:
        """A call without tools (titles, summaries): the same model, effort off, no cache.
        `quiet` keeps its retries out of the notices (a title runs beside the turn's own
        request, whose retries already say that the provider is failing)."""
        await self.services.models.ready_model()
        request, wire, idle = self._request(system)
        request.messages = [{"type": "user", "text": text}]
        request.tools = []
        request.effort = None
        request.cache = "off"
        request.max_output = min(request.max_output, max_output)
        notice = (lambda text: None) if quiet else self.services.notice
        answer = await call_model(
            wire, request, idle, discard, notice, hint=self._hint(), slot=self.one_stream_at_a_time
        )
        self.spending.count(answer.usage)
        return answer.text

    def to_local_server(self) -> bool:
        models = self.services.models
        provider = models.provider()
        if provider is None:
            return False
        from uji.wires.common import is_local

        return is_local(models.base_url(provider) or "")

    @contextlib.asynccontextmanager
    async def one_stream_at_a_time(self, request: WireRequest) -> AsyncIterator[None]:
        """Around each attempt of a model call (not its retries' waits): to a local
        server, one at a time (see `_slot`)."""
        from uji.wires.common import is_local

        if not is_local(str(request.provider.get("base_url") or "")):
            yield
            return
        async with self._slot:
            yield

    def _request(self, system: str) -> tuple[WireRequest, Any, float]:
        services = self.services
        models = services.models
        provider = models.provider()
        if provider is None or not models.model_id:
            if provider is not None and provider.error:
                raise TurnFailed(f"no model for {provider.name}: {provider.error}")
            raise TurnFailed(
                "no model chosen: add uji.model.use{provider=..., model=...} to init.lua, "
                f"or {services.choose_model}"
            )
        from uji.providers.auth import AuthError, find_key, missing_key_message

        signed_in = None
        try:
            key = find_key(models.auth_file, provider)
            if provider.oauth is not None:  # a subscription sign-in, refreshed by ready_model
                from uji.providers.auth import signed_in_session

                signed_in = signed_in_session(models.auth_file, provider.id, provider.oauth)
        except AuthError as e:
            raise TurnFailed(str(e)) from None
        if key is None and signed_in is None and provider.needs_key:
            raise TurnFailed(missing_key_message(provider))
        wire = provider.api_wire  # an `api` object with methods of its own
        if wire is None:
            try:  # a model may have its own wire (OpenAI's reasoning models: `responses`)
                wire = services.wires.get(provider.wire_for(models.model_id))
            except LookupError as e:
                raise TurnFailed(str(e)) from None
        model = provider.model(models.model_id)
        tools = [t.schema() for t in services.gate.offered()]
        from uji.providers.efforts import for_request

        request = WireRequest(
            model=models.model_id,
            system=system,
            messages=for_model(self.log.messages),
            tools=tools,
            provider={
                "id": provider.id,
                "base_url": models.base_url(provider),
                "compat": dict(provider.compat),
            },
            auth={"key": key, "oauth": signed_in},
            # The user's level, moved to the nearest one this model accepts.
            effort=for_request(models.effort, model, provider.default_efforts(models.model_id)),
            reasoning=bool(model and model.reasoning),
            max_output=(model.output if model and model.output else self.max_output),
            model_output=model.output if model and model.output else None,
            cache=services.context.cache,
            session=self.log.session_id,
            model_cache=model.cache if model else None,
            images=models.model_images(),
        )
        return request, wire, provider.idle or STALL_SECONDS

    def _hint(self) -> str | None:
        provider = self.services.models.provider()
        return provider.hint if provider else None


def _may_be_text_only(failure: Failure, request: WireRequest) -> bool:
    return (
        failure.kind == "http"
        and failure.status in TEXT_ONLY_STATUSES
        and request.images is None
        and any(m.get("images") for m in request.messages)
    )
