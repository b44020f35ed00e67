"""Embedding ahead of need: afterwards a RAG plan embeds nothing; an estimate never embeds."""

from __future__ import annotations

import pytest

from core import methods
from core.formats import load_path
from core.history.build import build_context
from core.history.retrieval import Embedder, InMemoryEmbeddingCache
from core.methods.base import MethodOptions
from core.methods.embed_ahead import ahead_texts, embed_ahead
from tests.conftest import SAMPLE_DATA


@pytest.fixture(scope="module")
def maya_and_pools():
    users = {b.user.id: b for b in load_path(SAMPLE_DATA / "users").bundles}
    return users["maya"], load_path(SAMPLE_DATA / "filler").fillers


def _rag_plan(bundle, pools, embedder, *, estimate_only=False, query="p1-open", config="normal"):
    ctx = build_context(bundle, query=query, expression_type=1, config=config, filler_pools=pools)
    opts = MethodOptions(embedder=embedder, estimate_only=estimate_only)
    return methods.plan("rag", ctx, bundle.query(query), opts)


def test_after_embedding_ahead_a_rag_plan_over_normal_context_embeds_nothing(maya_and_pools):
    maya, pools = maya_and_pools
    cache = InMemoryEmbeddingCache()
    ahead = Embedder(cache=cache)
    seen = []
    result = embed_ahead(maya, pools, ahead, progress=lambda d, t: seen.append((d, t)))
    assert result.embedded == result.texts == len(ahead_texts(maya, pools)) and not result.stopped
    assert seen[-1] == (result.texts, result.texts)
    assert embed_ahead(maya, pools, ahead).embedded == 0  # a second pass finds everything cached
    for query in ("p1-open", "p3-open"):
        run = Embedder(cache=cache)
        plan = _rag_plan(maya, pools, run, query=query)
        assert run.model_calls == 0, f"{query}: a RAG plan still embedded {run.texts_encoded} texts"
        assert len(plan.retrieved) == 5 and plan.retrieved_by == "all-MiniLM-L6-v2@onnx-fp32"


def test_an_estimate_never_embeds_and_says_bm25_stood_in(maya_and_pools):
    maya, pools = maya_and_pools
    cold = Embedder(cache=InMemoryEmbeddingCache())
    plan = _rag_plan(maya, pools, cold, estimate_only=True)
    assert cold.model_calls == 0 and cold.texts_encoded == 0
    assert plan.retrieval_stand_in and plan.retrieved_by == "bm25" and len(plan.retrieved) == 5
    assert any("estimates never embed" in n for n in plan.notes)
    assert "retrieval_stand_in" in plan.model_dump()


def test_an_estimate_on_cached_vectors_is_the_run_plan(maya_and_pools):
    maya, pools = maya_and_pools
    cache = InMemoryEmbeddingCache()
    real = _rag_plan(maya, pools, Embedder(cache=cache))
    warm = Embedder(cache=cache)
    estimate = _rag_plan(maya, pools, warm, estimate_only=True)
    assert warm.model_calls == 0 and not estimate.retrieval_stand_in
    assert estimate.model_dump() == real.model_dump()
    assert "retrieval_stand_in" not in real.model_dump()


def test_prefeval_users_also_get_prefevals_own_candidates(maya_and_pools):
    from tests.conftest import dataset

    folder = dataset("prefeval")
    result = load_path(folder / "explicit_preference" / "travel_restaurant.json")
    bundle = result.bundles[0]
    texts = set(ahead_texts(bundle, result.fillers))
    ctx = build_context(bundle, query=bundle.queries[0].id, expression_type=1, config="simple")
    from core.benchmarks.prefeval.methods import rag_candidates

    wanted = {text for _, _, text in rag_candidates(ctx) if "{{output:" not in text}
    assert wanted and wanted <= texts
