"""``openai-batch``: the OpenAI Batch API (a JSONL file of chat requests → one job → result files).

The requests' bodies are exactly what :class:`~core.providers.openai_chat.OpenAIChatProvider`
streams, without ``stream``. Works against api.openai.com and any OpenAI-compatible server that
implements ``/v1/files`` and ``/v1/batches``. Reads and polls are retried by the SDK (they are
idempotent); creating a file or a job is not (a retry could start a second, paid job).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Literal

import openai

from core.providers.base import ModelSpec
from core.providers.batch_api import BatchApiError, BatchRequest, BatchResult, JobState, ResultStatus, Via
from core.providers.failures import classify, openai_family
from core.providers.openai_chat import NO_KEY, OpenAIChatProvider
from core.providers.redact import redact, remember_key_env
from core.providers.streaming import StreamState, openai_usage
from core.providers.tls import ssl_context
from core.settings import Settings

ENDED = {"completed", "failed", "expired", "cancelled"}
ENDPOINT: Literal["/v1/chat/completions"] = "/v1/chat/completions"


class OpenAIBatch:
    via: Via = "openai-batch"

    def __init__(self, *, base_url: str | None, key_env: str | None, label: str):
        self.base_url = base_url
        self.key_env = key_env
        self.label = label
        remember_key_env(key_env)
        key = os.environ.get(key_env) if key_env else None
        if not key and not base_url:
            raise BatchApiError(f"{key_env or 'an API key'} is not set: export it to use the OpenAI Batch API")
        self._client = openai.AsyncOpenAI(
            api_key=key or NO_KEY,
            base_url=base_url,
            max_retries=3,
            http_client=openai.DefaultAsyncHttpxClient(verify=ssl_context()),
        )
        self._family = openai_family(key_env=key_env or "")
        self._chat = OpenAIChatProvider(base_url=base_url, api_key_env=key_env)

    @classmethod
    def for_model(cls, model: ModelSpec, settings: Settings | None) -> OpenAIBatch:
        endpoint = (settings.endpoints if settings else {}).get(model.provider)
        if endpoint is not None:
            base_url: str | None = model.base_url or endpoint.base_url
            key_env = endpoint.api_key_env
        else:
            base_url = model.base_url or os.environ.get("OPENAI_BASE_URL") or None
            key_env = "OPENAI_API_KEY"
        label = f"{model.provider} batch API at {base_url}" if base_url else "OpenAI Batch API"
        return cls(base_url=base_url, key_env=key_env, label=label)

    def line(self, model: ModelSpec, request: BatchRequest) -> dict:
        body = self._chat.request_kwargs(model, request.messages, hosted=self.base_url is None)
        body.pop("stream", None)
        body.pop("stream_options", None)
        return {"custom_id": request.custom_id, "method": "POST", "url": ENDPOINT, "body": body}

    async def submit(self, model: ModelSpec, requests: Sequence[BatchRequest], label: str) -> str:
        lines = "".join(json.dumps(self.line(r.model, r), ensure_ascii=False) + "\n" for r in requests)
        once = self._client.with_options(max_retries=0)
        try:
            upload = await once.files.create(file=("requests.jsonl", lines.encode()), purpose="batch")
            job = await once.batches.create(
                input_file_id=upload.id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"prefscope_batch": label[:512]},
            )
        except openai.OpenAIError as exc:
            raise self._error("submitting a job", exc) from None
        return job.id

    async def poll(self, job_id: str) -> JobState:
        try:
            job = await self._client.batches.retrieve(job_id)
        except openai.OpenAIError as exc:
            raise self._error(f"reading job {job_id}", exc) from None
        return self._state(job)

    async def cancel(self, job_id: str) -> JobState:
        try:
            job = await self._client.batches.cancel(job_id)
        except openai.OpenAIError as exc:
            raise self._error(f"cancelling job {job_id}", exc) from None
        return self._state(job)

    async def results(self, job_id: str) -> list[BatchResult]:
        try:
            job = await self._client.batches.retrieve(job_id)
            out: list[BatchResult] = []
            for file_id in (job.output_file_id, job.error_file_id):
                if file_id:
                    content = await self._client.files.content(file_id)
                    out += [_result(line) for line in content.text.splitlines() if line.strip()]
        except openai.OpenAIError as exc:
            raise self._error(f"fetching the results of job {job_id}", exc) from None
        return out

    def _state(self, job) -> JobState:
        counts = job.request_counts
        line = f"{counts.completed} completed, {counts.failed} failed of {counts.total}" if counts else ""
        error = None
        if job.status == "failed":
            errors = [e.message or e.code or "" for e in ((job.errors.data or []) if job.errors else [])]
            error = redact("; ".join(e for e in errors if e) or "the job failed without saying why")
        return JobState(job.id, job.status, job.status in ENDED, line, error)

    def _error(self, doing: str, exc: BaseException) -> BatchApiError:
        err = classify(exc, StreamState(label=self.label), self._family)
        return BatchApiError(redact(f"{doing}: {err.message}"), status=err.status)


def _result(raw: str) -> BatchResult:
    """One line of an output or error file (the same shape in both)."""
    try:
        line = json.loads(raw)
        custom_id = str(line["custom_id"])
    except (ValueError, KeyError, TypeError):
        return BatchResult("", "error", error=f"unreadable result line: {raw[:200]!r}")
    error = line.get("error")
    response = line.get("response") or {}
    if error:
        code = error.get("code") or ""
        status: ResultStatus = "expired" if code == "batch_expired" else "error"
        if code == "batch_cancelled":
            status = "cancelled"
        return BatchResult(custom_id, status, error=redact(f"{code}: {error.get('message') or ''}".strip(": ")))
    body = response.get("body") or {}
    if response.get("status_code") != 200:
        message = (body.get("error") or {}).get("message") or json.dumps(body)[:300]
        return BatchResult(custom_id, "error", error=redact(f"HTTP {response.get('status_code')}: {message}"))
    try:
        choice = body["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return BatchResult(custom_id, "error", error=f"a result without an answer: {json.dumps(body)[:300]}")
    usage = openai_usage(body["usage"]) if body.get("usage") else None
    return BatchResult(custom_id, "ok", text=text, usage=usage, finish_reason=choice.get("finish_reason"))
