"""OpenAI Batch API (files + batches) on the loopback OpenAI server, as the real API shapes it.

Routes, besides streaming ``POST /v1/chat/completions``: ``POST /v1/files`` (multipart upload),
``GET /v1/files/{id}``, ``GET /v1/files/{id}/content``, ``DELETE /v1/files/{id}``,
``POST /v1/batches``, ``GET /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.

A batch is ``validating`` when created; its first status GET shows ``failed`` (with ``errors``,
one per bad input line: ``empty_file``, ``invalid_json_line``, ``missing_required_parameter``,
``url_mismatch``, ``duplicate_custom_id``, ``model_mismatch``) or starts the job (see
:mod:`tests.servers.batch_jobs`): ``in_progress`` → ``finalizing`` once every request is answered →
``completed``. Successes go to the output file; failed, cancelled and expired requests to the
error file, so the two files together hold one line per request.
"""

from __future__ import annotations

import email.policy
import json
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from typing import Any

from aiohttp import web

from tests.servers.batch_jobs import BatchItem, BatchJob, BatchJobs, Responder, echo_reply, new_id
from tests.servers.openai_sse import OpenAIEncoder, OpenAIServer, openai_usage
from tests.servers.script import Reply

ENDPOINT = "/v1/chat/completions"
PURPOSES = {"assistants", "batch", "fine-tune", "vision", "user_data"}
_EXPIRED = "This request could not be executed before the completion window expired."
_CANCELLED = "This request was not executed because the batch was cancelled."


@dataclass
class StoredFile:
    id: str
    filename: str
    purpose: str
    data: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def as_object(self) -> dict:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.data),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


def chat_completion(reply: Reply, body: dict) -> dict:
    """The non-streaming ``chat.completion`` object a batch line's response carries."""
    message: dict = {"role": "assistant", "content": reply.text_value, "refusal": None, "annotations": []}
    return {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or reply.model,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply.finish_reason}],
        "usage": openai_usage(reply),
        "service_tier": "default",
        "system_fingerprint": "fp_test",
    }


def _error(status: int, message: str, *, param: str | None = None, code: str | None = None) -> web.Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    return web.json_response({"error": error}, status=status)


def _line_error(code: str, message: str, line: int | None, param: str | None = None) -> dict:
    return {"code": code, "message": message, "param": param, "line": line}


def read_input(data: bytes, endpoint: str) -> tuple[list[BatchItem], list[dict]]:
    """The requests of a batch input file, and the errors that make the batch fail."""
    items: list[BatchItem] = []
    errors: list[dict] = []
    seen: set[str] = set()
    model = None
    lines = [(n, line) for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1) if line.strip()]
    if not lines:
        errors.append(_line_error("empty_file", "The batch input file is empty.", None))
    for n, line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if not isinstance(obj, dict):
            errors.append(_line_error("invalid_json_line", "This line is not parseable as valid JSON.", n))
            continue
        missing = [key for key in ("custom_id", "method", "url", "body") if key not in obj]
        body = obj.get("body")
        if missing:
            errors.append(
                _line_error("missing_required_parameter", f"Missing required parameter: '{missing[0]}'.", n, missing[0])
            )
        elif obj["method"] != "POST":
            errors.append(_line_error("invalid_request", "The method of a batch request must be 'POST'.", n, "method"))
        elif obj["url"] != endpoint:
            message = "The URL provided for this request does not match the one provided when creating the batch."
            errors.append(_line_error("url_mismatch", message, n, "url"))
        elif obj["custom_id"] in seen:
            message = (
                "The custom_id for this request is a duplicate of another request. "
                "The custom_id parameter must be unique for each request in a batch."
            )
            errors.append(_line_error("duplicate_custom_id", message, n, "custom_id"))
        elif not isinstance(body, dict) or not body.get("model"):
            errors.append(_line_error("missing_required_parameter", "Missing required parameter: 'body.model'.", n))
        elif model is not None and body["model"] != model:
            message = f"The model '{body['model']}' does not match the model '{model}' of the other requests."
            errors.append(_line_error("model_mismatch", message, n, "body.model"))
        else:
            model = model or body["model"]
            seen.add(obj["custom_id"])
            items.append(BatchItem(str(obj["custom_id"]), body))
    return items, errors


