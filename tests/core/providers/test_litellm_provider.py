"""litellm: routes, param dropping, litellm's own price map."""

from __future__ import annotations

from core.providers.base import ModelParams, ModelSpec
from core.providers.events import Done, Usage
from core.providers.litellm_provider import LiteLLMProvider
from tests.core.providers.conftest import collect, text_of
from tests.servers.script import Reply


async def test_openai_route_sends_stream_options_to_api_base(openai_server):
    spec = ModelSpec(
        id="litellm:openai/my-model",
        base_url=openai_server.base_url,
        params=ModelParams(max_tokens=32, temperature=0.5),
    )
    events = await collect(LiteLLMProvider(), spec)
    assert isinstance(events[-1], Done)
    body = openai_server.requests[0].body
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == "my-model" and body["max_tokens"] == 32 and body["temperature"] == 0.5


async def test_anthropic_route_uses_root_url_and_drops_unsupported_params(anthropic_server):
    anthropic_server.script(Reply.text("route ok"))
    spec = ModelSpec(
        id="litellm:anthropic/claude-x", base_url=anthropic_server.base_url, params=ModelParams(seed=11, max_tokens=50)
    )
    events = await collect(LiteLLMProvider(), spec)
    assert text_of(events) == "route ok"
    req = anthropic_server.requests[0]
    assert req.path == "/v1/messages" and req.auth == "x-api-key"
    assert "seed" not in req.body and req.body["max_tokens"] == 50


def test_costs_and_windows_come_from_litellms_map():
    p = LiteLLMProvider()
    known = p.cost_usd(ModelSpec(id="litellm:anthropic/claude-sonnet-4-5"), Usage(1000, 100))
    assert known is not None and abs(known - (1000 * 3 + 100 * 15) / 1e6) < 1e-9
    assert p.cost_usd(ModelSpec(id="litellm:openai/not-a-real-model"), Usage(1000, 100)) is None
    assert p.cost_usd(ModelSpec(id="litellm:openai/gpt-4o", base_url="http://127.0.0.1:1/v1"), Usage(10, 10)) is None
    assert p.context_window(ModelSpec(id="litellm:anthropic/claude-sonnet-4-5")) == 200000
    assert p.context_window(ModelSpec(id="litellm:openai/not-a-real-model")) is None
