"""The providers' batch APIs behind one small interface: submit requests, poll, fetch, cancel.

A batch API takes many non-streaming requests at once, answers them within a window (24 h) at
half the price, and returns each answer by the ``custom_id`` it was sent with. Backends:
``openai-batch`` (Files + Batches, JSONL; any OpenAI-compatible server that implements them) and
``anthropic-batch`` (Message Batches). Backends never raise for a request's failure: it comes back
as a :class:`BatchResult` with its error; job-level failures raise :class:`BatchApiError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.events import Usage

Via = Literal["openai-batch", "anthropic-batch"]
VIAS: tuple[Via, ...] = ("openai-batch", "anthropic-batch")
ResultStatus = Literal["ok", "error", "expired", "cancelled"]


class BatchApiError(RuntimeError):
    """A job could not be created, read or cancelled; the message names the job and the server."""

    def __init__(self, message: str, *, status: int | None = None):
        super().__init__(message)
        self.status = status

    @property
    def permanent(self) -> bool:
        """Asking again will not help (a 4xx other than timeout, conflict or rate limit)."""
        return self.status is not None and 400 <= self.status < 500 and self.status not in (408, 409, 429)


@dataclass(frozen=True)
class BatchRequest:
    custom_id: str
    #: The model as this request calls it (a step's own limits applied).
    model: ModelSpec
    messages: list[Message]


@dataclass(frozen=True)
class JobState:
    id: str
    #: The provider's own word (validating, in_progress, ended, …).
    status: str
    #: Results can be fetched: the job completed, expired, was cancelled or failed.
    ended: bool
    #: The provider's request counts, as one line (``3 succeeded, 1 errored``).
    counts: str = ""
    #: Why the whole job failed (e.g. its input was refused), or None.
    error: str | None = None


@dataclass(frozen=True)
class BatchResult:
    custom_id: str
    status: ResultStatus
    text: str = ""
    usage: Usage | None = None
    finish_reason: str | None = None
    error: str | None = None


class BatchBackend(Protocol):
    via: Via

    async def submit(self, model: ModelSpec, requests: Sequence[BatchRequest], label: str) -> str:
        """Create one job for ``requests`` (all of ``model``, each with its own params); returns
        the provider's job id."""
        ...

    async def poll(self, job_id: str) -> JobState: ...

    async def results(self, job_id: str) -> list[BatchResult]:
        """Every request's outcome of an ended job (requests it never ran come back ``expired``
        or ``cancelled``)."""
        ...

    async def cancel(self, job_id: str) -> JobState: ...


#: Requests per job: both APIs cap a job (OpenAI 50,000 requests / 200 MB, Anthropic 100,000 /
#: 256 MB); a grid larger than this becomes several jobs.
MAX_REQUESTS = 50_000
MAX_BYTES = 190 * 1024 * 1024
