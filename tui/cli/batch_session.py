"""Wiring for batch mode, without click: grid → cells, storage ports, one shared engine.

``open_batch`` composes the pieces (database, recorder, cell store, providers, judges, prompt
preparation) and returns a :class:`BatchSession`; ``await session.run()`` runs what is left of the
grid; ``session.close()`` flushes every write. The CLI and the tests use it the same way.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from core.providers.base import ModelSpec
from core.run.batch import BatchRunner, EngineCellRunner, Estimate, Progress, estimate
from core.run.engine import EngineOptions
from core.run.grid import Cell, Grid, GridError, expand
from core.settings import Settings


class BatchSetupError(RuntimeError):
    """Something the operator must fix before the batch can start."""


def default_name(cells: list[Cell]) -> str:
    """A name derived from the cells, so re-running the same command resumes the same batch."""
    digest = hashlib.sha256("".join(sorted(c.key for c in cells)).encode()).hexdigest()[:10]
    return f"batch-{digest}"


def _judges(grid: Grid, cells: list[Cell], settings: Settings) -> list:
    if not grid.judges:
        return []
    try:
        from core.judges import judges_for
    except ImportError:
        raise BatchSetupError(
            "judges were asked for but core.judges.judges_for is not available in this build; "
            "run without judges and re-judge later with `prefscope judge`"
        ) from None
    return list(judges_for(cells[0].spec, settings))


@dataclass
class BatchSession:
    name: str
    grid: Grid
    cells: list[Cell]
    runner: BatchRunner
    cell_runner: EngineCellRunner
    progress: Progress
    provider_for: object
    _closers: list = field(default_factory=list)

    def estimate(self) -> Estimate:
        todo, _ = self.runner.plan()
        cache: dict[str, object] = {}

        def cost_of(model: ModelSpec, tin: int, tout: int):
            key = model.provider
            if key not in cache:
                cache[key] = self.provider_for(model)
            return cache[key].cost_usd(model, tin, tout)

        return estimate(todo, self.cell_runner.plan_for, cost_of)

    async def run(self) -> Progress:
        return await self.runner.run()

    def stop(self) -> None:
        self.runner.stop()

    def close(self) -> None:
        while self._closers:
            self._closers.pop()()


def open_batch(
    db_path: str | Path, grid: Grid, settings: Settings, *, retry_failed: bool = False, on_progress=None
) -> BatchSession:
    from core.providers import get_provider
    from core.run.prepare import prepare_plan
    from storage.batch_cells import SqliteCellStore
    from storage.db import open_db
    from storage.embeddings import SqliteEmbeddingCache
    from storage.fillers import load_filler_pools
    from storage.recorder import RunRecorder
    from storage.runs import SqliteResponseCache, mark_interrupted
    from storage.summaries import SqliteSummaryCache
    from storage.users import UnknownUser, load_user, user_ids

    db = open_db(db_path)
    closers = [db.close]
    try:
        mark_interrupted(db)  # runs left 'running' by a killed batch
        providers: dict[str, object] = {}
        response_cache = SqliteResponseCache(db)

        def provider_for(spec: ModelSpec):
            if spec.provider not in providers:
                providers[spec.provider] = get_provider(spec, settings, response_cache=response_cache)
            return providers[spec.provider]

        pools: list | None = None

        def prepare(spec, bundle):
            nonlocal pools
            if pools is None:
                pools = load_filler_pools(db)
            return prepare_plan(
                spec,
                bundle,
                pools,
                settings,
                embedding_cache=SqliteEmbeddingCache(db),
                summary_cache=SqliteSummaryCache(db),
            )

        bundles: dict[str, object] = {}

        def load_bundle(user_id: str):
            if user_id not in bundles:
                try:
                    bundles[user_id] = load_user(db, user_id)
                except UnknownUser as exc:
                    raise BatchSetupError(str(exc)) from None
            return bundles[user_id]

        try:
            cells = expand(
                grid,
                all_users=lambda: user_ids(db),
                queries_of=lambda u: [(q.id, q.kind) for q in load_bundle(u).queries],
            )
        except GridError as exc:
            raise BatchSetupError(str(exc)) from None
        progress = Progress()
        recorder = RunRecorder(db_path)
        closers.append(recorder.close)
        cell_runner = EngineCellRunner(
            provider_for,
            recorder.record,
            prepare=prepare,
            load_bundle=load_bundle,
            judges=_judges(grid, cells, settings),
            options=EngineOptions(per_provider=grid.concurrency.per_provider),
            progress=progress,
        )
        name = grid.name or default_name(cells)
        if not grid.name:
            cells = [Cell(c.key, c.spec.model_copy(update={"label": name})) for c in cells]
        store = SqliteCellStore(db, recorder.writer)
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
        return BatchSession(name, grid, cells, runner, cell_runner, progress, provider_for, closers)
    except BaseException:
        while closers:
            closers.pop()()
        raise
