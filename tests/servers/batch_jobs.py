"""Batch jobs held by the loopback batch servers, and a test's controls over them.

A job is a list of requests answered in order by the server's ``responder`` as the job is polled:
each status GET is one step. A job stays unfinished for ``polls_to_finish`` GETs (every request is
answered by the last of them) and ends at the next one. ``hold()`` freezes every unfinished job
(GETs then change nothing) until ``release()``; ``expire(job_id)`` ends a job at once, its
unanswered requests expired. A cancel request ends the job at the next GET, its answered requests
kept and the rest cancelled.

Jobs live in the server object and every mutation happens under one lock: the server's thread
serves HTTP while a test (or another process's client) reads, polls or steers the same jobs.
The provider servers (:mod:`tests.servers.batch_openai`, :mod:`tests.servers.batch_anthropic`)
turn a :class:`BatchJob` into their wire shapes.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from aiohttp import web

from tests.servers.script import Reply

#: What the server answers to one request of a batch: a Reply's text, usage (input tokens are the
#: whole prompt), cache_read / cache_write and finish_reason; a non-200 status makes that request
#: fail with ``error_message`` (a partial failure). Called in the server's thread.
Responder = Callable[[dict], Reply]
Fate = Literal["pending", "answered", "canceled", "expired"]
Phase = Literal["validating", "running", "cancelling", "ended"]
Outcome = Literal["completed", "cancelled", "expired", "failed"]


def content_text(content) -> str:
    """The text of a message's ``content``: a string, or a list of blocks / parts with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def token_count(text: str) -> int:
    """About four characters a token, at least one."""
    return max(1, -(-len(text) // 4))


def echo_reply(body: dict, **reply_kw) -> Reply:
    """The default responder: ``"answer to: <first 40 chars of the last user message>"``.

    Input tokens count every message's text and the system prompt (chat body or Messages params),
    output tokens the answer, both by :func:`token_count`. ``reply_kw`` overrides Reply fields, so
    a custom responder can be ``lambda body: echo_reply(body, cache_read=5)``."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    question = next((content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    answer = f"answer to: {question[:40]}"
    prompt = content_text(body.get("system")) + "".join(content_text(m.get("content")) for m in messages)
    reply_kw.setdefault("usage", (token_count(prompt), token_count(answer)))
    return Reply(chunks=[answer], **reply_kw)


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


@dataclass
class BatchItem:
    custom_id: str
    #: The request as submitted: a chat body (OpenAI line's ``body``) or Messages ``params``.
    body: dict
    fate: Fate = "pending"
    #: The responder's answer once the request is answered (status 200 or an error).
    reply: Reply | None = None
    #: The provider's id for this request's result line (``batch_req_…``).
    id: str = field(default_factory=lambda: new_id("batch_req_"))

    @property
    def succeeded(self) -> bool:
        return self.fate == "answered" and self.reply is not None and self.reply.status == 200

    @property
    def errored(self) -> bool:
        return self.fate == "answered" and not self.succeeded


@dataclass
class BatchJob:
    id: str
    items: list[BatchItem]
    polls_to_finish: int
    phase: Phase = "running"
    outcome: Outcome | None = None
    #: Status GETs that moved the job on (a held job's GETs do not count).
    steps: int = 0
    created_at: float = field(default_factory=time.time)
    #: When the job entered a state: "in_progress", "finalizing", "cancelling", or its outcome.
    times: dict[str, float] = field(default_factory=dict)
    #: Provider fields: endpoint, metadata, input/output/error file ids, validation errors.
    info: dict = field(default_factory=dict)

    def count(self, predicate: Callable[[BatchItem], bool]) -> int:
        return sum(1 for item in self.items if predicate(item))

    @property
    def all_answered(self) -> bool:
        return all(item.fate == "answered" for item in self.items)


class BatchJobs:
    """Mixin for a :class:`~tests.servers.base.ScriptedServer` that serves a batch API.

    Test controls (thread-safe): ``responder``, ``polls_to_finish`` (read when a job is created),
    :meth:`hold`, :meth:`release`, :meth:`expire`, :meth:`job_ids`, :meth:`job`, :meth:`submitted`,
    and ``batch_log``, the (method, path) of every batch-API call in order.
    """

    #: Prefix of job ids (``batch_``, ``msgbatch_``).
    job_prefix = "batch_"
    #: (method, path regex, handler name); handlers take (request, raw, **groups) → web.Response.
    batch_routes: tuple[tuple[str, str, str], ...] = ()

    def __init__(self, *, responder: Responder = echo_reply, polls_to_finish: int = 2):
        self.responder: Responder = responder
        self.polls_to_finish = polls_to_finish
        self.batch_log: list[tuple[str, str]] = []
        self._jobs: dict[str, BatchJob] = {}
        self._held = False
        #: Re-entrant: a responder may read the server (``submitted``) while a step holds the lock.
        self._jobs_lock = threading.RLock()
        self._compiled = [(m, re.compile(p), h) for m, p, h in self.batch_routes]

    # ---- test controls -----------------------------------------------------------------------
    def hold(self) -> None:
        """Keep every unfinished job as it is (status GETs change nothing) until :meth:`release`."""
        with self._jobs_lock:
            self._held = True

    def release(self) -> None:
        with self._jobs_lock:
            self._held = False

    def expire(self, job_id: str) -> None:
        """End an unfinished job as expired now: answered requests keep their results."""
        with self._jobs_lock:
            job = self._jobs[job_id]
            if job.phase == "ended":
                raise ValueError(f"batch {job_id} already ended ({job.outcome})")
            self._end(job, "expired")

    def job_ids(self) -> list[str]:
        """Every job's id, oldest first."""
        with self._jobs_lock:
            return list(self._jobs)

    def job(self, job_id: str | None = None) -> BatchJob:
        """A job (default: the latest); read it, steer it with the controls."""
        with self._jobs_lock:
            if job_id is None:
                if not self._jobs:
                    raise LookupError("no batch was created")
                job_id = next(reversed(self._jobs))
            return self._jobs[job_id]

    def submitted(self, job_id: str | None = None) -> dict[str, dict]:
        """custom_id → the request as sent (OpenAI: the line's ``body``; Anthropic: ``params``)."""
        with self._jobs_lock:
            return {item.custom_id: item.body for item in self.job(job_id).items}

    # ---- for the provider servers ------------------------------------------------------------
    async def handle_other(self, request: web.Request, raw: bytes) -> web.StreamResponse | None:
        """Serve a batch route (logged in ``batch_log``) under the jobs' lock; None for the rest."""
        for method, pattern, handler in self._compiled:
            match = pattern.fullmatch(request.path)
            if match and request.method == method:
                self.batch_log.append((request.method, request.path))
                with self._jobs_lock:
                    return getattr(self, handler)(request, raw, **match.groupdict())
        return None

    def add_job(self, items: list[BatchItem], *, phase: Phase = "running", info: dict | None = None) -> BatchJob:
        with self._jobs_lock:
            job = BatchJob(new_id(self.job_prefix), items, self.polls_to_finish, phase=phase, info=info or {})
            if phase == "running":
                job.times["in_progress"] = job.created_at
            self._jobs[job.id] = job
            return job

    def find_job(self, job_id: str) -> BatchJob | None:
        with self._jobs_lock:
            return self._jobs.get(job_id)

    def poll(self, job: BatchJob) -> None:
        """One status GET: reveal validation, answer the next share of requests, or end the job."""
        with self._jobs_lock:
            if job.phase == "validating":
                if job.info.get("errors"):
                    self._end(job, "failed")
                    return
                job.phase = "running"
                job.times["in_progress"] = time.time()
            if self._held or job.phase == "ended":
                return
            if job.phase == "cancelling":
                self._end(job, "cancelled")
                return
            job.steps += 1
            total, n = len(job.items), job.polls_to_finish
            self._answer(job, total if job.steps >= n else total * job.steps // n)
            if job.all_answered and "finalizing" not in job.times:
                job.times["finalizing"] = time.time()
            if job.steps > n:
                self._end(job, "completed")

    def cancel(self, job: BatchJob) -> bool:
        """Start cancelling an unfinished job; False when it already ended or is cancelling."""
        with self._jobs_lock:
            if job.phase in ("ended", "cancelling"):
                return job.phase == "cancelling"
            job.phase = "cancelling"
            job.times["cancelling"] = time.time()
            return True

    def check_request(self, body: dict) -> str | None:
        """Why the provider would reject this request's body (it then errors with 400), or None."""
        return None

    def job_ended(self, job: BatchJob) -> None:
        """Called once when a job ends (the OpenAI server writes its result files here)."""

    # ---- internals ---------------------------------------------------------------------------
    def _answer(self, job: BatchJob, upto: int) -> None:
        for item in job.items[:upto]:
            if item.fate == "pending":
                item.reply = self._reply_for(item.body)
                item.fate = "answered"

    def _reply_for(self, body: dict) -> Reply:
        problem = self.check_request(body)
        if problem:
            return Reply.http_error(400, problem, error_type="invalid_request_error")
        try:
            return self.responder(body)
        except Exception as exc:  # a broken responder shows up as that request's server error
            return Reply.http_error(500, f"responder failed: {exc!r}")

    def _end(self, job: BatchJob, outcome: Outcome) -> None:
        left: Fate = "expired" if outcome == "expired" else "canceled"
        for item in job.items:
            if item.fate == "pending":
                item.fate = left
        job.phase, job.outcome = "ended", outcome
        job.times[outcome] = time.time()
        self.job_ended(job)
