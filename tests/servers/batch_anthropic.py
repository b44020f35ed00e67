"""Anthropic Message Batches on the loopback Anthropic server, as the real API shapes them.

Routes, besides streaming ``POST /v1/messages``: ``POST /v1/messages/batches``,
``GET /v1/messages/batches``, ``GET /v1/messages/batches/{id}``, ``GET …/{id}/results`` (JSONL),
``POST …/{id}/cancel``, ``DELETE …/{id}``.

A batch is ``in_progress`` from creation (see :mod:`tests.servers.batch_jobs` for how polls move
it), ``canceling`` after a cancel, then ``ended``. As the real API, ``request_counts`` shows every
request as ``processing`` until the batch ends, and ``results_url`` is set only then. Bad
``requests`` (empty, a bad or duplicate ``custom_id``, no ``params``) are refused at creation with
a 400; a request whose params lack ``model`` / ``max_tokens`` / ``messages`` ends ``errored``.
The SDK's ``messages.batches.results(id)`` retrieves the batch first: that GET counts as a poll.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

from aiohttp import web

from tests.servers.anthropic_sse import _STOP, AnthropicEncoder, AnthropicServer, anthropic_usage
from tests.servers.batch_jobs import BatchItem, BatchJob, BatchJobs, Responder, echo_reply, new_id
from tests.servers.script import Reply

_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_REQUIRED = ("model", "max_tokens", "messages")


def message(reply: Reply, params: dict) -> dict:
    """The full ``Message`` a succeeded result carries (usage with the cache counts, if any)."""
    return {
        "id": new_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": params.get("model") or reply.model,
        "content": [{"type": "text", "text": reply.text_value}],
        "stop_reason": _STOP.get(reply.finish_reason, reply.finish_reason),
        "stop_sequence": None,
        "usage": {**anthropic_usage(reply), "service_tier": "batch"},
    }


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat().replace("+00:00", "Z")


def _error(status: int, message: str, error_type: str = "invalid_request_error") -> web.Response:
    return web.json_response({"type": "error", "error": {"type": error_type, "message": message}}, status=status)


def _not_found(batch_id: str) -> web.Response:
    return _error(404, f"message_batch not found: {batch_id}", "not_found_error")


def read_requests(body) -> tuple[list[BatchItem], str | None]:
    """The requests of a create call, or why the API refuses the whole call."""
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        return [], "requests: List should have at least 1 item"
    items: list[BatchItem] = []
    seen: set[str] = set()
    for n, request in enumerate(requests):
        custom_id = request.get("custom_id") if isinstance(request, dict) else None
        if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
            return [], f"requests.{n}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if custom_id in seen:
            return [], f"requests.{n}.custom_id: Duplicate custom_id '{custom_id}'; each must be unique."
        if not isinstance(request.get("params"), dict):
            return [], f"requests.{n}.params: Field required"
        seen.add(custom_id)
        items.append(BatchItem(custom_id, request["params"]))
    return items, None


class AnthropicBatchServer(BatchJobs, AnthropicServer):
    """Anthropic server with Message Batches; ``base_url`` is the root, as for streaming."""

    job_prefix = "msgbatch_"
    batch_routes = (
        ("POST", r"/v1/messages/batches", "_create"),
        ("GET", r"/v1/messages/batches", "_list"),
        ("GET", r"/v1/messages/batches/(?P<batch_id>[^/]+)", "_retrieve"),
        ("DELETE", r"/v1/messages/batches/(?P<batch_id>[^/]+)", "_delete"),
        ("GET", r"/v1/messages/batches/(?P<batch_id>[^/]+)/results", "_results"),
        ("POST", r"/v1/messages/batches/(?P<batch_id>[^/]+)/cancel", "_cancel"),
    )

    def __init__(
        self,
        replies=(),
        *,
        port: int = 0,
        responder: Responder = echo_reply,
        polls_to_finish: int = 2,
    ):
        AnthropicServer.__init__(self, replies, port=port)
        BatchJobs.__init__(self, responder=responder, polls_to_finish=polls_to_finish)

    def check_request(self, body: dict) -> str | None:
        missing = [key for key in _REQUIRED if key not in body]
        return f"{missing[0]}: Field required" if missing else None

    # ---- routes --------------------------------------------------------------------------------
    def _create(self, request: web.Request, raw: bytes) -> web.Response:
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "The request body is not valid JSON.")
        items, problem = read_requests(body)
        if problem:
            return _error(400, problem)
        return web.json_response(self._batch(self.add_job(items)))

    def _list(self, request: web.Request, raw: bytes) -> web.Response:
        jobs = list(reversed(self._jobs.values()))  # most recent first, as the API lists them
        after = request.query.get("after_id")
        if after in self._jobs:
            jobs = jobs[[job.id for job in jobs].index(after) + 1 :]
        limit = int(request.query.get("limit", 20))
        page = [self._batch(job) for job in jobs[:limit]]
        return web.json_response(
            {
                "data": page,
                "has_more": len(jobs) > limit,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
            }
        )

    def _retrieve(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _not_found(batch_id)
        self.poll(job)
        return web.json_response(self._batch(job))

    def _cancel(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _not_found(batch_id)
        if not self.cancel(job):
            return _error(400, f"Batch {batch_id} has already ended and cannot be canceled.")
        return web.json_response(self._batch(job))

    def _delete(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _not_found(batch_id)
        if job.phase != "ended":
            return _error(400, f"Batch {batch_id} is still processing; cancel it before deleting it.")
        del self._jobs[batch_id]
        return web.json_response({"id": batch_id, "type": "message_batch_deleted"})

    def _results(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _not_found(batch_id)
        if job.phase != "ended":
            return _error(
                404, f"Results for message_batch {batch_id} are not available until it has ended.", "not_found_error"
            )
        lines = [{"custom_id": item.custom_id, "result": self._result(item)} for item in job.items]
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return web.Response(body=data, content_type="application/x-jsonl")

    # ---- shapes --------------------------------------------------------------------------------
    @staticmethod
    def _result(item: BatchItem) -> dict:
        if item.succeeded and item.reply is not None:
            return {"type": "succeeded", "message": message(item.reply, item.body)}
        if item.errored and item.reply is not None:
            return {"type": "errored", "error": AnthropicEncoder().http_error_body(item.reply)}
        return {"type": item.fate}  # canceled / expired

    def _batch(self, job: BatchJob) -> dict:
        ended = job.phase == "ended"
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            counts["succeeded"] = job.count(lambda item: item.succeeded)
            counts["errored"] = job.count(lambda item: item.errored)
            counts["canceled"] = job.count(lambda item: item.fate == "canceled")
            counts["expired"] = job.count(lambda item: item.fate == "expired")
        else:
            counts["processing"] = len(job.items)  # the API tallies outcomes only once a batch ends
        return {
            "id": job.id,
            "type": "message_batch",
            "processing_status": {"running": "in_progress", "cancelling": "canceling"}.get(job.phase, "ended"),
            "request_counts": counts,
            "created_at": _iso(job.created_at),
            "expires_at": _iso(job.created_at + 24 * 3600),
            "ended_at": _iso(job.times.get(job.outcome or "")) if ended else None,
            "cancel_initiated_at": _iso(job.times.get("cancelling")),
            "archived_at": None,
            "results_url": f"{self.root_url}/v1/messages/batches/{job.id}/results" if ended else None,
        }
