"""``litellm:<litellm model string>`` – anything litellm routes: ``openai/…``, ``anthropic/…``,
``hosted_vllm/…``, ``ollama_chat/…``, Bedrock, Vertex, Together …

litellm takes 5–7 s to import, so it is imported on first use, in a worker thread (the event loop
and the other panes keep running), with its offline switches set first (providers.md).

Keys come from whatever env vars litellm reads for the route. With a ``base_url`` (litellm's
``api_base``; for ``anthropic/…`` the root WITHOUT ``/v1``) and no key for the route, a placeholder
key is sent. Unsupported params for a route are dropped (``drop_params``), e.g. ``seed`` for
Anthropic. litellm's own retries are off (``max_retries=0`` for its openai route, ``num_retries=0``
for its retry wrapper): the engine is the one retry layer (:mod:`core.providers.retry`).

The module-level helpers (params, stream conversion, failure classification, prices, windows)
are shared with :mod:`core.providers.router_provider`, which sends the same requests through a
litellm Router.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
from collections.abc import AsyncGenerator, Iterable
from typing import TYPE_CHECKING

from core.plan import Message
from core.providers.base import CALLS_A_MODEL, ModelParams, ModelSpec
from core.providers.events import Error, StreamEvent, Usage
from core.providers.streaming import StreamState, check_model_stream, guarded, openai_chunk_events

if TYPE_CHECKING:
    from core.ports import ResponseCache
    from core.providers.failures import Family
    from core.settings import Settings

OFFLINE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION", "HF_HUB_OFFLINE": "1"}
#: The env var a route's key conventionally lives in; used to decide on a placeholder key.
ROUTE_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
NO_KEY = "not-needed"


def load_litellm():
    """Import litellm with its network-free settings (idempotent; slow the first time)."""
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def _causes(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


# ---- shared with the router provider ----------------------------------------------------------
def messages_payload(messages: list[Message]) -> list[dict]:
    return [{"role": m.role, "content": m.content} for m in messages]


def param_kwargs(p: ModelParams) -> dict:
    """The model params litellm takes as keyword arguments (only those that are set)."""
    kwargs: dict = {}
    if p.temperature is not None:
        kwargs["temperature"] = p.temperature
    if p.max_tokens is not None:
        kwargs["max_tokens"] = p.max_tokens
    if p.seed is not None:
        kwargs["seed"] = p.seed
    if p.reasoning_effort:
        kwargs["reasoning_effort"] = p.reasoning_effort
    return kwargs


def placeholder_key(model: str, base_url: str | None) -> str | None:
    """:data:`NO_KEY` for a route sent to its own ``base_url`` whose usual key env var is unset
    (a local server needs no key, but the SDK refuses to send none); otherwise None."""
    if not base_url:
        return None
    env = ROUTE_KEY_ENV.get(model.split("/", 1)[0])
    return NO_KEY if env and not os.environ.get(env) else None


async def response_events(response) -> AsyncGenerator[StreamEvent, None]:
    """Delta / Usage / Done from a litellm stream, closing it however the consumer stops."""
    try:
        # litellm keeps the HTTP headers; an HTML page would otherwise pass for an empty finished reply.
        http = getattr(getattr(response, "completion_stream", None), "response", None)
        check_model_stream(getattr(http, "status_code", None), getattr(response, "_response_headers", None))
        async for event in openai_chunk_events(response):
            yield event
    finally:
        close = getattr(response, "aclose", None)
        if close is not None:
            await close()


@functools.cache
def _family() -> Family:
    import httpx

    from core.providers.failures import openai_family

    return openai_family(key_env="", read_timeout=(httpx.TimeoutException,))


def classify_failure(exc: BaseException, state: StreamState) -> Error:
    """What a litellm (or litellm Router) call failed with, as an actionable Error."""
    import httpx
    import openai

    from core.providers.failures import classify, clean_message

    # litellm wraps transport failures in status errors (a refused connection becomes a 500,
    # a dropped stream a MidStreamFallbackError); the cause chain says what really happened.
    transport = (openai.APIConnectionError, httpx.TimeoutException, httpx.TransportError, json.JSONDecodeError)
    for cause in _causes(exc)[1:]:
        if isinstance(cause, transport):
            return classify(cause, state, _family())
    litellm = load_litellm()
    if isinstance(exc, litellm.exceptions.MidStreamFallbackError):
        original = getattr(exc, "original_exception", None) or exc
        detail = clean_message(str(getattr(original, "message", None) or original))
        return Error(
            f"{state.label} sent an error mid-stream {state.where()}: {detail}",
            kind="stream",
            before_first_byte=not state.streamed,
        )
    return classify(exc, state, _family())


#: Models that had no price before a litellm Router was built with them: the Router enters its
#: deployments' models into litellm's price map, an unknown one at price 0.
_UNPRICED: set[str] = set()


def remember_unpriced(models: Iterable[str]) -> None:
    """Call before building a Router with ``models``, so that they stay unpriced (n/a, never 0)."""
    _UNPRICED.update(m for m in models if model_cost(m, 1, 1) is None)


def model_cost(model: str, input_tokens: int | None, output_tokens: int | None) -> float | None:
    """litellm's list price of a call to ``model``; None when unknown (never 0 for unknown)."""
    if input_tokens is None or output_tokens is None or model in _UNPRICED:
        return None
    litellm = load_litellm()
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=input_tokens, completion_tokens=output_tokens
        )
    except Exception:  # noqa: BLE001 - litellm raises several types for "not in the cost map"
        return None
    return float(prompt_cost + completion_cost)


