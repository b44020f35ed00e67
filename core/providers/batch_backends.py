"""Which batch API backend sends a model's requests (:mod:`core.providers.batch_api`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.providers.base import ModelSpec
from core.providers.batch_api import BatchBackend, Via

if TYPE_CHECKING:
    from core.settings import Settings


def serves(via: Via, model: ModelSpec, settings: Settings | None) -> str | None:
    """Why ``model`` cannot go through ``via``, or None when it can."""
    endpoints = settings.endpoints if settings else {}
    if via == "openai-batch":
        if model.provider == "openai" or model.provider in endpoints:
            return None
        return f"{model.id}: --via openai-batch takes openai:… models or an OpenAI-compatible endpoint's"
    if model.provider == "anthropic":
        return None
    return f"{model.id}: --via anthropic-batch takes anthropic:… models"


def backend(via: Via, model: ModelSpec, settings: Settings | None) -> BatchBackend:
    """The backend that sends ``model``'s requests (imports its SDK now)."""
    if via == "openai-batch":
        from core.providers.openai_batch import OpenAIBatch

        return OpenAIBatch.for_model(model, settings)
    from core.providers.anthropic_batch import AnthropicBatch

    return AnthropicBatch.for_model(model, settings)
