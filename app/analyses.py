"""Analyses of stored runs: the find → know → apply diagnosis, heatmaps, operator scores and
verdicts, extracted attributes and relevance decisions."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from app.base import Base
from core.model import UserBundle

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.analysis.diagnosis import Answer, Diagnosis


class Analyses(Base):
    def diagnoses(self, run_ids: list[str]) -> list[tuple[Answer, Diagnosis, dict]]:
        """:meth:`iter_diagnoses` as a list."""
        return list(self.iter_diagnoses(run_ids))

    def iter_diagnoses(self, run_ids: list[str]) -> Iterator[tuple[Answer, Diagnosis, dict]]:
        """One (answer, diagnosis, factor values) per final answer of each run, from stored rows
        only: the run, the runs probing it, the stored user (``core.analysis.diagnosis``). One run
        is in memory at a time (its plan holds the whole prompt; ~200 KB each), so a batch of any
        size streams. Safe on any thread (a worker's own connection; users loaded there are not
        cached)."""
        from core.analysis.diagnosis import diagnose
        from core.analysis.diagnosis_cases import cases_of
        from storage.runs import load_run, probe_run_ids
        from storage.users import UnknownUser, load_user

        self.flush()
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
                for case in cases_of(run, users[uid], probe_runs):
                    yield case.answer(), diagnose(case), factors

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

    def save_judgments(self, run_id: str, items) -> int:
        """Store judgments of a run's answers: (response id, ``core.judges.base.Judgment``) pairs."""
        from storage.analyses import save_judgments

        return save_judgments(self.db, run_id, items)

    def judgments(self, run_id: str):
        from storage.analyses import load_judgments

        return load_judgments(self.db, run_ids=[run_id])

    def latest_extraction(self, user_id: str):
        from storage.analyses import latest_extraction

        return latest_extraction(self.db, user_id)

    def load_extraction(self, extraction_id: str | None, user_id: str):
        """Extraction ``extraction_id``, or the user's latest (None when there is none). Raises
        ``app.errors.UnknownExtraction`` for an id that is not stored."""
        from storage.analyses import latest_extraction, load_extraction

        return load_extraction(self.db, extraction_id) if extraction_id else latest_extraction(self.db, user_id)

    def save_extraction(self, extraction, embedding_model: str | None) -> str:
        """Store an attribute extraction (``core.analysis.attributes``); its id."""
        from storage.analyses import save_extraction

        return save_extraction(self.db, extraction, embedding_model=embedding_model)

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
        ``none`` or an extraction id (``storage.ids.UnknownExtraction`` when there is none).
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

    def paired_comparison(self, a: str, b: str, batches, metric: str | None, judge: str | None):
        """B against A (``storage.compare.paired_comparison``): each side a run id or batch name as
        `prefscope compare` takes them. Raises ``app.reports.ReportError``."""
        from storage.compare import paired_comparison, side_for

        db = self.db
        return paired_comparison(db, side_for(db, a, batches), side_for(db, b, batches), metric, judge)

    def embedding_cache(self, db=None):
        """The stored embedding cache (``storage.embeddings.SqliteEmbeddingCache``) on connection
        ``db``: one from :meth:`connection` on a worker thread, the workbench's own by default."""
        from storage.embeddings import SqliteEmbeddingCache

        return SqliteEmbeddingCache(self.db if db is None else db)

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
