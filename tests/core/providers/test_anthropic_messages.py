"""anthropic: specifics beyond the fault matrix – request shape, base_url, prices."""

from __future__ import annotations

from core.plan import Message
from core.providers.anthropic_messages import AnthropicProvider, root_url
from core.providers.base import ModelParams, ModelSpec
from core.providers.events import Done, Error, Usage
from tests.core.providers.conftest import collect, text_of
from tests.servers.script import Reply


async def test_request_shape(anthropic_server):
    msgs = [
        Message(role="system", content="You are terse."),
        Message(role="system", content="Use British spelling."),
        Message(role="user", content="Hi"),
        Message(role="assistant", content="Hello."),
        Message(role="user", content="Colour of the sky?"),
    ]
    spec = ModelSpec(
        id="anthropic:claude-sonnet-4-6",
        base_url=anthropic_server.base_url,
        params=ModelParams(temperature=0.0, reasoning_effort="low", seed=3),
    )
    events = await collect(AnthropicProvider(), spec, msgs)
    assert isinstance(events[-1], Done) and events[-1].finish_reason == "end_turn"
    req = anthropic_server.requests[0]
    assert req.path == "/v1/messages"
    body = req.body
    assert body["system"] == "You are terse.\n\nUse British spelling."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["max_tokens"] == 1024  # required by the API; our default
    assert body["temperature"] == 0.0  # sent through extra_body (anthropic 2.x has no kwarg)
    assert body["output_config"] == {"effort": "low"}
    assert body["stream"] is True
    assert "seed" not in body


async def test_usage_comes_from_message_start_and_message_delta(anthropic_server):
    anthropic_server.script(Reply.text("Blue, mostly.", usage=(42, 6)))
    spec = ModelSpec(id="anthropic:claude-x", base_url=anthropic_server.base_url + "/v1")  # /v1 is tolerated
    events = await collect(AnthropicProvider(), spec)
    assert text_of(events) == "Blue, mostly."
    usage = next(e for e in events if isinstance(e, Usage))
    assert (usage.input_tokens, usage.output_tokens) == (42, 6)
    assert anthropic_server.requests[0].path == "/v1/messages"


def test_root_url_strips_v1():
    assert root_url("http://h:1/v1/") == "http://h:1"
    assert root_url("http://h:1") == "http://h:1"
    assert root_url(None) is None


async def test_missing_key_is_a_config_error():
    events = await collect(AnthropicProvider(), ModelSpec(id="anthropic:claude-sonnet-4-5"))
    assert isinstance(events[0], Error) and events[0].kind == "config" and "ANTHROPIC_API_KEY" in events[0].message


def test_prices():
    p = AnthropicProvider()
    assert p.cost_usd(ModelSpec(id="anthropic:claude-sonnet-4-5"), Usage(1_000_000, 0)) == 3.0
    assert p.cost_usd(ModelSpec(id="anthropic:claude-sonnet-4-5-20250929"), Usage(0, 1_000_000)) == 15.0
    assert p.cost_usd(ModelSpec(id="anthropic:claude-unknown"), Usage(1, 1)) is None
    assert p.context_window(ModelSpec(id="anthropic:claude-haiku-4-5")) == 200000
