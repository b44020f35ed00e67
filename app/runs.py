"""Runs and their answers: the plan for a spec, its estimate, the stored runs, the results grid,
export, knowledge probes and judging stored answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from app.base import Base
from core.model import FillerPool, UserBundle
from core.plan import PromptPlan
from core.providers.base import ModelSpec
from core.run.spec import RunEvent, RunSpec

if TYPE_CHECKING:  # imported where used: the TUI's first paint stays light
    from core.providers.events import Usage
    from core.run.estimate import Estimate
    from core.run.prepare import Prepared


class Runs(Base):
    async def prepare_async(
        self,
        spec: RunSpec,
        bundle: UserBundle | None = None,
        pools: list[FillerPool] | None = None,
        *,
        windows: dict[str, int | None] | None = None,
        write_summaries: bool = True,
        estimate_only: bool = False,
        embedding_threads: int | None = None,
        embed_progress: Callable[[int, int], None] | None = None,
        embed_stop: Callable[[], bool] | None = None,
    ) -> Prepared:
        """The plan for ``spec`` (``core.run.prepare.prepare``) with this workbench's providers and
        caches. ``bundle`` / ``pools`` default to the stored ones; pass them when they were loaded
        on another thread. ``windows`` overrides models' context windows."""
        from core.run.prepare import prepare
        from storage.embeddings import SqliteEmbeddingCache
        from storage.summaries import SqliteSummaryCache

        bundle = bundle if bundle is not None else self.user(spec.user_id)
        pools = pools if pools is not None else self.filler_pools()
        with self.connection() as db:
            return await prepare(
                spec,
                bundle,
                pools,
                self.settings,
                provider_for=self.provider,
                embedding_cache=SqliteEmbeddingCache(db),
                summary_cache=SqliteSummaryCache(db),
                windows=windows,
                write_summaries=write_summaries,
                estimate_only=estimate_only,
                embedding_threads=embedding_threads,
                embed_progress=embed_progress,
                embed_stop=embed_stop,
            )

    def prepare(self, spec: RunSpec, bundle: UserBundle, pools: list[FillerPool], **options) -> PromptPlan:
        """:meth:`prepare_async` for a thread without a running loop. It may load the embedding
        model, so views call it from a worker thread, with the user and pools already loaded."""
        return asyncio.run(self.prepare_async(spec, bundle, pools, **options)).plan

    def cost_of(self, model: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        """USD at the model's provider's prices (``core.run.estimate.CostOf``); None when unknown."""
        return self.provider(model).cost_usd(model, usage, batch=batch)

    def estimate(self, spec: RunSpec, plan: PromptPlan) -> Estimate:
        """Tokens per model and the cost where a price is known (thread-safe)."""
        from core.run.estimate import estimate_run

        return estimate_run(spec.models, plan, self.cost_of)

    async def judge_responses(self, judges, run, responses, bundle: UserBundle, query) -> list:
        """(response id, Judgment) for each stored answer of ``run`` by each judge, concurrently."""
        from core.judges.apply import judge_answer
        from core.judges.base import JudgeInput

        complete = self.complete()

        async def one(response):
            item = JudgeInput(bundle, query, run.spec.expression_type, run.plan, response.text, response.model)
            return [(response.id, j) for j in await judge_answer(judges, item, complete)]

        batches = await asyncio.gather(*(one(r) for r in responses))
        return [pair for batch in batches for pair in batch]

    def list_runs(self, user_id: str | None = None, limit: int = 500):
        from storage.runs import list_runs

        return list_runs(self.db, user_id=user_id, limit=limit)

    def load_run(self, run_id: str):
        from storage.runs import load_run

        return load_run(self.db, run_id)

    def export_runs(
        self,
        run_ids: list[str],
        path: Path,
        *,
        fmt: str = "csv",
        force: bool = False,
        response_ids: list[str] | None = None,
    ) -> int:
        """Export the runs (one row per final response, scores in columns) through storage.export;
        with ``response_ids``, only those answers of them. Never onto the database or another SQLite
        file, nor over an existing file unless ``force`` (``storage.output_files.OutputRefused``, a
        ValueError); written whole or not at all."""
        from storage.export import RunFilter, export
        from storage.output_files import replace_atomically

        self.flush()
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)  # the default exports folder
        hint = "choose another file name"
        with replace_atomically(path, protect=[self.db_path], force=force, hint=hint) as fh:
            chosen = RunFilter(run_ids=list(run_ids), response_ids=list(response_ids or []))
            return export(self.db, fh, f=chosen, fmt=fmt)

    def grid_rows(self, response_ids: list[str]):
        """The results-grid rows (``storage.results_grid.GridData``) of these answers, in the order
        asked, with the score columns they have: what the compare screen shows for each. Safe on
        any thread."""
        from storage.results_grid import GridData, load_grid

        self.flush()
        with self.connection() as db:
            data = load_grid(db, response_ids)
        by_id = {r.response_id: r for r in data.rows}
        rows = [by_id[i] for i in response_ids if i in by_id]
        used = {c for r in rows for c in r.scores}
        return GridData(rows, [c for c in data.columns if c in used])

    def runs_grid(self):
        """Every stored answer, newest run first (``storage.results_grid.GridData``), and each
        shown run's shortest unambiguous id prefix: what the Runs tab lists. Safe on any thread."""
        from storage.ids import all_run_ids, short_run_ids
        from storage.results_grid import load_grid

        with self.connection() as db:
            data = load_grid(db)
            return data, short_run_ids(all_run_ids(db), dict.fromkeys(r.run_id for r in data.rows))

    def probe_specs(self, run_id: str) -> list[RunSpec]:
        """The knowledge-probe runs a stored run calls for (``core.run.probes``): one per probe of
        its query, for the models whose answer finished. Empty when the query has none."""
        from core.run.probes import probe_specs

        self.flush()
        run = self.load_run(run_id)
        finished = [r.model for r in run.final_responses() if r.status in ("ok", "incomplete")]
        return probe_specs(run.spec, run_id, self.user(run.spec.user_id), finished)

    async def run_probes(
        self,
        specs: list[RunSpec],
        bundle: UserBundle,
        emit: Callable[[RunEvent], None] | None = None,
        pools: list[FillerPool] | None = None,
    ) -> list[str]:
        """Run and store the probe specs (each scored by its own judges); their run ids. ``emit``
        also sees every event (a view). The user (and ``pools``, default the stored ones) are passed
        in when this runs on another thread."""
        from core.run.probes import run_probes

        recorder = self.recorder()

        def both(event: RunEvent) -> None:
            recorder.record(event)
            if emit is not None:
                emit(event)

        async def plan(spec: RunSpec, user: UserBundle) -> PromptPlan:
            return (await self.prepare_async(spec, user, pools)).plan

        return await run_probes(self.engine(both), self.judges, plan, specs, bundle)

    # -- ids and selections ----------------------------------------------------------------
    def resolve_run_id(self, given: str) -> str:
        """The full run id for a full id or a unique prefix; LookupError naming the problem."""
        from storage.ids import resolve_run_id

        return resolve_run_id(self.db, given)

    def short_run_ids(self, run_ids) -> dict[str, str]:
        """Each of ``run_ids``' shortest prefix that no other stored run shares."""
        from storage.ids import all_run_ids, short_run_ids

        return short_run_ids(all_run_ids(self.db), run_ids)

    def run_ids_labelled(self, labels: list[str]) -> list[str]:
        """Ids of the runs whose label matches any of ``labels`` (``*`` matches any text), oldest first."""
        from storage.runs import run_ids_labelled

        return run_ids_labelled(self.db, labels)

    def answer_run_ids(self, f) -> list[str]:
        """The ids of the runs whose answers ``f`` (``app.reports.RunFilter``) selects."""
        from storage.export import answer_run_ids

        return answer_run_ids(self.db, f)

    def probe_run_ids(self, run_ids: list[str]) -> dict[str, list[str]]:
        """Per run, the ids of the knowledge-probe runs linked to it."""
        from storage.runs import probe_run_ids

        return probe_run_ids(self.db, run_ids)

    def batch_summary(self, name: str):
        """Per model, from the stored rows of every run of batch ``name`` (a ``ReportTable``):
        what `prefscope report --batch NAME --summary` prints."""
        from storage.export import RunFilter
        from storage.report import summary_table

        return summary_table(self.db, RunFilter(labels=[name]))

    def save_imported(self, result, *, keep_duplicates: bool = False):
        """Store answers produced elsewhere (``core.results``) as runs (``storage.imported_runs``);
        a record repeated in its file is skipped unless ``keep_duplicates``."""
        from storage.imported_runs import save_imported

        return save_imported(self.db, result, keep_duplicates=keep_duplicates)
