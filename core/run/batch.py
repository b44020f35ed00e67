"""Batch mode: run a grid's cells with a global cap on runs in flight, resumably.

Headless and storage-free: persistence comes in through a :class:`CellStore` port and running a
cell through a ``RunCell`` callable (normally a :class:`core.run.cells.EngineCellRunner`, which
shares ONE engine between all runs, so the engine's per-provider limit holds across the whole batch).

Resuming: the store knows each cell's last status. ``ok`` cells are skipped; ``error`` /
``partial`` cells only with ``retry_failed``; ``cancelled``, ``interrupted``, stale ``running``
(a killed process) and unknown cells run; ``submitted`` cells wait in a provider batch job
(:mod:`core.run.provider_batch`) and are collected, never run again. Stopping (Ctrl-C → :meth:`BatchRunner.stop`, or
cancelling the task) cancels the runs in flight — the engine stores them as cancelled with their
partial text — and marks their cells ``cancelled``; everything finished so far is already stored.

Claiming: a cell runs only after the store has claimed it atomically for this process
(:meth:`CellStore.claim`), so any number of processes on one batch name split its cells and each
cell runs once; a cell another process holds is counted in ``elsewhere``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from core.run.grid import Cell
from core.run.spec import new_id

DONE = {"ok"}
FAILED = {"error", "partial"}
#: Waiting in a provider batch job (core.run.provider_batch): collected, not run again.
WAITING = {"submitted"}


class CellStore(Protocol):
    def statuses(self, batch: str) -> dict[str, str]:
        """cell key -> last status, for every cell this batch has tried."""
        ...

    async def claim(self, batch: str, cell: Cell, run_id: str, *, retry_failed: bool, since: str) -> bool:
        """Take the cell for this process unless it is done, or held by a live process.

        Failed cells are taken only with ``retry_failed`` and only if they failed before ``since``
        (this batch's start), so two retrying processes do not run one cell twice.
        """
        ...

    def finished(self, batch: str, cell: Cell, run_id: str, status: str, error: str | None) -> None: ...


@dataclass(frozen=True)
class CellOutcome:
    status: str
    error: str | None = None


RunCell = Callable[[Cell, str], Awaitable[CellOutcome]]


@dataclass
class Progress:
    total: int = 0
    skipped: int = 0
    done: int = 0
    ok: int = 0
    failed: int = 0
    cancelled: int = 0
    running: int = 0
    #: Cells another process claimed first (they are its to run).
    elsewhere: int = 0
    #: Cells that ran but whose answer could not be written (they run again on resume).
    unstored: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    #: Sum of known prices; responses without a price are counted in ``unpriced``.
    cost_usd: float = 0.0
    priced: int = 0
    unpriced: int = 0
    stopped: bool = False
    errors: list[str] = field(default_factory=list)

    def add_usage(self, input_tokens: int | None, output_tokens: int | None, cost_usd: float | None) -> None:
        """Count one call's tokens and cost (a call that used tokens at an unknown price is unpriced)."""
        self.input_tokens += input_tokens or 0
        self.output_tokens += output_tokens or 0
        if cost_usd is not None:
            self.cost_usd += cost_usd
            self.priced += 1
        elif input_tokens or output_tokens:
            self.unpriced += 1

    @property
    def to_run(self) -> int:
        return self.total - self.skipped - self.elsewhere

    def cost_text(self) -> str:
        if self.unpriced and not self.priced:
            return "n/a"
        text = f"${self.cost_usd:,.4f}"
        return text + f" (+{self.unpriced} unpriced)" if self.unpriced else text


def select(
    cells: Sequence[Cell], statuses: dict[str, str], *, retry_failed: bool = False
) -> tuple[list[Cell], list[Cell]]:
    """(cells to run, cells skipped) given the store's statuses."""
    run, skip = [], []
    for c in cells:
        st = statuses.get(c.key)
        if st in DONE or st in WAITING or (st in FAILED and not retry_failed):
            skip.append(c)
        else:
            run.append(c)
    return run, skip


class BatchRunner:
    def __init__(
        self,
        batch: str,
        cells: Sequence[Cell],
        store: CellStore,
        run_cell: RunCell,
        *,
        max_runs: int = 8,
        retry_failed: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
        progress: Progress | None = None,
        new_run_id: Callable[[], str] = lambda: new_id("run"),
    ):
        self.batch = batch
        self.cells = list(cells)
        self.store = store
        self.run_cell = run_cell
        self.max_runs = max(1, max_runs)
        self.retry_failed = retry_failed
        self.on_progress = on_progress or (lambda p: None)
        self.progress = progress or Progress()
        self._new_run_id = new_run_id
        self._workers: list[asyncio.Task] = []
        self._stop_requested = False
        self._since = ""

    def plan(self) -> tuple[list[Cell], list[Cell]]:
        return select(self.cells, self.store.statuses(self.batch), retry_failed=self.retry_failed)

    def stop(self) -> None:
        """Stop cleanly: cancel the runs in flight; :meth:`run` returns with ``stopped=True``."""
        self._stop_requested = True
        for w in self._workers:
            w.cancel()

    async def run(self) -> Progress:
        self._since = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")
        todo, skipped = self.plan()
        p = self.progress
        p.total, p.skipped = len(self.cells), len(skipped)
        self.on_progress(p)
        queue: asyncio.Queue[Cell] = asyncio.Queue()
        for c in todo:
            queue.put_nowait(c)
        self._workers = [
            asyncio.create_task(self._work(queue), name=f"batch-worker-{i}")
            for i in range(min(self.max_runs, len(todo)))
        ]
        if self._stop_requested:  # stop() before the workers existed
            self.stop()
        try:
            await asyncio.gather(*self._workers)
        except asyncio.CancelledError:
            for w in self._workers:
                # A second cancel would cut short a worker's cleanup (its run's cancelled record).
                if not w.cancelling():
                    w.cancel()
            await asyncio.gather(*self._workers, return_exceptions=True)
            p.stopped = True
            self.on_progress(p)
            task = asyncio.current_task()
            if not self._stop_requested or (task is not None and task.cancelling()):
                raise
        return p

    async def _work(self, queue: asyncio.Queue[Cell]) -> None:
        p = self.progress
        while True:
            try:
                cell = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            run_id = self._new_run_id()
            try:
                mine = await self.store.claim(
                    self.batch, cell, run_id, retry_failed=self.retry_failed, since=self._since
                )
            except asyncio.CancelledError:  # the claim may still land: give the cell back untouched
                self.store.finished(self.batch, cell, run_id, "pending", None)
                raise
            except Exception as exc:  # e.g. the database stayed locked past the write deadline
                p.failed += 1
                if len(p.errors) < 20:
                    p.errors.append(f"{cell.spec.user_id}/{cell.spec.query_id} {cell.model.id}: not started: {exc}")
                self.on_progress(p)
                continue
            if not mine:
                p.elsewhere += 1
                self.on_progress(p)
                continue
            p.running += 1
            self.on_progress(p)
            try:
                outcome = await self.run_cell(cell, run_id)
            except asyncio.CancelledError:
                p.running -= 1
                began = getattr(self.run_cell, "began", lambda run_id: True)
                if not began(run_id):  # stopped while its plan was built: no run exists, give it back
                    self.store.finished(self.batch, cell, run_id, "pending", None)
                    raise
                p.cancelled += 1
                self.store.finished(
                    self.batch,
                    cell,
                    run_id,
                    "cancelled",
                    "batch stopped while this run was in flight; it runs again on resume",
                )
                raise
            except Exception as exc:  # a bug in one cell must not stop the batch
                outcome = CellOutcome("error", f"{type(exc).__name__}: {exc}")
            p.running -= 1
            self.store.finished(self.batch, cell, run_id, outcome.status, outcome.error)
            p.done += 1
            if outcome.status == "ok":
                p.ok += 1
            elif outcome.status == "cancelled":
                p.cancelled += 1
            else:
                p.failed += 1
                if outcome.error and len(p.errors) < 20:
                    p.errors.append(f"{cell.spec.user_id}/{cell.spec.query_id} {cell.model.id}: {outcome.error}")
            self.on_progress(p)
