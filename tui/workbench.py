"""The workbench service: what the TUI and the CLI ask of core and storage, in one place.

It owns the main-thread database connection (reads), the storage recorder (the single writer
for runs) and the engine wiring. Views call it; it never touches widgets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.model import FillerPool, UserBundle
from core.plan import PromptPlan
from core.providers.base import ModelSpec
from core.run.engine import Engine, EngineOptions
from core.run.spec import RunEvent, RunSpec
from core.settings import Settings

SAMPLE_DATA = Path(__file__).resolve().parent.parent / "sample_data"


@dataclass(frozen=True)
class Estimate:
    """Before sending: prompt tokens per model and each model's input cost (None = unknown)."""

    prompt_tokens: int
    #: (model id, is demo, input cost in USD or None when the price is unknown)
    models: list[tuple[str, bool, float | None]]

    def text(self) -> str:
        n = len(self.models)
        parts = [
            f"{self.prompt_tokens:,} prompt tokens × {n} model{'s' if n != 1 else ''} = "
            f"{self.prompt_tokens * n:,} tokens in"
        ]
        priced = [c for _, demo, c in self.models if not demo and c is not None]
        unknown = [m for m, demo, c in self.models if not demo and c is None]
        demos = sum(1 for _, demo, _ in self.models if demo)
        if priced:
            parts.append(f"≈ ${sum(priced):.4f} input")
        if unknown:
            parts.append(f"cost n/a for {', '.join(unknown)}")
        if demos:
            parts.append(f"{demos} demo model{'s' if demos != 1 else ''} free")
        return " · ".join(parts)


