"""The ``complete`` callable the judge commands hand to judges: one whole call through the
provider layer (``core.providers.get_provider`` + ``core.providers.calls.collect``), with the model's
deadline, and any provider exception turned into a failed Completion (never a crash)."""

from __future__ import annotations

import asyncio

from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.calls import Completion, collect


def make_complete(settings, *, per_provider: int = 4):
    from core.providers import get_provider

    providers: dict[str, object] = {}
    limits: dict[str, asyncio.Semaphore] = {}

    async def complete(spec: ModelSpec, messages: list[Message]) -> Completion:
        try:
            provider = providers.get(spec.provider)
            if provider is None:
                provider = providers[spec.provider] = get_provider(spec, settings)
            limit = limits.setdefault(spec.provider, asyncio.Semaphore(per_provider))
            async with limit, asyncio.timeout(spec.params.timeout_s):
                return await collect(provider, spec, messages)
        except TimeoutError:
            return Completion("", error=f"no answer from {spec.id} within {spec.params.timeout_s:g} s")
        except Exception as exc:  # unknown provider, SDK bug: recorded on the judgment, not raised
            return Completion("", error=f"{type(exc).__name__}: {exc}")

    return complete
