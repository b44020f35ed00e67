"""``anthropic:<model>`` – the Messages API, streamed, through the official ``anthropic`` SDK.

``anthropic`` (~2.5 s to import) and its transport ``httpx2`` are imported only when this module
is. Mapping: system messages are joined into ``system=``; ``max_tokens`` is required by the API
(default 1024); anthropic 2.x has no ``temperature`` keyword, so it goes in ``extra_body``;
``reasoning_effort`` becomes ``output_config.effort`` (low/medium/high/xhigh/max, newer models
only); ``seed`` has no Anthropic equivalent and is ignored. ``base_url`` is the server root
without ``/v1`` (a trailing ``/v1`` is stripped, since the SDK adds it). Prompt caching: a
``cache_control`` breakpoint after the shared history prefix, as :mod:`core.providers.prompt_cache`
decides; the usage's cache reads and writes are added into ``input_tokens`` (which Anthropic
reports without them). The SDK client is built
with ``max_retries=0``: the engine is the one retry layer (:mod:`core.providers.retry`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

import anthropic
import httpx2

from core.plan import Message
from core.providers import pricing
from core.providers.base import CALLS_A_MODEL, ModelSpec
from core.providers.clients import LoopClients
from core.providers.events import Delta, Done, Error, StreamEvent, Usage
from core.providers.failures import Family, classify
from core.providers.prompt_cache import USES, CachePolicy
from core.providers.redact import remember_key_env
from core.providers.streaming import StreamState, check_model_stream, guarded
from core.providers.tls import ssl_context

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.settings import Settings

DEFAULT_MAX_TOKENS = 1024
NO_KEY = "not-needed"
EPHEMERAL = {"type": "ephemeral"}


def root_url(base_url: str | None) -> str | None:
    if not base_url:
        return None
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


class AnthropicProvider:
    capabilities = CALLS_A_MODEL
    #: A trailing assistant message is continued (true prefill): the engine appends a step's prefill.
    supports_prefill = True

    def __init__(
        self,
        *,
        name: str = "anthropic",
        api_key_env: str = "ANTHROPIC_API_KEY",
        read_timeout_s: float = 60.0,
        connect_timeout_s: float = 10.0,
        default_max_tokens: int = DEFAULT_MAX_TOKENS,
        prompt_cache: CachePolicy = "auto",
    ):
        self.name = name
        self.api_key_env = api_key_env
        self.read_timeout_s = read_timeout_s
        self.connect_timeout_s = connect_timeout_s
        self.default_max_tokens = default_max_tokens
        self.prompt_cache: CachePolicy = prompt_cache
        remember_key_env(api_key_env)  # its value is redacted from every error and stored text
        #: The SDK's exception classes (the batch backend words its errors with them too).
        self.family = Family(
            status_error=(anthropic.APIStatusError,),
            timeout_error=(anthropic.APITimeoutError,),
            connection_error=(anthropic.APIConnectionError,),
            api_error=(anthropic.APIError,),
            read_timeout=(httpx2.ReadTimeout,),
            transport_error=(httpx2.TransportError,),
            connect_error=(httpx2.ConnectError, httpx2.ConnectTimeout),
            key_env=api_key_env,
        )

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> AnthropicProvider:
        return cls(prompt_cache=settings.prompt_cache if settings else "auto")

    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        base_url = root_url(spec.base_url or os.environ.get("ANTHROPIC_BASE_URL"))
        label = f"{self.name} at {base_url}" if base_url else self.name
        key = os.environ.get(self.api_key_env)
        if not key and not base_url:
            yield Error(
                f"{self.api_key_env} is not set: export it to use {spec.id}", kind="config", before_first_byte=True
            )
            return
        producer = self._produce(spec, messages, base_url, key or NO_KEY)
        async for event in guarded(producer, timeout_s=spec.params.timeout_s, label=label, classify=self._classify):
            yield event

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        if spec.base_url:
            return None
        return pricing.usage_cost("anthropic", spec.model, usage, batch=batch)

    def context_window(self, spec: ModelSpec) -> int | None:
        return None if spec.base_url else pricing.context_window("anthropic", spec.model)

    def _classify(self, exc: BaseException, state: StreamState) -> Error:
        return classify(exc, state, self.family)

    def request_kwargs(self, spec: ModelSpec, messages: list[Message], *, stream: bool = True) -> dict:
        """The Messages API parameters (a batch request's ``params`` with ``stream=False``), with a
        prompt-cache breakpoint after the shared history prefix when the cache policy asks for one."""
        p = spec.params
        cut = USES.breakpoint(self.prompt_cache, spec.id, messages)
        system_parts = [m.content for m in messages if m.role == "system"]
        turns: list[dict] = []
        for i, m in enumerate(messages):
            if m.role == "system":
                continue
            content: str | list[dict] = m.content
            if i == cut:
                content = [{"type": "text", "text": m.content, "cache_control": EPHEMERAL}]
            turns.append({"role": m.role, "content": content})
        kwargs: dict = {
            "model": spec.model,
            "max_tokens": p.max_tokens or self.default_max_tokens,
            "messages": turns,
        }
        if stream:
            kwargs["stream"] = True
        if system_parts:
            system = "\n\n".join(system_parts)
            cut_in_system = cut is not None and messages[cut].role == "system"
            # The cut is the last message before the question: a system cut ends the system text.
            kwargs["system"] = (
                [{"type": "text", "text": system, "cache_control": EPHEMERAL}] if cut_in_system else system
            )
        if p.reasoning_effort:
            kwargs["output_config"] = {"effort": p.reasoning_effort}
        if p.temperature is not None:
            kwargs["extra_body"] = {"temperature": p.temperature}
        return kwargs

    async def _produce(self, spec: ModelSpec, messages: list[Message], base_url: str | None, key: str):
        timeout = anthropic.Timeout(
            spec.params.timeout_s,
            connect=self.connect_timeout_s,
            read=min(self.read_timeout_s, spec.params.timeout_s),
        )
        client = _CLIENTS.get(base_url, key)
        stream = await client.messages.create(**self.request_kwargs(spec, messages), timeout=timeout)
        started = None
        output_tokens = None
        finish = None
        stopped = False  # message_stop seen: the server finished the message
        async with stream:
            check_model_stream(stream.response.status_code, stream.response.headers)
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    started = event.message.usage
                elif kind == "content_block_delta":
                    if event.delta.type == "text_delta" and event.delta.text:
                        yield Delta(event.delta.text)
                elif kind == "message_delta":
                    if event.usage is not None and event.usage.output_tokens is not None:
                        output_tokens = event.usage.output_tokens
                    finish = event.delta.stop_reason or finish
                elif kind == "message_stop":
                    stopped = True
        if started is not None:
            yield anthropic_usage(started, output_tokens)
        yield Done(finish, complete=stopped)


def anthropic_usage(usage, output_tokens: int | None = None) -> Usage:
    """Usage from a Messages ``usage`` (a stream's message_start, or a batch result's message).

    Anthropic reports cache reads and writes apart from ``input_tokens``; they are added back so
    ``input_tokens`` counts every prompt token, as every other provider's does."""
    read = getattr(usage, "cache_read_input_tokens", None)
    write = getattr(usage, "cache_creation_input_tokens", None)
    plain = usage.input_tokens
    total = None if plain is None else plain + (read or 0) + (write or 0)
    out = usage.output_tokens if output_tokens is None else output_tokens
    return Usage(total, out, cache_read_tokens=read, cache_write_tokens=write)


def _make_client(base_url: str | None, key: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=key,
        base_url=base_url,
        max_retries=0,  # the engine retries (core.providers.retry)
        http_client=anthropic.DefaultAsyncHttpxClient(verify=ssl_context()),
    )


#: Shared by every AnthropicMessagesProvider: the registry makes a provider per call.
_CLIENTS = LoopClients(_make_client)
