"""The provider registry and the model list."""

from __future__ import annotations

import importlib.util

import pytest

from core.providers import PROVIDERS, UnknownProvider, available_models, get_provider
from core.providers.base import Capabilities, Provider
from core.providers.recording import MemoryResponseCache
from core.settings import Endpoint, Settings


@pytest.mark.parametrize(
    "model_id, cls",
    [
        ("demo:generic", "DemoProvider"),
        ("replay:openai:gpt-4o", "ReplayProvider"),
        ("openai:gpt-4o-mini", "OpenAIChatProvider"),
        ("anthropic:claude-haiku-4-5", "AnthropicProvider"),
        ("litellm:bedrock/anthropic.claude-3", "LiteLLMProvider"),
    ],
)
def test_get_provider_by_prefix(model_id, cls):
    provider = get_provider(model_id, response_cache=MemoryResponseCache())
    assert type(provider).__name__ == cls
    assert isinstance(provider, Provider)


def test_endpoint_names_become_providers():
    settings = Settings(endpoints={"ollama": Endpoint(base_url="http://127.0.0.1:11434/v1")})
    provider = get_provider("ollama:llama3.2", settings)
    assert type(provider).__name__ == "OpenAIChatProvider" and provider.name == "ollama"
    assert provider.base_url == "http://127.0.0.1:11434/v1"
    with pytest.raises(UnknownProvider, match="ollama"):
        get_provider("nothere:model", settings)


def test_demo_pace_comes_from_settings():
    assert get_provider("demo:generic", Settings(demo_tokens_per_s=500)).tokens_per_s == 500


def test_without_keys_only_demo_models_are_offered():
    models = available_models(Settings())
    assert models and all(m.is_demo for m in models)
    assert {"demo:generic", "demo:retrieval", "demo:oracle"} <= {m.id for m in models}
    assert all("[demo]" in m.label for m in models)


def test_keys_and_endpoints_add_real_models(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    settings = Settings(
        models=["demo:generic", "vllm:qwen2.5-7b", "anthropic:claude-haiku-4-5", "litellm:ollama_chat/llama3"],
        endpoints={"vllm": Endpoint(base_url="http://127.0.0.1:8000/v1")},
    )
    by_id = {m.id: m for m in available_models(settings)}
    assert "openai:gpt-4o-mini" in by_id and "OPENAI_API_KEY" in by_id["openai:gpt-4o-mini"].reason
    assert "vllm" in by_id["vllm:qwen2.5-7b"].reason
    assert "litellm:ollama_chat/llama3" in by_id
    assert "anthropic:claude-haiku-4-5" not in by_id  # no ANTHROPIC_API_KEY
    assert not by_id["openai:gpt-4o-mini"].is_demo


def test_every_registered_provider_declares_its_capabilities():
    declared = {}
    for name, entry in PROVIDERS.items():
        module, _, attr = entry.target.partition(":")
        assert importlib.util.find_spec(module) is not None and attr, entry
        provider = get_provider(f"{name}:m", response_cache=MemoryResponseCache())
        assert isinstance(provider.capabilities, Capabilities) and entry.description
        declared[name] = provider.capabilities
    assert [n for n, c in declared.items() if c.accepts_hints] == ["demo"], "only demo models see gold facts"
    assert [n for n, c in declared.items() if c.is_replay] == ["replay"]
