"""Embedding a user's history before anyone asks (``prefscope import --embed``, ``prefscope embed``,
the TUI's background worker), so the first RAG prompt only embeds its question.

The texts are exactly the ones the RAG methods embed: every user turn with its reply (RealPref's
unit) over the user's sessions and the filler pools their contexts draw from, PrefEval's
per-message candidates for PrefEval users, and the user's query texts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.history.filler import select_pools
from core.history.retrieval import Embedder, EmbeddingStopped, Progress, session_units
from core.methods.prefeval import rag_texts
from core.model import FillerPool, UserBundle


def ahead_texts(bundle: UserBundle, pools: Iterable[FillerPool]) -> list[str]:
    """Distinct texts a RAG run over this user's history would embed, the user's own sessions first."""
    sessions = list(bundle.sessions) + [
        s for p in select_pools(None, bundle.user.source, list(pools), "normal") for s in p.sessions
    ]
    texts = [u.text for s in sessions for u in session_units(s)]
    if bundle.user.source == "prefeval":
        texts += [text for s in sessions for text in rag_texts(s)]
    texts += [q.text for q in bundle.queries]
    return list(dict.fromkeys(texts))


@dataclass
class AheadResult:
    texts: int
    #: How many were embedded now (the rest were cached already).
    embedded: int
    stopped: bool = False


def embed_ahead(
    bundle: UserBundle,
    pools: Iterable[FillerPool],
    embedder: Embedder,
    *,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> AheadResult:
    """Embed what is not cached yet; ``progress(done, total)`` per batch, counting the texts cached
    before as done (a resumed embed goes on from where it stopped); a stop keeps what finished."""
    texts = ahead_texts(bundle, pools)
    todo = embedder.missing(texts)
    before = embedder.texts_encoded
    cached = len(texts) - len(todo)

    def overall(done: int, _todo: int) -> None:
        if progress is not None:
            progress(cached + done, len(texts))

    try:
        if todo:
            embedder.embed(todo, progress=overall, stop=stop)
    except EmbeddingStopped:
        return AheadResult(len(texts), embedder.texts_encoded - before, stopped=True)
    return AheadResult(len(texts), embedder.texts_encoded - before)
