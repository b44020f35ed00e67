"""The four real SDK paths under test, each paired with the protocol server it talks to."""

from __future__ import annotations

from dataclasses import dataclass

from core.providers.base import ModelParams, ModelSpec


@dataclass(frozen=True)
class SdkPath:
    name: str
    protocol: str  # "openai" | "anthropic"
    model_id: str

    def provider(self, **kw):
        if self.name == "openai":
            from core.providers.openai_chat import OpenAIChatProvider

            return OpenAIChatProvider(**kw)
        if self.name == "anthropic":
            from core.providers.anthropic_messages import AnthropicProvider

            return AnthropicProvider(**kw)
        from core.providers.litellm_provider import LiteLLMProvider

        return LiteLLMProvider(**kw)

    def spec(self, server, **params) -> ModelSpec:
        return ModelSpec(id=self.model_id, base_url=server.base_url, params=ModelParams(**params))


PATHS = [
    SdkPath("openai", "openai", "openai:test-model"),
    SdkPath("anthropic", "anthropic", "anthropic:claude-test"),
    SdkPath("litellm-openai", "openai", "litellm:openai/test-model"),
    SdkPath("litellm-anthropic", "anthropic", "litellm:anthropic/claude-test"),
]
