"""Embedding a user's history before anyone asks (``prefscope import --embed``, ``prefscope embed``,
the TUI's background worker), so the first RAG prompt only embeds its question.

The texts are exactly the ones the RAG methods embed: every user turn with its reply (RealPref's
unit) over the user's sessions and the filler pools their contexts draw from, the texts the user's
benchmark embeds of its own (:attr:`core.benchmark.Benchmark.rag_texts`: PrefEval's per-message
candidates), and the user's query texts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from core.benchmark import for_source
from core.history.filler import select_pools
from core.history.retrieval import Embedder, EmbeddingStopped, Progress, session_units
from core.model import FillerPool, Session, UserBundle
from core.registry import Entry


def ahead_texts(bundle: UserBundle, pools: Iterable[FillerPool]) -> list[str]:
    """Distinct texts a RAG run over this user's history would embed, the user's own sessions first."""
    sessions = list(bundle.sessions) + [
        s for p in select_pools(None, bundle.user.source, list(pools), "normal") for s in p.sessions
    ]
    texts = [u.text for s in sessions for u in session_units(s)]
    if (rag_texts := benchmark_rag_texts(bundle.user.source)) is not None:
        texts += [text for s in sessions for text in rag_texts(s)]
    texts += [q.text for q in bundle.queries]
    return list(dict.fromkeys(texts))


def benchmark_rag_texts(source: str) -> Callable[[Session], list[str]] | None:
    """The per-session texts the RAG of the benchmark that reads ``source`` embeds besides the
    turn units (None: that benchmark, or the source, has none)."""
    benchmark = for_source(source)
    if benchmark is None or benchmark.rag_texts is None:
        return None
    found: Callable[[Session], list[str]] = Entry("rag_texts", benchmark.rag_texts, "").load()
    return found


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
