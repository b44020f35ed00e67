"""``replay:<model id>`` or ``replay:<request hash>`` – a recorded response, with its pacing.

Chunks carry their offset from the start of the original call; replay sleeps the gaps between
them (divided by ``speed``), so TTFT and the rhythm of the stream come back as recorded.
``replay:openai:gpt-4o`` looks up what ``openai:gpt-4o`` answered to the same messages and params
(:func:`~core.providers.recording.request_hash`); ``replay:<64 hex>`` serves that record directly.
Records come from the ``ResponseCache`` port (storage's ``response_cache`` table). Free: cost 0.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING

from core.plan import Message
from core.ports import ResponseCache
from core.providers.base import Capabilities, ModelSpec
from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.providers.recording import request_hash

if TYPE_CHECKING:
    from core.settings import Settings

_HASH = re.compile(r"^[0-9a-f]{64}$")


class ReplayProvider:
    name = "replay"
    capabilities = Capabilities(is_replay=True)

    def __init__(
        self,
        cache: ResponseCache | None,
        *,
        speed: float = 1.0,
        sleep: Callable[[float], Awaitable] = asyncio.sleep,
    ):
        self.cache = cache
        #: 2.0 replays twice as fast; 0 or less replays without pauses.
        self.speed = speed
        self._sleep = sleep

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> ReplayProvider:
        return cls(response_cache)

    def lookup_key(self, spec: ModelSpec, messages: list[Message]) -> str:
        if _HASH.match(spec.model):
            return spec.model
        return request_hash(spec.model, messages, spec.params)

    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        if self.cache is None:
            yield Error(
                "replay needs a response cache: open prefscope with a database (or pass one to the provider registry)",
                kind="config",
                before_first_byte=True,
            )
            return
        key = self.lookup_key(spec, messages)
        record = self.cache.get(key)
        if record is None:
            original = spec.model if not _HASH.match(spec.model) else "the original model"
            yield Error(
                f"no recorded response for {original} with these messages and params (request {key[:12]}…). "
                f"Record one by running the same prompt with {original} while online — every finished "
                "response is stored in the response cache — then replay it.",
                kind="config",
                before_first_byte=True,
            )
            return
        previous = 0.0
        for offset, text in record.get("chunks") or [[0.0, record.get("text", "")]]:
            gap, previous = max(0.0, offset - previous), max(previous, offset)
            if self.speed > 0 and gap > 0:
                await self._sleep(gap / self.speed)
            yield Delta(text)
        usage = record.get("usage") or {}
        if usage:
            yield Usage(usage.get("input_tokens"), usage.get("output_tokens"))
        yield Done(record.get("finish_reason") or "stop")

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        return 0.0  # served from the local cache

    def context_window(self, spec: ModelSpec) -> int | None:
        return None
