"""The workbench: the one composition root. The TUI, every CLI command, batch and the benches ask
core and storage through it, so provider lookup, prepare, judges, the recorder and the caches
exist once.

It owns the main-thread database connection (reads), the storage recorder (the single writer
for runs), the providers (one per provider name) and the loaded users. Views call it; it never
touches widgets.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from core.model import FillerPool, UserBundle
from core.plan import Message, PromptPlan
from core.providers.base import ModelSpec, Provider
from core.run.engine import Engine, EngineOptions
from core.run.spec import RunEvent, RunSpec
from core.settings import Settings

if TYPE_CHECKING:  # imported where used: the TUI's first paint stays light
    from core.analysis.diagnosis import Case, Diagnosis
    from core.providers.calls import Complete, Completion
    from core.providers.events import Usage
    from core.run.estimate import Estimate
    from core.run.prepare import Prepared

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"


class Workbench:
    def __init__(
        self,
        settings: Settings,
        db_path: Path | str | None = None,
        *,
        provider_for: Callable[[ModelSpec], Provider] | None = None,
        readonly: bool = False,
    ):
        """``provider_for`` replaces the provider registry (tests inject scripted providers).
        ``db_path=":memory:"`` gives a throwaway database (`prefscope prompt --bundle`).
        ``readonly``: for commands that only read; nothing is created or written."""
        from storage.db import open_db

        self.settings = settings
        self._provider_for = provider_for
        self.db_path = Path(db_path or settings.db).expanduser()
        self.readonly = readonly
        self.db = open_db(self.db_path, readonly=readonly)
        self._db_thread = threading.get_ident()
        self._providers: dict[str, Provider] = {}
        self._users: dict[str, UserBundle] = {}
        self._pools: list[FillerPool] | None = None
        self._recorder = None
        self._closed = False
        #: What :meth:`open` did (sample data imported, runs marked interrupted), for the operator.
        self.startup_notes: list[str] = []

    @classmethod
    def open(
        cls,
        settings: Settings,
        db_path: Path | str | None = None,
        *,
        sample_data: bool = True,
        provider_for: Callable[[ModelSpec], Provider] | None = None,
        readonly: bool = False,
    ) -> Workbench:
        """A workbench ready for work: the sample users imported into an empty database
        (``sample_data``) and runs a killed process left 'running' marked interrupted (both
        skipped when ``readonly``)."""
        from storage.runs import mark_interrupted

        wb = cls(settings, db_path, provider_for=provider_for, readonly=readonly)
        imported = wb.ensure_sample_data() if sample_data and not readonly else []
        interrupted = [] if readonly else mark_interrupted(wb.db)
        if imported:
            wb.startup_notes.append(f"first run: imported the sample data ({', '.join(imported)})")
        if interrupted:
            wb.startup_notes.append(
                f"{len(interrupted)} run(s) cut off last time were marked interrupted; partial text kept"
            )
        return wb

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- data ----------------------------------------------------------------------------
    def ensure_sample_data(self) -> list[str]:
        """Import the bundled sample users on first run (empty database). Returns what was imported."""
        from storage.users import list_users, save_import

        if list_users(self.db) or not SAMPLE_DATA.is_dir():
            return []
        from core.formats import load_path

        imported: list[str] = []
        for part in ("users", "filler"):
            folder = SAMPLE_DATA / part
            if folder.is_dir() and any(folder.glob("*.json")):
                summary = save_import(self.db, load_path(folder, format="native"))
                imported += summary.users_added + summary.pools_added
        return imported

    def users(self):
        from storage.users import list_users

        return list_users(self.db)

    def user(self, user_id: str) -> UserBundle:
        """The user's bundle, loaded once (the one bundle cache). Raises ``storage.users.UnknownUser``."""
        if user_id not in self._users:
            from storage.users import load_user

            self._users[user_id] = load_user(self.db, user_id)
        return self._users[user_id]

    def filler_pools(self) -> list[FillerPool]:
        if self._pools is None:
            from storage.fillers import load_filler_pools

            self._pools = load_filler_pools(self.db)
        return self._pools

    def filler_pool_choices(self, user_id: str, context: str = "normal"):
        """Every stored pool (id, name, source, sessions, chars) and the ids ``user_id`` draws from
        when a spec names none (``storage.fillers.PoolChoices``), for a pool picker."""
        from storage.fillers import pool_choices

        return pool_choices(self.db, self.user(user_id).user.source, context)

    def check_filler_pools(self, pool_ids: list[str] | None) -> None:
        """Raise ``core.history.filler.UnknownFillerPool`` (naming the known ones) for an unknown id."""
        from storage.fillers import check_pool_ids

        check_pool_ids(self.db, pool_ids)

    def search_turns(self, text: str, user_id: str | None = None):
        from storage.search import search_turns

        return search_turns(self.db, text, user_id)

    @contextmanager
    def connection(self) -> Iterator:
        """The database on this thread: the workbench's own on its thread, else a fresh one
        (a connection belongs to the thread that opened it)."""
        if threading.get_ident() == self._db_thread:
            yield self.db
            return
        from storage.db import open_db

        db = open_db(self.db_path, readonly=self.readonly)
        try:
            yield db
        finally:
            db.close()

    # -- models --------------------------------------------------------------------------
    def provider(self, spec: ModelSpec) -> Provider:
        """One provider per provider name (they are stateless per call; SDK clients are per loop)."""
        if self._provider_for is not None:
            return self._provider_for(spec)
        provider = self._providers.get(spec.provider)
        if provider is None:
            from core.providers import get_provider

            cache = None
            if spec.provider == "replay":  # served from this database's response cache
                from storage.runs import SqliteResponseCache

                cache = SqliteResponseCache(self.db)
            provider = self._providers[spec.provider] = get_provider(spec, self.settings, response_cache=cache)
        return provider

    def complete(self, *, per_provider: int = 4) -> Complete:
        """One whole model call through these providers (judges, extraction, the LLM relevance
        decider), within the model's deadline; any failure becomes a failed Completion, never a crash."""
        from core.providers.calls import Completion, collect

        limits: dict[str, asyncio.Semaphore] = {}

        async def complete(spec: ModelSpec, messages: list[Message]) -> Completion:
            try:
                limit = limits.setdefault(spec.provider, asyncio.Semaphore(per_provider))
                async with limit, asyncio.timeout(spec.params.timeout_s):
                    return await collect(self.provider(spec), spec, messages)
            except TimeoutError:
                return Completion("", error=f"no answer from {spec.id} within {spec.params.timeout_s:g} s")
            except Exception as exc:  # unknown provider, SDK bug: recorded on the judgment, not raised
                return Completion("", error=f"{type(exc).__name__}: {exc}")

        return complete

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

    def judges(self, spec_or_names) -> list:
        """The judges a RunSpec (or a list of judge names) asks for. Raises ``core.judges.JudgeSpecError``."""
        from core.judges import judges_for

        return list(judges_for(spec_or_names, self.settings))

    # -- runs ----------------------------------------------------------------------------
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

    def recorder(self):
        if self._recorder is None:
            from storage.recorder import RunRecorder

            self._recorder = RunRecorder(self.db_path, write_deadline_s=self.settings.write_deadline_s)
        return self._recorder

    def engine(self, emit: Callable[[RunEvent], None], judges=(), *, options: EngineOptions | None = None) -> Engine:
        options = options or EngineOptions(max_answer_chars=self.settings.max_answer_chars)
        return Engine(self.provider, emit, judges=judges, options=options)

    def cost_of(self, model: ModelSpec, usage: Usage, *, batch: bool = False) -> float | None:
        """USD at the model's provider's prices (``core.run.estimate.CostOf``); None when unknown."""
        return self.provider(model).cost_usd(model, usage, batch=batch)

    def estimate(self, spec: RunSpec, plan: PromptPlan) -> Estimate:
        """Tokens per model and the cost where a price is known (thread-safe)."""
        from core.run.estimate import estimate_run

        return estimate_run(spec.models, plan, self.cost_of)

    # -- history of runs -----------------------------------------------------------------
    def list_runs(self, user_id: str | None = None, limit: int = 500):
        from storage.runs import list_runs

        return list_runs(self.db, user_id=user_id, limit=limit)

    def load_run(self, run_id: str):
        from storage.runs import load_run

        return load_run(self.db, run_id)

    def export_runs(self, run_ids: list[str], path: Path, *, fmt: str = "csv", force: bool = False) -> int:
        """Export the runs (one row per final response, scores in columns) through storage.export.
        Never onto the database or another SQLite file, nor over an existing file unless ``force``
        (``storage.output_files.OutputRefused``, a ValueError); written whole or not at all."""
        from storage.export import RunFilter, export
        from storage.output_files import replace_atomically

        self.flush()
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)  # the default exports folder
        hint = "choose another file name"
        with replace_atomically(path, protect=[self.db_path], force=force, hint=hint) as fh:
            return export(self.db, fh, f=RunFilter(run_ids=list(run_ids)), fmt=fmt)

    def flush(self) -> None:
        """Wait until every recorded event is in the database (before reading a run back)."""
        if self._recorder is not None:
            self._recorder.flush()

    # -- diagnosis: find → know → apply ------------------------------------------------
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

    def diagnoses(self, run_ids: list[str]) -> list[tuple[Case, Diagnosis, dict]]:
        """One (case, diagnosis, factor values) per final answer of each run, from stored rows only:
        the run, the runs probing it, the stored user (``core.analysis.diagnosis``). Safe on any
        thread (a worker's own connection; users loaded there are not cached)."""
        from core.analysis.diagnosis import diagnose
        from core.analysis.diagnosis_cases import cases_of
        from storage.runs import load_run, probe_run_ids
        from storage.users import UnknownUser, load_user

        self.flush()
        out = []
        with self.connection() as db:
            own = db is self.db
            users: dict[str, UserBundle | None] = {}
            probes = probe_run_ids(db, list(run_ids))
            for run_id in run_ids:
                run = load_run(db, run_id)
                uid = run.spec.user_id
                if uid not in users:
                    try:
                        users[uid] = self.user(uid) if own else load_user(db, uid)
                    except UnknownUser:
                        users[uid] = None
                probe_runs = [load_run(db, p) for p in probes[run_id]]
                factors = {"expression_type": run.spec.expression_type, "label": run.spec.label}
                out += [(case, diagnose(case), factors) for case in cases_of(run, users[uid], probe_runs)]
        return out

    # -- analysis views: heatmaps, paired comparisons -------------------------------------
    def heatmap_choices(
        self, run_ids: list[str], factors: list[str], models: list[str] | None = None, metric: str | None = None
    ) -> tuple[list[str], dict[str, list]]:
        """What a heatmap of these runs (their answers by ``models`` when given) can show: the
        default metrics (``storage.report.default_metrics``) and, per factor, its values among the
        judgments of ``metric`` (default: the first default metric). One connection, two queries;
        safe on any thread."""
        from storage.report import default_metrics, load_judgments, parse_metric

        self.flush()
        f = self._answers_of(run_ids, models)
        with self.connection() as db:
            metrics = default_metrics(db, f)
            kind, dimension = parse_metric(metric or metrics[0])
            rows = load_judgments(db, kind, dimension, factors, f)
        values = {name: list(dict.fromkeys(r.factors[i] for r in rows)) for i, name in enumerate(factors)}
        return metrics, values

    def heatmap(self, run_ids: list[str], metric: str, rows: str, cols: str, models: list[str] | None = None):
        """``storage.report.heatmap_panels``: the metric's mean per ``rows`` × ``cols`` value, one
        panel per judge (``core.analysis.heatmap.Heatmap``). Safe on any thread. Raises
        ``storage.report.ReportError`` for an unknown metric or factor."""
        from storage.report import heatmap_panels

        self.flush()
        with self.connection() as db:
            return heatmap_panels(db, metric, [rows, cols], self._answers_of(run_ids, models))

    @staticmethod
    def _answers_of(run_ids: list[str], models: list[str] | None):
        from storage.export import RunFilter

        return RunFilter(run_ids=list(run_ids), models=list(models or []), probes=False)

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

    # -- operator annotations ------------------------------------------------------------
    def save_human_judgment(
        self,
        run_id: str,
        response_id: str | None,
        *,
        kind: str,
        dimension: str,
        score: float,
        scale: tuple[float, float] | None,
        extra: dict | None = None,
    ):
        from storage.analyses import save_human_judgment

        self.flush()
        save_human_judgment(
            self.db, run_id, response_id, kind=kind, dimension=dimension, score=score, scale=scale, extra=extra
        )

    def judgments(self, run_id: str):
        from storage.analyses import load_judgments

        return load_judgments(self.db, run_ids=[run_id])

    def latest_extraction(self, user_id: str):
        from storage.analyses import latest_extraction

        return latest_extraction(self.db, user_id)

    def set_attribute_verdict(self, extraction_id: str, attribute_id: str, verdict: str | None) -> None:
        from storage.analyses import set_operator_verdict

        set_operator_verdict(self.db, extraction_id, attribute_id, verdict)

    def relevance(self, run_id: str):
        from storage.analyses import load_relevance

        return load_relevance(self.db, run_id)

    def save_human_relevance(
        self, run_id: str, query_id: str, target_kind: str, target_id: str, relevant: bool
    ) -> None:
        from storage.analyses import save_human_relevance

        self.flush()
        save_human_relevance(self.db, run_id, query_id, target_kind, target_id, relevant)

    def decide_relevance(
        self,
        run,
        bundle: UserBundle,
        *,
        embeddings: bool = False,
        llm: str | None = None,
        attributes: str = "latest",
    ) -> int:
        """Run the deciders for a stored run's query over its attribute targets and retrieved
        turns: gold and BM25 always, embeddings and an LLM (``llm``: provider:model) when asked;
        store them (earlier machine decisions replaced, human labels kept). Returns how many.

        ``attributes``: ``latest`` (the latest extraction, else the gold attributes), ``gold``,
        ``none`` or an extraction id (``storage.analyses.UnknownExtraction`` when there is none).
        Embeddings may load a model, so views call this from a worker thread."""
        from core.analysis import relevance as rel
        from storage.analyses import save_relevance

        self.flush()
        with self.connection() as db:
            query = bundle.query(run.spec.query_id)
            attrs, extraction_id = self._relevance_attributes(db, bundle, attributes)
            targets = rel.attribute_targets(bundle, query, run.spec.expression_type, attrs) + rel.turn_targets(
                run.plan.retrieved
            )
            if not targets:
                return 0
            decisions = rel.gold_decisions(targets) + rel.bm25_decisions(query.text, targets)
            if embeddings:
                from core.history.retrieval import Embedder
                from storage.embeddings import SqliteEmbeddingCache

                embedder = Embedder.configured(self.settings, SqliteEmbeddingCache(db))
                decisions += rel.embedding_decisions(query.text, targets, embedder.embed, model=embedder.id)
            if llm:
                decisions += asyncio.run(rel.llm_decisions(query.text, targets, llm, self.complete()))
            return save_relevance(
                db,
                run.id,
                query.id,
                decisions,
                texts={(t.kind, t.id): t.text for t in targets},
                extraction_id=extraction_id,
                replace=True,
            )

    # -- annotation queues and agreement (the judge lab) ---------------------------------
    def annotation_queue(self, name: str):
        """The stored queue (``storage.annotation_queues.Queue``); AnnotationError naming the known ones."""
        from storage.annotation_queues import queue

        return queue(self.db, name)

    def next_annotation_item(self, name: str, annotator: str):
        """The annotator's next unfinished item in their own order (``storage.annotation_queues.Item``),
        None once they have finished the queue."""
        from storage.annotation_queues import next_item

        self.flush()
        return next_item(self.db, name, annotator)

    def annotation_progress(self, name: str, annotator: str) -> tuple[int, int]:
        """(labelled, skipped) of ``annotator`` in queue ``name``."""
        from storage.annotation_queues import progress

        return progress(self.db, name).get(annotator, (0, 0))

    def annotation_order(self, name: str, annotator: str) -> list[int]:
        """The annotator's serving order of the queue's positions (stable across sessions)."""
        from storage.annotation_queues import serving_order

        return serving_order(self.annotation_queue(name), annotator)

    def save_annotation(self, item, annotator: str, label, *, blind: bool) -> None:
        """Store an annotator's label for a queue item and mark it done, in one transaction
        (``storage.annotation_labels.save_label``). AnnotationError for a label it refuses."""
        from storage.annotation_labels import save_label

        self.flush()
        save_label(self.db, item, annotator, label, blind=blind)

    def skip_annotation(self, item, annotator: str) -> None:
        """The annotator passes on the item: marked done, no label (``storage.annotation_labels.skip_item``)."""
        from storage.annotation_labels import skip_item

        self.flush()
        skip_item(self.db, item, annotator)

    def reveal_annotation(self, item):
        """What a blind queue hides about the item (``storage.annotation_queues.Revealed``)."""
        from storage.annotation_queues import reveal

        return reveal(self.db, item)

    def agreement(self, run_ids: list[str] | None = None, *, queue: str | None = None):
        """Agreement between every rater (annotators and judges) per dimension on these runs' answers
        (all runs when None), or on a queue's items (``storage.agreement.agreement``). Safe on any thread."""
        from storage.agreement import agreement
        from storage.export import RunFilter

        self.flush()
        f = RunFilter(run_ids=list(run_ids or []), probes=False)
        with self.connection() as db:
            return agreement(db, f, queue=queue)

    @staticmethod
    def _relevance_attributes(db, bundle: UserBundle, source: str) -> tuple[list, str | None]:
        from storage.analyses import latest_extraction, load_extraction

        if source == "none":
            return [], None
        if source != "gold":
            stored = latest_extraction(db, bundle.user.id) if source == "latest" else load_extraction(db, source)
            if stored is not None and stored.extraction.attributes:
                return [x.attribute for x in stored.extraction.attributes], stored.id
            if source != "latest":
                return [], stored.id if stored else None
        return list(bundle.attributes), None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._recorder is not None:
            self._recorder.close()
        self.db.close()
