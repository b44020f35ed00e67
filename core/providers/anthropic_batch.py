"""``anthropic-batch``: Anthropic's Message Batches (many Messages requests → one job → JSONL results).

Each request's ``params`` are exactly what :class:`~core.providers.anthropic_messages.AnthropicProvider`
streams, without ``stream`` — its prompt-cache breakpoint included (a batch announces its
prompts first, so repeated history prefixes are marked from the first request). Reads and polls
are retried by the SDK; creating a job is not (a retry could start a second, paid job).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import anthropic

from core.providers.anthropic_messages import NO_KEY, AnthropicProvider, anthropic_usage, root_url
from core.providers.base import ModelSpec
from core.providers.batch_api import BatchApiError, BatchRequest, BatchResult, JobState, Via
from core.providers.failures import classify
from core.providers.redact import redact
from core.providers.streaming import StreamState
from core.providers.tls import ssl_context
from core.settings import Settings

KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicBatch:
    via: Via = "anthropic-batch"

    def __init__(self, *, base_url: str | None, messages: AnthropicProvider):
        self.base_url = base_url
        self.label = f"anthropic batch API at {base_url}" if base_url else "Anthropic Message Batches"
        self._messages = messages
        key = os.environ.get(KEY_ENV)
        if not key and not base_url:
            raise BatchApiError(f"{KEY_ENV} is not set: export it to use Anthropic's Message Batches")
        self._client = anthropic.AsyncAnthropic(
            api_key=key or NO_KEY,
            base_url=base_url,
            max_retries=3,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=ssl_context()),
        )

    @classmethod
    def for_model(cls, model: ModelSpec, settings: Settings | None) -> AnthropicBatch:
        base_url = root_url(model.base_url or os.environ.get("ANTHROPIC_BASE_URL"))
        return cls(base_url=base_url, messages=AnthropicProvider.from_settings(settings, None))

    def params(self, model: ModelSpec, request: BatchRequest) -> dict:
        params = self._messages.request_kwargs(model, request.messages, stream=False)
        extra = params.pop("extra_body", None) or {}
        return {**params, **extra}  # a batch request's params carry temperature directly

    async def submit(self, model: ModelSpec, requests: Sequence[BatchRequest], label: str) -> str:
        body = [{"custom_id": r.custom_id, "params": self.params(r.model, r)} for r in requests]
        try:
            job = await self._client.with_options(max_retries=0).messages.batches.create(requests=body)  # type: ignore[arg-type]
        except anthropic.AnthropicError as exc:
            raise self._error("submitting a job", exc) from None
        return job.id

    async def poll(self, job_id: str) -> JobState:
        try:
            job = await self._client.messages.batches.retrieve(job_id)
        except anthropic.AnthropicError as exc:
            raise self._error(f"reading job {job_id}", exc) from None
        return _state(job)

    async def cancel(self, job_id: str) -> JobState:
        try:
            job = await self._client.messages.batches.cancel(job_id)
        except anthropic.AnthropicError as exc:
            raise self._error(f"cancelling job {job_id}", exc) from None
        return _state(job)

    async def results(self, job_id: str) -> list[BatchResult]:
        out: list[BatchResult] = []
        try:
            async for item in await self._client.messages.batches.results(job_id):
                out.append(_result(item))
        except anthropic.AnthropicError as exc:
            raise self._error(f"fetching the results of job {job_id}", exc) from None
        return out

    def _error(self, doing: str, exc: BaseException) -> BatchApiError:
        state = StreamState(label=self.label)
        err = classify(exc, state, self._messages.family)
        return BatchApiError(redact(f"{doing}: {err.message}"), status=err.status)


def _state(job) -> JobState:
    c = job.request_counts
    parts = [(c.succeeded, "succeeded"), (c.errored, "errored"), (c.canceled, "canceled"), (c.expired, "expired")]
    done = ", ".join(f"{n} {word}" for n, word in parts if n)
    line = "; ".join(x for x in (done, f"{c.processing} processing" if c.processing else "") if x)
    return JobState(job.id, job.processing_status, job.processing_status == "ended", line)


def _result(item) -> BatchResult:
    result = item.result
    kind = result.type
    if kind == "succeeded":
        message = result.message
        text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
        return BatchResult(
            item.custom_id, "ok", text=text, usage=anthropic_usage(message.usage), finish_reason=message.stop_reason
        )
    if kind == "errored":
        err = result.error.error
        return BatchResult(item.custom_id, "error", error=redact(f"{err.type}: {err.message}"))
    if kind == "expired":
        return BatchResult(item.custom_id, "expired", error="the job's 24 h window ended before this request ran")
    return BatchResult(item.custom_id, "cancelled", error="the job was cancelled before this request ran")
