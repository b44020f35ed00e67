"""A batch built from a Workbench: grid → cells, the cell store, one shared engine.

``open_batch(workbench, grid)`` returns a :class:`BatchSession` whose providers, prepare, judges,
recorder and user cache are the workbench's; ``await session.run()`` runs what is left of the
grid; ``session.close()`` flushes every write (and closes the workbench when the session owns
it). `prefscope batch` (which only parses options and prints) and the tests use it the same way.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.workbench import Workbench
from core.analysis.restraint_probes import GENERATED
from core.plan import PromptPlan
from core.run.batch import BatchRunner, Progress, select
from core.run.cells import EngineCellRunner
from core.run.engine import EngineOptions
from core.run.estimate import Estimate, estimate_cells
from core.run.grid import Cell, Grid, GridError, expand

if TYPE_CHECKING:
    from storage.batch_cells import SqliteCellStore
    from storage.recorder import RunRecorder


class BatchSetupError(RuntimeError):
    """Something the operator must fix before the batch can start."""


def default_name(cells: list[Cell]) -> str:
    """A name derived from the cells, so re-running the same command resumes the same batch."""
    digest = hashlib.sha256("".join(sorted(c.key for c in cells)).encode()).hexdigest()[:10]
    return f"batch-{digest}"


@dataclass
class BatchSession:
    name: str
    grid: Grid
    cells: list[Cell]
    runner: BatchRunner
    cell_runner: EngineCellRunner
    progress: Progress
    workbench: Workbench
    store: SqliteCellStore
    recorder: RunRecorder
    #: What judges every answer (the grid's judges).
    judges: list
    #: Close the workbench with the session (it was opened for this batch only).
    owns_workbench: bool = False
    #: Why writes failed and where the lost answers were saved (``storage.recorder.AnswersNotStored``),
    #: once :meth:`finish` met failed writes.
    write_error: Exception | None = None

    async def estimate(self) -> Estimate:
        """Tokens and cost of the cells still to run. Their plans are built now (and cached), and
        announced to the prompt-cache policy, so the first call of a shared history prefix
        already asks the provider to cache it."""
        from core.providers.prompt_cache import announce

        todo, _ = self.runner.plan()

        async def plan_for(cell: Cell) -> PromptPlan:
            plan = await self.cell_runner.plan_for(cell, estimate=True)
            announce(cell.model.id, plan, cell.key)
            return plan

        return await estimate_cells(todo, plan_for, self.workbench.cost_of)

    async def run(self) -> Progress:
        return await self.runner.run()

    def stop(self) -> None:
        self.runner.stop()

    def finish(self) -> Progress:
        """Wait for every write, then make the progress say what is stored.

        Cells whose answer could not be written are moved from their outcome's count to
        ``unstored`` (the store already set them back to run again on resume); ``write_error``
        says why, and where their answers were saved (:meth:`unstored_note`).
        """
        from storage.writer import WriterError

        try:
            self.workbench.flush()
        except WriterError as exc:  # every failed write of a run is counted per cell below
            self.write_error = exc
        p = self.progress
        for status, n in self.store.unstored().items():
            if status == "ok":
                p.ok -= n
            else:
                p.failed -= n
            p.unstored += n
        self.store.unstored_runs.clear()
        return p

    def unstored_note(self) -> str:
        """Why the unstored answers were not stored (a full disk, a read-only file, a lock held
        past ``write_deadline_s``) and where they were saved instead, in one clause."""
        from storage.writable import reason

        why = reason(self.write_error) if self.write_error is not None else "the database refused the writes"
        saved = self.recorder.recovery.note()
        return f"{why}; {saved}" if saved else why

    def close(self) -> None:
        try:
            self.finish()
        finally:
            if self.owns_workbench:
                self.workbench.close()


def open_batch(
    workbench: Workbench,
    grid: Grid,
    *,
    retry_failed: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    owns_workbench: bool = False,
) -> BatchSession:
    from core.judges import JudgeSpecError
    from storage.batch_cells import SqliteCellStore
    from storage.users import UnknownUser, user_ids
    from storage.writable import NotWritable, check_writable

    def load_bundle(user_id: str):
        try:
            return workbench.user(user_id)
        except UnknownUser as exc:
            raise BatchSetupError(str(exc)) from None

    pools = workbench.filler_pools()  # read here, on the database's thread; the prepares use them

    async def prepare(spec, bundle):
        # On a thread (its own loop and connection, as the workbench's own prepare runs): a RAG
        # cell's embedding, or any long prepare, would otherwise hold the event loop and stall
        # every other cell's stream, their TTFT and tok/s with it. Cells run side by side: the
        # encoder takes one core, the streams the other.
        return await asyncio.to_thread(workbench.prepare, spec, bundle, pools, embedding_threads=1)

    async def estimate(spec, bundle):  # counts only: never embeds
        return (await workbench.prepare_async(spec, bundle, estimate_only=True)).plan

    try:
        cells = expand(
            grid,
            all_users=lambda: user_ids(workbench.db),
            # "Every query" leaves generated restraint probes out: a benchmark's own judge would
            # score them as if the preference applied. Named (or matched by a pattern) they run.
            queries_of=lambda u: [
                (q.id, q.kind) for q in load_bundle(u).queries if grid.queries != "*" or not q.meta.get(GENERATED)
            ],
        )
        judges = workbench.judges(cells[0].spec) if cells else []
    except (GridError, JudgeSpecError) as exc:
        raise BatchSetupError(str(exc)) from None
    name = grid.name or default_name(cells)
    if not grid.name:
        cells = [Cell(c.key, c.spec.model_copy(update={"label": name})) for c in cells]
    progress = Progress()
    recorder = workbench.recorder()  # its writer keeps retrying for settings.write_deadline_s
    store = SqliteCellStore(workbench.db, recorder.writer, recorder.lost)
    todo, _ = select(cells, store.statuses(name), retry_failed=retry_failed)
    answers = len(todo) * (2 if grid.probe else 1)  # a knowledge probe per cell, about
    try:
        check_writable(recorder.writer, workbench.db_path, answers=answers)
    except NotWritable as exc:
        raise BatchSetupError(f"{exc}; nothing was run") from None
    store.settle(name)  # answers stored by a run whose last writes failed: done, not run again
    cell_runner = EngineCellRunner(
        workbench.provider,
        recorder.record,
        prepare=prepare,
        estimate=estimate,
        load_bundle=load_bundle,
        judges=judges,
        options=EngineOptions(
            per_provider=grid.concurrency.per_provider, max_answer_chars=workbench.settings.max_answer_chars
        ),
        progress=progress,
        probe_judges=workbench.judges if grid.probe else None,
    )
    runner = BatchRunner(
        name,
        cells,
        store,
        cell_runner,
        max_runs=grid.concurrency.runs,
        retry_failed=retry_failed,
        on_progress=on_progress,
        progress=progress,
    )
    return BatchSession(
        name, grid, cells, runner, cell_runner, progress, workbench, store, recorder, judges, owns_workbench
    )
