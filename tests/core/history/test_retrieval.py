import subprocess
import sys

import pytest

from core.history.build import build_context
from core.history.embedding_model import resolve_model_path
from core.history.retrieval import (
    Embedder,
    InMemoryEmbeddingCache,
    RetrievalError,
    hit_at_k,
    rank_units,
    retrieve,
    turn_units,
)


@pytest.fixture(scope="module")
def sample_pool():
    from core.formats import load_path
    from tests.conftest import SAMPLE_DATA

    folder = SAMPLE_DATA / "filler"
    if not any(folder.glob("*.json")):
        pytest.skip("sample filler pool not written yet")
    return load_path(folder).fillers


@pytest.fixture(scope="module")
def mini_history(sample_pool):
    """A realistic mini history: the user's sessions scattered among ~35K tokens of everyday chat."""
    from core.formats import load_path
    from tests.core.conftest import FIXTURES

    mara = load_path(FIXTURES / "mara.json").bundles[0]
    return mara, build_context(
        mara, query="q1-open", expression_type=1, config="normal", seed=5, filler_pools=sample_pool
    )


@pytest.fixture(scope="module")
def embedder():
    """One model load for the module (slow tests)."""
    e = Embedder("all-MiniLM-L6-v2", InMemoryEmbeddingCache())
    e.embed(["warm up"])
    return e


def test_units_pair_user_turn_with_following_reply(mara):
    ctx = build_context(mara, query="q1-open", expression_type=4, config="simple")
    units = turn_units(ctx)
    first = [u for u in units if u.session_id == "s-p1-e4a"]
    assert [u.turn_index for u in first] == [0, 2]
    assert first[0].text.startswith("Went to that new tapas bar") and "exhausting" in first[0].text


@pytest.mark.parametrize(
    "question,evidence",
    [
        ("Which restaurant should I book for a calm dinner with my sister?", "s-p1-e1"),
        ("Can you find dog-friendly cottages for a trip with my greyhound?", "s-p2-e1"),
    ],
)
def test_bm25_finds_planted_evidence(mini_history, question, evidence):
    """BM25 is lexical: these questions share words with the evidence turn (RealPref's own open
    queries often share none, which is what bench/retrieval.py measures)."""
    mara, ctx = mini_history
    got = rank_units(question, turn_units(ctx), method="bm25", k=5, evidence_ids={evidence})
    assert evidence in [r.session_id for r in got] and hit_at_k(got)
    assert [r.rank for r in got] == [1, 2, 3, 4, 5]
    assert all(a.similarity >= b.similarity for a, b in zip(got, got[1:]))


@pytest.mark.slow
def test_embeddings_find_planted_evidence(mini_history, embedder):
    mara, ctx = mini_history
    got = retrieve(mara.query("q1-open").text, ctx, method="embedding", k=5, embedder=embedder)
    assert "s-p1-e1" in [r.session_id for r in got]
    hit = next(r for r in got if r.session_id == "s-p1-e1")
    assert hit.is_evidence and -1.0 <= hit.similarity <= 1.0


@pytest.mark.slow
def test_second_call_is_served_from_cache(mini_history, embedder):
    mara, ctx = mini_history
    e = Embedder("all-MiniLM-L6-v2", embedder.cache)  # shares the module's cache (turns may be warm)
    first = retrieve("a quiet place for dinner", ctx, embedder=e)
    calls = e.model_calls
    assert calls >= 1  # at least the new query text
    assert len(embedder.cache) >= len(turn_units(ctx)) + 1
    second = retrieve("a quiet place for dinner", ctx, embedder=e)
    assert e.model_calls == calls  # query and all turns came from the cache
    assert [(r.session_id, r.turn_index) for r in first] == [(r.session_id, r.turn_index) for r in second]


@pytest.mark.slow
def test_vectors_are_float32_bytes_in_the_cache(embedder):
    import numpy as np

    cache = InMemoryEmbeddingCache()
    e = Embedder("all-MiniLM-L6-v2", cache)
    v = e.embed(["hello world"])
    assert v.dtype == np.float32 and v.shape == (1, 384)
    (blob,) = cache._data.values()
    assert len(blob) == 384 * 4
    assert abs(float(np.linalg.norm(v[0])) - 1.0) < 1e-4


def test_unknown_model_fails_clearly_without_download():
    with pytest.raises(RetrievalError, match="not available offline"):
        resolve_model_path("princeton-nlp/sup-simcse-roberta-large")
    assert resolve_model_path("all-MiniLM-L6-v2").endswith("model")


def test_unknown_method(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="simple")
    with pytest.raises(RetrievalError, match="unknown retrieval method"):
        retrieve("x", ctx, method="tfidf")


@pytest.mark.slow
def test_importing_core_prompting_does_not_load_torch():
    code = (
        "import sys, core.history.build, core.methods, core.benchmarks.realpref.methods, core.benchmarks.cupid.methods, core.history.retrieval, core.history.tokens; "
        "bad = [m for m in ('torch', 'sentence_transformers', 'litellm', 'textual') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
