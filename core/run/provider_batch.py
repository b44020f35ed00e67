"""A grid through a provider's batch API: submit every cell's call as a job, wait, store the answers.

Headless and storage-free, like :mod:`core.run.batch`: cells are claimed and finished through the
same :class:`~core.run.batch.CellStore`, and jobs live in a :class:`JobStore`. The flow:

1. **Collect first.** Jobs this batch submitted earlier and never collected (a stopped or killed
   process, or ``--no-wait``) are polled and, once ended, collected: a new process resumes them
   from their stored ids, and cells waiting in a job are never submitted again.
2. **Submit.** Cells still to run are claimed, their plans built (one call per answer: a method
   that needs calls in sequence is refused for that cell), grouped by model into jobs, and each
   job is recorded together with its runs (status ``submitted``) the moment the provider accepts it.
3. **Wait.** Jobs are polled with a growing interval; an ended job's results are stored as
   ordinary responses (``via`` recorded, no streaming timings) in one transaction that also marks
   the job collected, so they are stored exactly once whichever process gets there first.

Every request gets a response row: an answer, or its error (``expired`` and ``cancelled``
requests run again on resume; errored ones with ``--retry-failed``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.plan import PromptPlan, fill
from core.providers.base import ModelSpec, Provider
from core.providers.batch_api import (
    MAX_BYTES,
    MAX_REQUESTS,
    BatchApiError,
    BatchBackend,
    BatchRequest,
    BatchResult,
    JobState,
    Via,
)
from core.providers.prompt_cache import USES
from core.providers.recording import request_hash
from core.run.batch import WAITING, CellStore, Progress, select
from core.run.engine import step_model, usage_cost, with_prefill
from core.run.grid import Cell
from core.run.spec import ResponseFinished, ResponseStatus, RunStarted, RunStatus, new_id


@dataclass(frozen=True)
class Submitted:
    """One request of a job: the run it answers (its ``custom_id``) and that run's response."""

    run_id: str
    cell_key: str
    response_id: str
    step: str
    request_hash: str
    #: The model as the request called it (the step's limits applied): what its response row records.
    model: ModelSpec


@dataclass(frozen=True)
class OpenJob:
    id: str
    via: Via
    model: ModelSpec
    requests: list[Submitted]


@dataclass(frozen=True)
class Collected:
    """A request's outcome, ready to store: the response, its run's and its cell's status."""

    request: Submitted
    response: ResponseFinished
    run_status: RunStatus
    cell_status: str


class JobStore(Protocol):
    def open_jobs(self, batch: str) -> list[OpenJob]:
        """This batch's jobs whose results are not stored yet."""
        ...

    async def submitted(
        self, batch: str, via: Via, job_id: str, model: ModelSpec, runs: Sequence[tuple[Cell, RunStarted, Submitted]]
    ) -> None:
        """Record an accepted job with its runs (status ``submitted``) and cells, in one transaction."""
        ...

    async def checked(self, job_id: str, state: JobState) -> None: ...

    async def collected(self, job: OpenJob, outcomes: Sequence[Collected]) -> list[str]:
        """Store a job's outcomes and mark it collected, in one transaction; the run ids stored
        ([] when another process had already collected it)."""
        ...


@dataclass
class PollPolicy:
    """Seconds between polls: ``first_s``, growing by ``factor`` up to ``max_s``."""

    first_s: float = 2.0
    factor: float = 1.5
    max_s: float = 60.0