class Workbench:
    def __init__(
        self,
        settings: Settings,
        db_path: Path | None = None,
        *,
        provider_for: Callable[[ModelSpec], object] | None = None,
    ):
        """``provider_for`` replaces the provider registry (tests inject scripted providers)."""
        from storage.db import open_db

        self.settings = settings
        self._provider_for = provider_for
        self.db_path = Path(db_path or settings.db).expanduser()
        self.db = open_db(self.db_path)
        self._users: dict[str, UserBundle] = {}
        self._pools: list[FillerPool] | None = None
        self._recorder = None

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
        if user_id not in self._users:
            from storage.users import load_user

            self._users[user_id] = load_user(self.db, user_id)
        return self._users[user_id]

    def filler_pools(self) -> list[FillerPool]:
        if self._pools is None:
            from storage.fillers import load_filler_pools

            self._pools = load_filler_pools(self.db)
        return self._pools

    def search_turns(self, text: str, user_id: str | None = None):
        from storage.search import search_turns

        return search_turns(self.db, text, user_id)

    # -- runs ----------------------------------------------------------------------------
    def prepare(self, spec: RunSpec, bundle: UserBundle, pools: list[FillerPool]) -> PromptPlan:
        """Build the context and the method's prompt plan. It may load the embedding model, so
        views call it from a worker thread: it opens its own connection and takes the user and
        pools already loaded on the calling thread (a connection belongs to its thread)."""
        from core.run.prepare import prepare_plan
        from storage.db import open_db
        from storage.embeddings import SqliteEmbeddingCache
        from storage.summaries import SqliteSummaryCache

        windows = {m.id: self.provider(m).context_window(m) for m in spec.models}
        db = open_db(self.db_path)
        try:
            return prepare_plan(
                spec,
                bundle,
                pools,
                self.settings,
                embedding_cache=SqliteEmbeddingCache(db),
                summary_cache=SqliteSummaryCache(db),
                windows=windows,
            )
        finally:
            db.close()

    def recorder(self):
        if self._recorder is None:
            from storage.recorder import RunRecorder

            self._recorder = RunRecorder(self.db_path)
        return self._recorder

    def provider(self, spec: ModelSpec):
        if self._provider_for is not None:
            return self._provider_for(spec)
        from core.providers import get_provider

        if spec.provider == "replay":  # served from this database's response cache (read on the UI thread)
            from storage.runs import SqliteResponseCache

            return get_provider(spec, self.settings, response_cache=SqliteResponseCache(self.db))
        return get_provider(spec, self.settings)

    def engine(self, emit: Callable[[RunEvent], None], judges=()) -> Engine:
        return Engine(self.provider, emit, judges=judges, options=EngineOptions())

    def estimate(self, spec: RunSpec, plan: PromptPlan) -> Estimate:
        """Prompt tokens per model and the input cost where a price is known (thread-safe)."""
        tokens = plan.total_tokens
        rows = []
        for m in spec.models:
            try:
                cost = self.provider(m).cost_usd(m, tokens, 0)
            except Exception:  # an unknown provider has no price; the run itself will say why
                cost = None
            rows.append((m.id, m.is_demo, cost))
        return Estimate(tokens, rows)

    # -- history of runs -----------------------------------------------------------------
    def list_runs(self, user_id: str | None = None, limit: int = 500):
        from storage.runs import list_runs

        return list_runs(self.db, user_id=user_id, limit=limit)

    def load_run(self, run_id: str):
        from storage.runs import load_run

        return load_run(self.db, run_id)

    def export_runs(self, run_ids: list[str], path: Path, *, fmt: str = "csv") -> int:
        """Export the runs (one row per final response, scores in columns) through storage.export."""
        from storage.export import RunFilter, export

        self.flush()
        path = Path(path).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as fh:
            return export(self.db, fh, f=RunFilter(run_ids=list(run_ids)), fmt=fmt)

    def flush(self) -> None:
        """Wait until every recorded event is in the database (before reading a run back)."""
        if self._recorder is not None:
            self._recorder.flush()

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

    def decide_relevance(self, run, bundle: UserBundle, *, embeddings: bool = False) -> int:
        """Run the offline deciders (gold, BM25, optionally embeddings) for a stored run's query
        over its attribute targets (latest extraction, else gold attributes) and retrieved turns;
        store them (earlier machine decisions replaced, human labels kept). Returns how many.
        Embeddings may load a model, so views call this from a worker thread: it opens its own
        connection."""
        from core.analysis import relevance as rel
        from storage.analyses import latest_extraction, save_relevance
        from storage.db import open_db

        self.flush()
        db = open_db(self.db_path)
        try:
            query = bundle.query(run.spec.query_id)
            stored = latest_extraction(db, bundle.user.id)
            attrs = [x.attribute for x in stored.extraction.attributes] if stored else list(bundle.attributes)
            targets = rel.attribute_targets(bundle, query, run.spec.expression_type, attrs) + rel.turn_targets(
                run.plan.retrieved
            )
            if not targets:
                return 0
            decisions = rel.gold_decisions(targets) + rel.bm25_decisions(query.text, targets)
            if embeddings:
                from core.history.retrieval import Embedder
                from storage.embeddings import SqliteEmbeddingCache

                embed = Embedder(self.settings.embedding_model, SqliteEmbeddingCache(db)).embed
                decisions += rel.embedding_decisions(query.text, targets, embed)
            return save_relevance(
                db,
                run.id,
                query.id,
                decisions,
                texts={(t.kind, t.id): t.text for t in targets},
                extraction_id=stored.id if stored else None,
                replace=True,
            )
        finally:
            db.close()

    def close(self) -> None:
        if getattr(self, "_closed", False):
            return
        self._closed = True
        if self._recorder is not None:
            self._recorder.close()
        self.db.close()


@lru_cache(maxsize=1)
def default_models() -> tuple[str, ...]:
    return ("demo:generic", "demo:retrieval", "demo:oracle")


def model_specs(ids: list[str], settings: Settings, base_url: str | None = None) -> list[ModelSpec]:
    return [ModelSpec(id=i, base_url=base_url) for i in ids]
