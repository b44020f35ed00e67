"""``imported:<model>`` resolves (imported runs open and estimate) but never generates."""

from __future__ import annotations

import asyncio

from core.plan import Message
from core.providers import Error, ModelSpec, Usage, check_model_name, get_provider


def test_imported_models_resolve_and_refuse_to_stream():
    spec = ModelSpec(id="imported:mistral8x7b")
    assert check_model_name(spec.id) is None
    provider = get_provider(spec)
    assert provider.cost_usd(spec, Usage(10, 10)) is None and provider.context_window(spec) is None

    async def first():
        return [e async for e in provider.stream(spec, [Message(role="user", content="hi")])]

    (event,) = asyncio.run(first())
    assert isinstance(event, Error) and event.before_first_byte and "import-results" in event.message
