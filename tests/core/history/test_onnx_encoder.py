"""The ONNX engine: the same vectors and rankings as sentence-transformers, without torch; batches
cached as they are made; engines never share cache keys."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from core.history.embedding_model import RetrievalError, read_folder, resolve_model_path
from core.history.encoders import choose_engine
from core.history.retrieval import Embedder, EmbeddingStopped, InMemoryEmbeddingCache, rank_units, turn_units
from tests.conftest import SAMPLE_DATA

TEXTS = [f"Turn {i}: I {'really ' * (i % 7)}like hiking with my dog near lake number {i}." for i in range(40)]


def test_default_engine_is_onnx_fp32_and_ids_keep_engines_apart():
    fp32, int8, torch_ = (Embedder(backend=b) for b in ("onnx", "onnx-int8", "sentence-transformers"))
    assert fp32.id == "all-MiniLM-L6-v2@onnx-fp32"
    assert int8.id == "all-MiniLM-L6-v2@onnx-int8"
    assert torch_.id == "all-MiniLM-L6-v2@sentence-transformers"
    with pytest.raises(RetrievalError, match="unknown embedding backend 'gpu'"):
        Embedder(backend="gpu")


def test_a_folder_onnx_cannot_run_falls_back_to_sentence_transformers_and_says_why(tmp_path):
    src = resolve_model_path("all-MiniLM-L6-v2")
    folder = tmp_path / "cls-model"
    shutil.copytree(src, folder, ignore=shutil.ignore_patterns("*.safetensors"))
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text()) | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}
    pooling.write_text(json.dumps(config))
    engine = choose_engine(str(folder), "onnx")
    assert engine.kind == "sentence-transformers"
    assert "pooling other than mean tokens" in engine.fallback_note
    assert read_folder("all-MiniLM-L6-v2").unsupported is None


def test_each_batch_is_cached_as_made_and_a_stop_keeps_what_finished():
    cache = InMemoryEmbeddingCache()
    first = Embedder(cache=cache, batch_size=8)
    seen: list[tuple[int, int]] = []
    with pytest.raises(EmbeddingStopped, match="stopped after 16 of 40"):
        first.embed(TEXTS, progress=lambda done, total: seen.append((done, total)), stop=lambda: len(seen) >= 2)
    assert seen == [(8, 40), (16, 40)] and len(cache) == 16
    again = Embedder(cache=cache, batch_size=8)
    assert len(again.missing(TEXTS)) == 24
    vecs = again.embed(TEXTS)
    assert again.texts_encoded == 24 and len(cache) == 40
    assert vecs.shape == (40, 384) and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    fresh = Embedder(cache=InMemoryEmbeddingCache(), batch_size=8).embed(TEXTS)
    assert np.abs(fresh - vecs).max() < 1e-5  # batching and order do not change a vector


def test_embedding_with_onnx_never_imports_torch():
    code = (
        "import sys\n"
        "from core.history.retrieval import Embedder\n"
        "v = Embedder().embed(['a quiet dinner place', 'hiking with my dog'])\n"
        "assert v.shape == (2, 384)\n"
        "print(','.join(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _real_turns() -> list[str]:
    from core.formats import load_path
    from core.history.build import build_context

    users = load_path(SAMPLE_DATA / "users").bundles
    pools = load_path(SAMPLE_DATA / "filler").fillers
    texts: list[str] = []
    for bundle in users:
        ctx = build_context(bundle, query=bundle.queries[0].id, expression_type=1, config="normal", filler_pools=pools)
        texts += [u.text for u in turn_units(ctx)]
    return list(dict.fromkeys(texts))


@pytest.mark.slow
def test_onnx_fp32_matches_sentence_transformers_on_real_turns_and_ranks_the_same():
    """The acceptance: cosine ≥ 0.9999 per turn, identical top-5 for every sample query."""
    from core.formats import load_path
    from core.history.build import build_context

    texts = _real_turns()
    assert len(texts) > 150
    onnx = Embedder(cache=InMemoryEmbeddingCache())
    torch_ = Embedder(cache=InMemoryEmbeddingCache(), backend="sentence-transformers")
    a, b = onnx.embed(texts), torch_.embed(texts)
    cosine = (a * b).sum(axis=1)
    assert cosine.min() >= 0.9999, f"lowest cosine {cosine.min():.6f}"
    users = load_path(SAMPLE_DATA / "users").bundles
    pools = load_path(SAMPLE_DATA / "filler").fillers
    compared = 0
    for bundle in users:
        ctx = build_context(bundle, query=bundle.queries[0].id, expression_type=1, config="normal", filler_pools=pools)
        units = turn_units(ctx)
        for query in bundle.queries:
            top = [rank_units(query.text, units, k=5, embedder=e) for e in (onnx, torch_)]
            assert [(r.session_id, r.turn_index) for r in top[0]] == [(r.session_id, r.turn_index) for r in top[1]]
            compared += 1
    assert compared >= 20


@pytest.mark.slow
def test_export_is_written_once_into_the_given_folder_and_int8_stays_close(tmp_path):
    from core.history.onnx_export import ensure_graph, graph_path

    folder = read_folder("all-MiniLM-L6-v2")
    fp32 = ensure_graph(folder, "fp32", tmp_path)
    assert fp32 == graph_path(folder, "fp32", tmp_path) and fp32.stat().st_size > 50_000_000
    stamp = fp32.stat().st_mtime_ns
    assert ensure_graph(folder, "fp32", tmp_path).stat().st_mtime_ns == stamp  # reused, not exported again
    int8 = ensure_graph(folder, "int8", tmp_path)
    assert int8.stat().st_size < fp32.stat().st_size / 2
    assert not list(tmp_path.rglob("*.tmp"))
    from core.history.onnx_encoder import OnnxEncoder

    texts = _real_turns()[:64]
    exact = OnnxEncoder(folder, fp32).encode(texts)
    quick = OnnxEncoder(folder, int8).encode(texts)
    assert (exact * quick).sum(axis=1).min() > 0.95


def test_a_batch_of_long_texts_goes_through_the_graph_in_small_runs_with_the_same_vectors():
    """Runs of at most RUN_TOKENS padded tokens (faster on few cores than 32 rows of 256 tokens);
    short texts still share a run, and a text's vector does not depend on its run."""
    from core.history.onnx_encoder import RUN_TOKENS, OnnxEncoder
    from core.history.onnx_export import ensure_graph

    folder = read_folder("all-MiniLM-L6-v2")
    encoder = OnnxEncoder(folder, ensure_graph(folder), threads=1)
    shapes: list[tuple[int, int]] = []

    class Recording:
        def __init__(self, inner):
            self.inner = inner

        def run(self, names, feeds):
            shapes.append(feeds["input_ids"].shape)
            return self.inner.run(names, feeds)

    encoder.session = Recording(encoder.session)
    long = [" ".join(f"the trail {i} by lake {j}" for j in range(60)) for i in range(32)]
    short = [f"my dog {i}" for i in range(32)]
    vecs = encoder.encode(long + short, batch_size=32)
    assert max(rows * width for rows, width in shapes) <= RUN_TOKENS
    assert max(rows for rows, _ in shapes) == 32  # the short batch runs whole
    alone = np.stack([encoder.encode([t])[0] for t in (long[5], short[5])])
    assert np.abs(vecs[[5, 37]] - alone).max() < 1e-5


def test_runs_keep_rows_times_the_longest_within_the_budget():
    from core.history.onnx_encoder import runs

    assert runs([], 100) == []
    assert runs([60, 50, 40, 10, 10], 100) == [(0, 1), (1, 3), (3, 5)]
    assert runs([300, 20, 20], 100) == [(0, 1), (1, 3)]  # longer than the budget: alone
    assert runs([10, 90], 100) == [(0, 1), (1, 2)]  # the longest row of a run sets its width