def _multipart(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Form fields of a multipart/form-data body: name → (filename, bytes)."""
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message: Any = BytesParser(policy=email.policy.HTTP).parsebytes(head + raw)
    if not message.is_multipart():
        return {}
    return {
        part.get_param("name", header="content-disposition"): (part.get_filename(), part.get_payload(decode=True))
        for part in message.iter_parts()
    }


class OpenAIBatchServer(BatchJobs, OpenAIServer):
    """OpenAI server with files and batches; ``base_url`` ends in ``/v1`` as for streaming."""

    job_prefix = "batch_"
    batch_routes = (
        ("POST", r"/v1/files", "_upload"),
        ("GET", r"/v1/files/(?P<file_id>[^/]+)", "_file"),
        ("DELETE", r"/v1/files/(?P<file_id>[^/]+)", "_delete_file"),
        ("GET", r"/v1/files/(?P<file_id>[^/]+)/content", "_file_content"),
        ("POST", r"/v1/batches", "_create"),
        ("GET", r"/v1/batches", "_list"),
        ("GET", r"/v1/batches/(?P<batch_id>[^/]+)", "_retrieve"),
        ("POST", r"/v1/batches/(?P<batch_id>[^/]+)/cancel", "_cancel"),
    )

    def __init__(
        self,
        replies=(),
        *,
        port: int = 0,
        responder: Responder = echo_reply,
        polls_to_finish: int = 2,
    ):
        OpenAIServer.__init__(self, replies, port=port)
        BatchJobs.__init__(self, responder=responder, polls_to_finish=polls_to_finish)
        self.files: dict[str, StoredFile] = {}

    def file_content(self, file_id: str) -> bytes:
        """A stored file's bytes (input, output or error file)."""
        with self._jobs_lock:
            return self.files[file_id].data

    # ---- files ---------------------------------------------------------------------------------
    def _upload(self, request: web.Request, raw: bytes) -> web.Response:
        fields = _multipart(request.headers.get("Content-Type", ""), raw)
        if "file" not in fields:
            return _error(400, "Missing required parameter: 'file'.", param="file")
        purpose = (fields.get("purpose") or (None, b""))[1].decode()
        if purpose not in PURPOSES:
            return _error(400, f"Invalid value for 'purpose': {purpose!r}.", param="purpose")
        filename, data = fields["file"]
        stored = self._store(filename or "upload", purpose, data)
        return web.json_response(stored.as_object())

    def _file(self, request: web.Request, raw: bytes, file_id: str) -> web.Response:
        if file_id not in self.files:
            return _error(404, f"No such File object: {file_id}", param="id")
        return web.json_response(self.files[file_id].as_object())

    def _delete_file(self, request: web.Request, raw: bytes, file_id: str) -> web.Response:
        if self.files.pop(file_id, None) is None:
            return _error(404, f"No such File object: {file_id}", param="id")
        return web.json_response({"id": file_id, "object": "file", "deleted": True})

    def _file_content(self, request: web.Request, raw: bytes, file_id: str) -> web.Response:
        if file_id not in self.files:
            return _error(404, f"No such File object: {file_id}", param="id")
        return web.Response(body=self.files[file_id].data, content_type="application/octet-stream")

    def _store(self, filename: str, purpose: str, data: bytes) -> StoredFile:
        stored = StoredFile(new_id("file-"), filename, purpose, data)
        self.files[stored.id] = stored
        return stored

    # ---- batches -------------------------------------------------------------------------------
    def _create(self, request: web.Request, raw: bytes) -> web.Response:
        try:
            body = json.loads(raw)
        except ValueError:
            return _error(400, "The request body is not valid JSON.")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        for key in ("input_file_id", "endpoint", "completion_window"):
            if key not in body:
                return _error(
                    400, f"Missing required parameter: '{key}'.", param=key, code="missing_required_parameter"
                )
        if body["endpoint"] != ENDPOINT:
            return _error(400, f"This test server serves batches for {ENDPOINT} only.", param="endpoint")
        if body["completion_window"] != "24h":
            return _error(
                400, "Invalid value for 'completion_window': only '24h' is supported.", param="completion_window"
            )
        source = self.files.get(body["input_file_id"])
        if source is None:
            return _error(404, f"No such File object: {body['input_file_id']}", param="input_file_id")
        if source.purpose != "batch":
            return _error(400, "The input file must be uploaded with purpose 'batch'.", param="input_file_id")
        items, errors = read_input(source.data, body["endpoint"])
        info = {
            "endpoint": body["endpoint"],
            "input_file_id": source.id,
            "completion_window": "24h",
            "metadata": body.get("metadata"),
            "model": items[0].body.get("model") if items else None,
            "errors": errors,
        }
        job = self.add_job([] if errors else items, phase="validating", info=info)
        return web.json_response(self._batch(job))

    def _list(self, request: web.Request, raw: bytes) -> web.Response:
        jobs = list(reversed(self._jobs.values()))  # newest first, as the API lists them
        after = request.query.get("after")
        if after in self._jobs:
            jobs = jobs[[job.id for job in jobs].index(after) + 1 :]
        limit = int(request.query.get("limit", 20))
        page = [self._batch(job) for job in jobs[:limit]]
        return web.json_response(
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(jobs) > limit,
            }
        )

    def _retrieve(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _error(404, f"No batch found with id '{batch_id}'.")
        self.poll(job)
        return web.json_response(self._batch(job))

    def _cancel(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        job = self.find_job(batch_id)
        if job is None:
            return _error(404, f"No batch found with id '{batch_id}'.")
        if not self.cancel(job):
            return _error(400, f"Cannot cancel a batch with status '{self._status(job)}'.")
        return web.json_response(self._batch(job))

    # ---- shapes --------------------------------------------------------------------------------
    def job_ended(self, job: BatchJob) -> None:
        output: list[dict] = []
        errors: list[dict] = []
        for item in job.items:
            reply = item.reply
            if reply is not None and item.succeeded:
                output.append(self._line(item, 200, chat_completion(reply, item.body)))
            elif reply is not None:
                errors.append(self._line(item, reply.status, OpenAIEncoder().http_error_body(reply)))
            else:  # cancelled or expired before it was answered
                code, text = ("batch_expired", _EXPIRED) if item.fate == "expired" else ("batch_cancelled", _CANCELLED)
                error = {"code": code, "message": text}
                errors.append({"id": item.id, "custom_id": item.custom_id, "response": None, "error": error})
        for key, lines, kind in (("output_file_id", output, "output"), ("error_file_id", errors, "error")):
            if lines:
                data = "".join(json.dumps(line) + "\n" for line in lines).encode()
                job.info[key] = self._store(f"batch_{job.id}_{kind}.jsonl", "batch_output", data).id

    def check_request(self, body: dict) -> str | None:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return "Missing required parameter: 'messages'."
        return None

    @staticmethod
    def _line(item: BatchItem, status: int, body: dict) -> dict:
        response = {"status_code": status, "request_id": new_id("req_"), "body": body}
        return {"id": item.id, "custom_id": item.custom_id, "response": response, "error": None}

    @staticmethod
    def _status(job: BatchJob) -> str:
        if job.phase == "ended":
            return job.outcome or "completed"
        if job.phase == "running":
            return "finalizing" if "finalizing" in job.times else "in_progress"
        return job.phase  # validating, cancelling

    def _batch(self, job: BatchJob) -> dict:
        def at(key: str) -> int | None:
            return int(job.times[key]) if key in job.times else None

        answered = [item.reply for item in job.items if item.succeeded and item.reply and item.reply.usage]
        input_tokens = sum(reply.usage[0] for reply in answered if reply.usage)
        output_tokens = sum(reply.usage[1] for reply in answered if reply.usage)
        errors = job.info.get("errors")
        return {
            "id": job.id,
            "object": "batch",
            "endpoint": job.info["endpoint"],
            "model": job.info.get("model"),
            "errors": {"object": "list", "data": errors} if errors else None,
            "input_file_id": job.info["input_file_id"],
            "completion_window": job.info["completion_window"],
            "status": self._status(job),
            "output_file_id": job.info.get("output_file_id"),
            "error_file_id": job.info.get("error_file_id"),
            "created_at": int(job.created_at),
            "in_progress_at": at("in_progress"),
            "expires_at": int(job.created_at) + 24 * 3600,
            "finalizing_at": at("finalizing"),
            "completed_at": at("completed"),
            "failed_at": at("failed"),
            "expired_at": at("expired"),
            "cancelling_at": at("cancelling"),
            "cancelled_at": at("cancelled"),
            "request_counts": {
                "total": len(job.items),
                "completed": job.count(lambda item: item.succeeded),
                "failed": job.count(lambda item: item.fate != "pending" and not item.succeeded),
            },
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": sum(reply.cache_read or 0 for reply in answered)},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": input_tokens + output_tokens,
            },
            "metadata": job.info.get("metadata"),
        }
