"""What a provider is, and how a model is named and parameterised.

A model id is ``"<provider>:<model>"`` — ``openai:gpt-4o-mini``, ``anthropic:claude-sonnet-4-5``,
``litellm:bedrock/…``, ``demo:retrieval``, ``replay:<response id>``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from core.plan import Message
from core.providers.events import StreamEvent, Usage


class ModelParams(BaseModel):
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    seed: int | None = None
    #: Deadline for one whole call in seconds (read timeouts alone are per chunk).
    timeout_s: float = 300.0


class ModelSpec(BaseModel):
    id: str = Field(pattern=r"^[a-z_]+:.+$")
    params: ModelParams = Field(default_factory=ModelParams)
    #: OpenAI-compatible servers (vLLM, llama.cpp, Ollama) or a test server. Never a key.
    base_url: str | None = None

    @property
    def provider(self) -> str:
        return self.id.split(":", 1)[0]

    @property
    def model(self) -> str:
        return self.id.split(":", 1)[1]

    @property
    def is_demo(self) -> bool:
        return self.provider == "demo"


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the engine may assume about a provider; every provider declares its own."""

    #: Serves recorded responses: a cache hit, whose chunks are not recorded again.
    is_replay: bool = False
    #: ``stream`` takes the run's gold facts as ``hints=`` (demo models only; a real provider
    #: must never be sent the gold preference).
    accepts_hints: bool = False


#: A provider that calls a model: no hints, records what it streams.
CALLS_A_MODEL = Capabilities()


@runtime_checkable
class Provider(Protocol):
    """Streams one chat completion. Must never raise for API/transport failures: it yields Error.

    It does not retry: the engine (and :func:`core.providers.calls.collect`) retry before the first
    byte through :mod:`core.providers.retry`, so SDK clients are built with their retries off.
    """

    name: str
    capabilities: Capabilities

    def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]: ...

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        """Price of a call's usage (its cache reads and writes at the cache prices), or None when
        unknown (never 0 for unknown); ``batch``: at the provider's batch discount."""
        ...

    def context_window(self, spec: ModelSpec) -> int | None: ...