@dataclass
class JobProgress:
    """What the batch API path adds to a batch's progress."""

    submitted_jobs: list[str] = field(default_factory=list)
    waiting: int = 0
    collected_jobs: int = 0
    states: dict[str, JobState] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class ProviderBatchRunner:
    def __init__(
        self,
        batch: str,
        cells: Sequence[Cell],
        via: Via,
        cell_store: CellStore,
        job_store: JobStore,
        *,
        backend_for: Callable[[ModelSpec], BatchBackend],
        provider_for: Callable[[ModelSpec], Provider],
        plan_for: Callable[[Cell], Awaitable[PromptPlan]],
        retry_failed: bool = False,
        poll: PollPolicy | None = None,
        progress: Progress | None = None,
        on_progress: Callable[[Progress, JobProgress], None] | None = None,
        on_collected: Callable[[list[str]], Awaitable[None]] | None = None,
    ):
        """``on_collected(run_ids)``: called after a job's answers are stored (the session judges them)."""
        self.batch = batch
        self.cells = list(cells)
        self.via = via
        self.cell_store = cell_store
        self.job_store = job_store
        self._backend_for = backend_for
        self._backends: dict[str, BatchBackend] = {}
        self._provider_for = provider_for
        self._plan_for = plan_for
        self.retry_failed = retry_failed
        self.poll = poll or PollPolicy()
        self.progress = progress or Progress()
        self.jobs = JobProgress()
        self._on_progress = on_progress or (lambda p, j: None)
        self._on_collected = on_collected
        self._stop = asyncio.Event()

    # -- what is left -------------------------------------------------------------------------
    def plan(self) -> tuple[list[Cell], list[Cell]]:
        """(cells to submit, cells skipped: done, failed, or waiting in a job)."""
        return select(self.cells, self.cell_store.statuses(self.batch), retry_failed=self.retry_failed)

    def stop(self) -> None:
        """Stop waiting: jobs keep running at the provider; the same command collects them later."""
        self._stop.set()

    def _note(self, error: str) -> None:
        """Keep the first errors for the summary (a 50,000-request job must not keep them all)."""
        if len(self.progress.errors) < 20:
            self.progress.errors.append(error)

    def _emit(self) -> None:
        self._on_progress(self.progress, self.jobs)

    # -- the flow -----------------------------------------------------------------------------
    async def run(self, *, wait: bool = True) -> Progress:
        """Collect the jobs that ended since the last command, submit what is left (the cells of
        expired or cancelled requests included), then wait for every open job unless ``wait`` is
        off."""
        p = self.progress
        at_start = self.cell_store.statuses(self.batch)
        _, skipped = select(self.cells, at_start, retry_failed=self.retry_failed)
        # Cells waiting in a job are this command's to collect, not skipped.
        p.total, p.skipped = len(self.cells), sum(1 for c in skipped if at_start.get(c.key) not in WAITING)
        self._emit()
        earlier = self.job_store.open_jobs(self.batch)
        self.jobs.waiting = sum(len(j.requests) for j in earlier)
        still = [job for job in earlier if not await self._check(job)]
        todo, _ = self.plan()
        open_jobs = still + await self._submit(todo)
        if wait:
            await self._wait(open_jobs)
        p.stopped = self._stop.is_set()
        self._emit()
        return p

    async def cancel_open(self) -> list[JobState]:
        """Ask the provider to cancel every job of this batch not collected yet, then collect
        what they finished (the rest comes back cancelled and runs again on resume). A job that
        already ended is collected as it is."""
        jobs = self.job_store.open_jobs(self.batch)
        states = []
        for job in jobs:
            try:
                backend = self._backend(job.model)
                states.append(await backend.cancel(job.id))
            except BatchApiError as exc:
                ended = await self._ended(job)  # refused because it had ended: collected below
                if ended is None:
                    self._note(f"job {job.id}: {exc}")
                else:
                    states.append(ended)
        await self._wait(jobs)
        return states

    async def _ended(self, job: OpenJob) -> JobState | None:
        try:
            state = await self._backend(job.model).poll(job.id)
        except BatchApiError:
            return None
        return state if state.ended else None

    def _backend(self, model: ModelSpec) -> BatchBackend:
        key = model.model_dump_json()
        if key not in self._backends:
            self._backends[key] = self._backend_for(model)
        return self._backends[key]

    # -- submitting ---------------------------------------------------------------------------
    async def _submit(self, cells: list[Cell]) -> list[OpenJob]:
        p = self.progress
        by_model: dict[str, list[tuple[Cell, RunStarted, Submitted, BatchRequest]]] = {}
        models: dict[str, ModelSpec] = {}
        since = _now()
        for cell in cells:
            if self._stop.is_set():
                break
            run_id = new_id("run")
            if not await self.cell_store.claim(self.batch, cell, run_id, retry_failed=self.retry_failed, since=since):
                p.elsewhere += 1
                continue
            entry = await self._request(cell, run_id)
            if isinstance(entry, str):
                self._fail(cell, run_id, entry)
                continue
            key = cell.model.model_dump_json()
            models[key] = cell.model
            by_model.setdefault(key, []).append(entry)
        jobs: list[OpenJob] = []
        for key, entries in by_model.items():
            model = models[key]
            for chunk in _chunks(entries):
                job = await self._submit_job(model, chunk)
                if job is not None:
                    jobs.append(job)
        return jobs

    async def _request(self, cell: Cell, run_id: str) -> tuple[Cell, RunStarted, Submitted, BatchRequest] | str:
        """The cell's one request, or why it cannot go through a batch API."""
        try:
            plan = await self._plan_for(cell)
        except Exception as exc:
            return f"could not prepare the prompt: {type(exc).__name__}: {exc}"
        if len(plan.steps) != 1:
            names = " → ".join(s.name for s in plan.steps)
            return (
                f"method {cell.spec.method!r} makes {len(plan.steps)} calls in sequence ({names}); a batch API "
                "takes one call per answer: run it with --via stream"
            )
        step = plan.steps[0]
        provider = self._provider_for(cell.model)
        model = step_model(cell.model, step)
        messages = with_prefill(fill(step, {}), step, provider, cell.model)
        USES.expect(model.id, messages, f"{cell.key}/{step.name}")  # the first request of a shared prefix writes it
        digest = request_hash(model.id, messages, model.params)
        submitted = Submitted(run_id, cell.key, new_id("resp"), step.name, digest, model)
        return cell, RunStarted(run_id, cell.spec, plan), submitted, BatchRequest(run_id, model, messages)

    async def _submit_job(self, model: ModelSpec, entries: list) -> OpenJob | None:
        try:
            job_id = await self._backend(model).submit(model, [e[3] for e in entries], self.batch)
        except BatchApiError as exc:
            for cell, started, _, _ in entries:
                self._fail(cell, started.run_id, str(exc))
            return None
        runs = [(cell, started, submitted) for cell, started, submitted, _ in entries]
        await self.job_store.submitted(self.batch, self.via, job_id, model, runs)
        self.jobs.submitted_jobs.append(job_id)
        self.jobs.waiting += len(entries)
        self._emit()
        return OpenJob(job_id, self.via, model, [s for _, _, s in runs])

    def _fail(self, cell: Cell, run_id: str, error: str) -> None:
        p = self.progress
        self.cell_store.finished(self.batch, cell, run_id, "error", error)
        p.done += 1
        p.failed += 1
        self._note(f"{cell.spec.user_id}/{cell.spec.query_id} {cell.model.id}: {error}")
        self._emit()

    # -- waiting and collecting ------------------------------------------------------------
    async def _wait(self, jobs: list[OpenJob]) -> None:
        pending = list(jobs)
        interval = self.poll.first_s
        while pending and not self._stop.is_set():
            still = []
            for job in pending:
                if not await self._check(job):
                    still.append(job)
            pending = still
            if not pending:
                break
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=interval)
            except TimeoutError:
                pass
            interval = min(self.poll.max_s, interval * self.poll.factor)

    async def _check(self, job: OpenJob) -> bool:
        """Poll one job; collect it when it ended. True when it needs no more polling."""
        backend = self._backend(job.model)
        try:
            state = await backend.poll(job.id)
        except BatchApiError as exc:
            self._note(f"job {job.id}: {exc}")
            self._emit()
            if exc.permanent:  # asking again will not help: stop waiting, keep the job for later
                self.jobs.unreadable[job.id] = str(exc)
                return True
            return False  # a failed poll is tried again at the next interval
        self.jobs.states[job.id] = state
        await self.job_store.checked(job.id, state)
        self._emit()
        if not state.ended:
            return False
        try:
            results = await backend.results(job.id) if state.error is None else []
        except BatchApiError as exc:
            self._note(f"job {job.id}: {exc}")
            return False
        outcomes = self._outcomes(job, state, results)
        stored = await self.job_store.collected(job, outcomes)
        self._count(outcomes, stored)
        if stored and self._on_collected is not None:
            await self._on_collected([o.request.run_id for o in outcomes if o.request.run_id in stored])
        return True

    def _outcomes(self, job: OpenJob, state: JobState, results: list[BatchResult]) -> list[Collected]:
        by_id = {r.custom_id: r for r in results}
        provider = self._provider_for(job.model)
        out = []
        for request in job.requests:
            result = by_id.get(request.run_id)
            if result is None:  # never ran: a failed job, or a result the provider did not return
                why = state.error or "the provider returned no result for this request"
                result = BatchResult(request.run_id, "error" if state.error else "expired", error=why)
            out.append(self._outcome(job, request, result, provider))
        return out

    def _outcome(self, job: OpenJob, request: Submitted, result: BatchResult, provider: Provider) -> Collected:
        ok = result.status == "ok"
        never_ran = result.status in ("cancelled", "expired")
        status: ResponseStatus = "ok" if ok else "cancelled" if never_ran else "error"
        usage = result.usage
        response = ResponseFinished(
            run_id=request.run_id,
            response_id=request.response_id,
            slot=0,
            step=request.step,
            is_final_step=True,
            status=status,
            text=result.text,
            error=None if ok else f"{job.via} job {job.id}: {result.error or result.status}",
            ttft_ms=None,
            duration_ms=None,
            input_tokens=usage.input_tokens if usage else None,
            output_tokens=usage.output_tokens if usage else None,
            cost_usd=usage_cost(provider, job.model, usage, batch=True),
            cache_hit=False,
            cache_read_tokens=usage.cache_read_tokens if usage else None,
            cache_write_tokens=usage.cache_write_tokens if usage else None,
            via=job.via,
        )
        run_status: RunStatus = "ok" if ok else "cancelled" if status == "cancelled" else "error"
        # Requests the job never ran (expired, cancelled) are not the cell's failure: they run again.
        cell_status = {"ok": "ok", "error": "error", "expired": "interrupted", "cancelled": "cancelled"}[result.status]
        return Collected(request, response, run_status, cell_status)

    def _count(self, outcomes: list[Collected], stored: list[str]) -> None:
        p = self.progress
        self.jobs.collected_jobs += 1
        for o in outcomes:
            self.jobs.waiting = max(0, self.jobs.waiting - 1)
            if o.request.run_id not in stored:
                continue
            r = o.response
            p.done += o.cell_status not in ("cancelled", "interrupted")
            p.add_usage(r.input_tokens, r.output_tokens, r.cost_usd)
            if o.cell_status == "ok":
                p.ok += 1
            elif o.cell_status in ("cancelled", "interrupted"):
                p.cancelled += 1
            else:
                p.failed += 1
                if r.error:
                    self._note(f"{o.request.run_id}: {r.error}")
        self._emit()


def _chunks(entries: list) -> list[list]:
    """Split a model's requests into jobs under the APIs' request and size caps."""
    out: list[list] = [[]]
    size = 0
    for e in entries:
        n = sum(len(m.content) for m in e[3].messages) * 2 + 512  # bytes, generously
        if out[-1] and (len(out[-1]) >= MAX_REQUESTS or size + n > MAX_BYTES):
            out.append([])
            size = 0
        out[-1].append(e)
        size += n
    return [c for c in out if c]
