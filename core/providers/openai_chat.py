"""``openai:<model>`` – OpenAI Chat Completions, streamed, through the official ``openai`` SDK.

With a ``base_url`` the same code talks to any OpenAI-compatible server: vLLM
(``http://host:8000/v1``), llama.cpp ``llama-server`` (``http://host:8080/v1``), Ollama
(``http://host:11434/v1``). Named servers from ``Settings.endpoints`` use this class too.

Parameter mapping: ``max_tokens`` is sent as ``max_completion_tokens`` to api.openai.com (its
reasoning models reject ``max_tokens``) and as ``max_tokens`` to a ``base_url`` server (what vLLM,
llama.cpp and Ollama all accept). ``reasoning_effort``, ``seed`` and ``temperature`` are sent only
when set. The SDK client is built with ``max_retries=0``: the engine is the one retry layer
(:mod:`core.providers.retry`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

import httpx
import openai

from core.plan import Message
from core.providers import pricing
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.clients import LoopClients
from core.providers.events import Error, StreamEvent, Usage
from core.providers.failures import classify, openai_family
from core.providers.redact import remember_key_env
from core.providers.streaming import StreamState, check_model_stream, guarded, openai_chunk_events
from core.providers.tls import ssl_context

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.providers.server_window import ServerWindow
    from core.settings import Settings

#: Key placeholder for keyless local servers (the SDK refuses an empty key).
NO_KEY = "not-needed"


class OpenAIChatProvider:
    capabilities = CALLS_A_MODEL

    def __init__(
        self,
        *,
        name: str = "openai",
        base_url: str | None = None,
        api_key_env: str | None = "OPENAI_API_KEY",
        read_timeout_s: float = 60.0,
        connect_timeout_s: float = 10.0,
    ):
        self.name = name
        self.base_url = base_url
        self.api_key_env = api_key_env
        self.read_timeout_s = read_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self._family = openai_family(key_env=api_key_env or "")
        remember_key_env(api_key_env)  # its value is redacted from every error and stored text

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> OpenAIChatProvider:
        return cls()

    # ---- Provider protocol --------------------------------------------------------------------
    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        base_url = spec.base_url or self.base_url
        if base_url is None and self.name == "openai":
            base_url = os.environ.get("OPENAI_BASE_URL") or None  # the SDK's own convention
        label = f"{self.name} at {base_url}" if base_url else self.name
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if not key and not base_url:
            yield Error(
                f"{self.api_key_env or 'an API key'} is not set: export it, or give this model a base_url "
                "for a local OpenAI-compatible server (vLLM, llama.cpp, Ollama)",
                kind="config",
                before_first_byte=True,
            )
            return
        producer = self._produce(spec, messages, base_url, key or NO_KEY)
        async for event in guarded(producer, timeout_s=spec.params.timeout_s, label=label, classify=self._classify):
            yield event

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        if spec.base_url or self.base_url or self.name != "openai":
            return None  # a self-hosted or third-party server: no known price
        return pricing.usage_cost("openai", spec.model, usage, batch=batch)

    def context_window(self, spec: ModelSpec) -> int | None:
        base_url = spec.base_url or self.base_url
        if base_url:  # what the server said, if it was asked (discover_context_window)
            from core.providers.server_window import remembered

            answer = remembered(base_url, spec.model)
            return answer.window if answer else None
        if self.name != "openai":
            return None
        return pricing.context_window("openai", spec.model)

    async def discover_context_window(self, spec: ModelSpec) -> ServerWindow | None:
        """Ask a self-hosted server (a ``base_url``: vLLM, llama.cpp, Ollama) for the model's
        window, once per process; None for api.openai.com, whose windows are in the price table."""
        base_url = spec.base_url or self.base_url
        if not base_url:
            return None
        from core.providers.server_window import server_window

        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        return await server_window(base_url, spec.model, api_key=key or None)

    # ---- internals ----------------------------------------------------------------------------
    def _classify(self, exc: BaseException, state: StreamState) -> Error:
        return classify(exc, state, self._family)

    def request_kwargs(self, spec: ModelSpec, messages: list[Message], hosted: bool) -> dict:
        p = spec.params
        kwargs: dict = {
            "model": spec.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if p.temperature is not None:
            kwargs["temperature"] = p.temperature
        if p.max_tokens is not None:
            kwargs["max_completion_tokens" if hosted else "max_tokens"] = p.max_tokens
        if p.reasoning_effort:
            kwargs["reasoning_effort"] = p.reasoning_effort
        if p.seed is not None:
            kwargs["seed"] = p.seed
        return kwargs

    async def _produce(self, spec: ModelSpec, messages: list[Message], base_url: str | None, key: str):
        timeout = httpx.Timeout(
            spec.params.timeout_s,
            connect=self.connect_timeout_s,
            read=min(self.read_timeout_s, spec.params.timeout_s),
        )
        client = _CLIENTS.get(base_url, key)
        stream = await client.chat.completions.create(
            **self.request_kwargs(spec, messages, hosted=base_url is None), timeout=timeout
        )
        async with stream:
            check_model_stream(stream.response.status_code, stream.response.headers)
            async for event in openai_chunk_events(stream):
                yield event


def _make_client(base_url: str | None, key: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key=key,
        base_url=base_url,
        max_retries=0,  # the engine retries (core.providers.retry)
        http_client=openai.DefaultAsyncHttpxClient(verify=ssl_context()),
    )


#: Shared by every OpenAIChatProvider: the registry makes a provider per call.
_CLIENTS = LoopClients(_make_client)
