"""openai: specifics beyond the fault matrix – what is sent, keys, endpoints, prices."""

from __future__ import annotations

from core.providers import get_provider
from core.providers.base import ModelParams, ModelSpec
from core.providers.events import Done, Error, Usage
from core.providers.openai_chat import OpenAIChatProvider
from core.settings import Endpoint, Settings
from tests.core.providers.conftest import MESSAGES, collect, text_of
from tests.servers.script import Reply


async def test_request_asks_for_usage_and_maps_params_for_a_base_url_server(openai_server):
    spec = ModelSpec(
        id="openai:qwen2.5-7b",
        base_url=openai_server.base_url,
        params=ModelParams(temperature=0.2, max_tokens=64, seed=7, reasoning_effort="low"),
    )
    events = await collect(OpenAIChatProvider(), spec)
    assert isinstance(events[-1], Done)
    body = openai_server.requests[0].body
    assert openai_server.requests[0].path == "/v1/chat/completions"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "qwen2.5-7b"
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]
    assert (body["temperature"], body["max_tokens"], body["seed"], body["reasoning_effort"]) == (0.2, 64, 7, "low")
    assert "max_completion_tokens" not in body


async def test_unset_params_are_not_sent(openai_server):
    await collect(OpenAIChatProvider(), ModelSpec(id="openai:m", base_url=openai_server.base_url))
    body = openai_server.requests[0].body
    assert not {"temperature", "max_tokens", "max_completion_tokens", "seed", "reasoning_effort"} & set(body)


def test_hosted_openai_gets_max_completion_tokens():
    kwargs = OpenAIChatProvider().request_kwargs(
        ModelSpec(id="openai:o4-mini", params=ModelParams(max_tokens=100)), MESSAGES, hosted=True
    )
    assert kwargs["max_completion_tokens"] == 100 and "max_tokens" not in kwargs


async def test_keyless_local_server_gets_a_placeholder_bearer(openai_server):
    events = await collect(OpenAIChatProvider(), ModelSpec(id="openai:m", base_url=openai_server.base_url))
    assert isinstance(events[-1], Done)
    assert openai_server.requests[0].auth == "bearer"


async def test_no_key_and_no_base_url_is_a_config_error_without_network():
    events = await collect(OpenAIChatProvider(), ModelSpec(id="openai:gpt-4o-mini"))
    assert len(events) == 1 and isinstance(events[0], Error)
    assert events[0].kind == "config" and "OPENAI_API_KEY" in events[0].message


async def test_named_endpoint_routes_to_its_server_with_its_key(openai_server, monkeypatch):
    monkeypatch.setenv("VLLM_KEY", "token-abc")
    settings = Settings(endpoints={"vllm": Endpoint(base_url=openai_server.base_url, api_key_env="VLLM_KEY")})
    provider = get_provider("vllm:meta-llama/Llama-3.1-8B-Instruct", settings)
    openai_server.script(Reply.text("local reply"))
    events = await collect(provider, ModelSpec(id="vllm:meta-llama/Llama-3.1-8B-Instruct"))
    assert text_of(events) == "local reply"
    assert openai_server.requests[0].body["model"] == "meta-llama/Llama-3.1-8B-Instruct"
    assert openai_server.requests[0].auth == "bearer"
    assert provider.cost_usd(ModelSpec(id="vllm:x"), Usage(10, 10)) is None  # self-hosted: no list price


def test_prices_come_from_the_bundled_table():
    p = OpenAIChatProvider()
    cost = p.cost_usd(ModelSpec(id="openai:gpt-4o-mini"), Usage(1_000_000, 1_000_000))
    assert cost is not None and cost > 0
    assert p.cost_usd(ModelSpec(id="openai:gpt-4o-mini-2024-07-18"), Usage(1_000_000, 1_000_000)) == cost
    assert p.cost_usd(ModelSpec(id="openai:some-future-model"), Usage(10, 10)) is None
    assert p.cost_usd(ModelSpec(id="openai:gpt-4o-mini"), Usage(None, 10)) is None
    assert p.context_window(ModelSpec(id="openai:gpt-4o")) == 128000
    assert p.context_window(ModelSpec(id="openai:gpt-4o", base_url="http://127.0.0.1:1/v1")) is None


async def test_openai_base_url_env_is_honoured(openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    events = await collect(OpenAIChatProvider(), ModelSpec(id="openai:m"))
    assert isinstance(events[-1], Done) and len(openai_server.requests) == 1