def model_window(model: str) -> int | None:
    """``model``'s context window in litellm's map, or None when it is not there."""
    litellm = load_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # noqa: BLE001 - unknown model
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if window else None


# ---- the provider -------------------------------------------------------------------------------
class LiteLLMProvider:
    name = "litellm"
    capabilities = CALLS_A_MODEL

    def __init__(self, *, read_timeout_s: float = 60.0, drop_params: bool = True):
        self.read_timeout_s = read_timeout_s
        self.drop_params = drop_params

    @classmethod
    def from_settings(cls, settings: Settings | None, response_cache: ResponseCache | None) -> LiteLLMProvider:
        return cls()

    async def stream(self, spec: ModelSpec, messages: list[Message]) -> AsyncGenerator[StreamEvent, None]:
        try:
            litellm = await asyncio.to_thread(load_litellm)
        except ImportError as exc:
            yield Error(
                f"litellm is not importable ({exc}); reinstall prefscope", kind="config", before_first_byte=True
            )
            return
        label = f"litellm {spec.model}" + (f" at {spec.base_url}" if spec.base_url else "")
        producer = self._produce(litellm, spec, messages)
        async for event in guarded(producer, timeout_s=spec.params.timeout_s, label=label, classify=classify_failure):
            yield event

    def cost_usd(self, spec: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        """litellm's list price, every prompt token at the input price (no cache or batch discounts)."""
        if spec.base_url:
            return None  # a self-hosted server has no list price
        return model_cost(spec.model, usage.input_tokens, usage.output_tokens)

    def context_window(self, spec: ModelSpec) -> int | None:
        return model_window(spec.model)

    # ---- internals ----------------------------------------------------------------------------
    def request_kwargs(self, spec: ModelSpec, messages: list[Message]) -> dict:
        kwargs: dict = {
            "model": spec.model,
            "messages": messages_payload(messages),
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": min(self.read_timeout_s, spec.params.timeout_s),
            "max_retries": 0,  # the engine retries (core.providers.retry)
            "num_retries": 0,
            "drop_params": self.drop_params,
        }
        if spec.base_url:
            kwargs["api_base"] = spec.base_url
            key = placeholder_key(spec.model, spec.base_url)
            if key:
                kwargs["api_key"] = key
        return kwargs | param_kwargs(spec.params)

    async def _produce(self, litellm, spec: ModelSpec, messages: list[Message]):
        response = await litellm.acompletion(**self.request_kwargs(spec, messages))
        async for event in response_events(response):
            yield event
