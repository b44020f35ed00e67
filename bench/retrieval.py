"""Benchmark: retrieval speed and quality, each engine against sentence-transformers (torch) measured
in the same run.

    .venv/bin/python bench/retrieval.py [--turns 1000] [--quick]

1. The first RAG prompt in a fresh process on a fresh database (`prefscope prompt maya p1-open
   --method rag --context normal`), minus the same prompt with zero-shot: what retrieval adds.
   Goal: ≤ 5 s more. Baseline: the same with ``embedding_backend = sentence-transformers``.
2. ``--turns`` real turns (the sample users' units and their filler, then LoCoMo's turns) embedded
   cold in a fresh process, import and load included. Goal: ≤ 25 s with identical top-5 for every
   sample query over them. Baseline: sentence-transformers.
3. A RAG `batch --dry-run` on a cold database against the same grid with zero-shot: the
   estimate never embeds, so they should take about as long.
4. Quality on the sample users (Normal context, one query per group): gold hit@5 for fp32, int8,
   sentence-transformers and BM25, and how often int8's top-5 equals sentence-transformers'.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _common import REPO, figure, line

PRE = [sys.executable, "-m", "tui.cli"]
ENGINES = {"onnx": "onnx-fp32", "onnx-int8": "onnx-int8", "sentence-transformers": "sentence-transformers"}


def fresh_prompt(method: str, backend: str) -> float:
    """Wall seconds of one `prefscope prompt` in a fresh process on a fresh database."""
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ | {"PREFSCOPE_EMBEDDING_BACKEND": backend, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp}
        args = ["--db", f"{tmp}/a.db", "prompt", "maya", "p1-open", "-e", "1", "-c", "normal", "-m", method]
        t0 = time.perf_counter()
        done = subprocess.run([*PRE, *args], cwd=REPO, env=env, capture_output=True, text=True)
        took = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"prompt {method} ({backend}) failed: {done.stderr[-800:]}")
        return took


def real_turns(n: int) -> tuple[list[str], str]:
    from core.formats import load_path
    from core.history.retrieval import session_units
    from core.methods.embed_ahead import ahead_texts

    users = load_path(REPO / "sample_data" / "users").bundles
    pools = load_path(REPO / "sample_data" / "filler").fillers
    texts = list(dict.fromkeys(t for b in users for t in ahead_texts(b, pools) if t not in {q.text for q in b.queries}))
    sample = len(texts)
    datasets = REPO.parent / "shared" / "datasets"
    added = []
    for name in ("locomo", "prefeval/filtered_inter_turns.json", "prefeval/explicit_preference/travel_restaurant.json"):
        if len(texts) >= n or not (datasets / name).exists():
            continue
        result = load_path(datasets / name)
        before = len(texts)
        sessions = [s for b in result.bundles for s in b.sessions] + [s for p in result.fillers for s in p.sessions]
        texts = list(dict.fromkeys(texts + [u.text for s in sessions for u in session_units(s)]))
        added.append(f"{min(len(texts), n) - before} {name.split('/')[0]}")
    texts = texts[:n]
    return texts, " + ".join([f"{min(sample, n)} sample units (median ~200 tokens)", *added]) + " turns"


COLD = (
    "import json, sys, time\n"
    "t0 = time.perf_counter()\n"
    "import numpy as np\n"
    "from core.history.retrieval import Embedder, InMemoryEmbeddingCache\n"
    "texts = json.load(open(sys.argv[1]))\n"
    "e = Embedder(cache=InMemoryEmbeddingCache(), backend=sys.argv[2])\n"
    "np.save(sys.argv[3], e.embed(texts))\n"
    "print(json.dumps({'seconds': time.perf_counter() - t0, 'id': e.id}))\n"
)


def cold_embed(texts: list[str], backend: str, tmp: str) -> tuple[float, np.ndarray]:
    src, out = f"{tmp}/texts.json", f"{tmp}/{backend}.npy"
    Path(src).write_text(json.dumps(texts))
    done = subprocess.run([sys.executable, "-c", COLD, src, backend, out], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cold embed ({backend}) failed: {done.stderr[-800:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"], np.load(out)


def top5(matrix: np.ndarray, query: np.ndarray) -> list[int]:
    scores = matrix @ query
    return list(np.lexsort((np.arange(len(scores)), -scores))[:5])


def dry_run(method: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        env = os.environ | {"XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp}
        grid = ["--user", "maya", "--expression", "1", "--context", "normal", "--method", method]
        grid += ["--model", "demo:oracle", "--dry-run"]
        sample = "from core.settings import Settings; from app.workbench import Workbench; import sys; "
        sample += "Workbench.open(Settings(db=sys.argv[1]), sys.argv[1]).close()"  # the sample users
        subprocess.run([sys.executable, "-c", sample, f"{tmp}/a.db"], cwd=REPO, env=env, check=True)
        t0 = time.perf_counter()
        done = subprocess.run([*PRE, "--db", f"{tmp}/a.db", "batch", *grid], cwd=REPO, env=env, capture_output=True)
        if done.returncode != 0:
            raise SystemExit(f"batch --dry-run {method} failed: {done.stderr[-800:]!r}")
        return time.perf_counter() - t0


def quality(k: int = 5) -> None:
    from core.formats import load_path
    from core.history.build import build_context
    from core.history.retrieval import Embedder, InMemoryEmbeddingCache, hit_at_k, rank_units, turn_units

    users = load_path(REPO / "sample_data" / "users").bundles
    pools = load_path(REPO / "sample_data" / "filler").fillers
    embedders = {b: Embedder(cache=InMemoryEmbeddingCache(), backend=b) for b in ENGINES}
    hits: dict[str, list[bool]] = defaultdict(list)
    same: dict[str, list[bool]] = defaultdict(list)
    overlap: dict[str, list[float]] = defaultdict(list)
    for b in users:
        for expr in b.expression_types():
            seen = set()
            for q in b.queries:
                if (q.group or q.id) in seen:
                    continue
                seen.add(q.group or q.id)
                ctx = build_context(b, query=q, expression_type=expr or None, config="normal", filler_pools=pools)
                if not ctx.evidence:
                    continue
                units = turn_units(ctx)
                ranked = {
                    name: rank_units(q.text, units, k=k, embedder=e, evidence_ids=ctx.evidence_ids)
                    for name, e in embedders.items()
                }
                ranked["bm25"] = rank_units(q.text, units, method="bm25", k=k, evidence_ids=ctx.evidence_ids)
                for name, got in ranked.items():
                    hits[name].append(hit_at_k(got))
                ref = [(r.session_id, r.turn_index) for r in ranked["sentence-transformers"]]
                for name in ("onnx", "onnx-int8"):
                    mine = [(r.session_id, r.turn_index) for r in ranked[name]]
                    same[name].append(mine == ref)
                    overlap[name].append(len(set(mine) & set(ref)) / max(1, len(ref)))
    n = len(hits["bm25"])
    print(
        f"\nquality on {n} sample queries (Normal context): gold hit@{k}; against sentence-transformers, "
        f"the share of queries with the same ordered top-{k} and the mean overlap of the top-{k} sets:"
    )
    for name in (*ENGINES, "bm25"):
        agree = f"{sum(same[name]) / n:.2f} / {sum(overlap[name]) / n:.2f}" if name in same else "—"
        line(f"{ENGINES.get(name, name)}: hit@{k} | same / overlap", f"{sum(hits[name]) / n:.3f} | {agree}")
    figure(
        "int8: gold hit@5 (top-5 overlap with torch)",
        "opt-in; report",
        f"{sum(hits['onnx-int8']) / n:.3f} ({sum(overlap['onnx-int8']) / n:.2f})",
        f"{sum(hits['sentence-transformers']) / n:.3f} torch",
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--quick", action="store_true", help="skip the quality pass")
    args = ap.parse_args()

    print("1. the first RAG prompt, fresh process and database (maya p1-open, Normal):")
    zero = statistics.median(fresh_prompt("zero-shot", "onnx") for _ in range(2))
    onnx = fresh_prompt("rag", "onnx") - zero
    torch_ = fresh_prompt("rag", "sentence-transformers") - zero
    line("zero-shot prompt (no retrieval)", f"{zero:.2f} s")
    line("RAG adds: onnx fp32", f"{onnx:.2f} s", "goal ≤ 5 s")
    line("RAG adds: sentence-transformers (baseline)", f"{torch_:.2f} s")
    figure("first RAG prompt: seconds added by retrieval", "≤ 5 s", f"{onnx:.1f} s", f"{torch_:.1f} s torch")

    texts, made_of = real_turns(args.turns)
    print(f"\n2. {len(texts):,} real turns embedded cold ({made_of}):")
    with tempfile.TemporaryDirectory() as tmp:
        onnx_s, a = cold_embed(texts, "onnx", tmp)
        int8_s, c = cold_embed(texts, "onnx-int8", tmp)
        torch_s, b = cold_embed(texts, "sentence-transformers", tmp)
    cosine = (a * b).sum(axis=1)
    from core.formats import load_path

    queries = [q.text for u in load_path(REPO / "sample_data" / "users").bundles for q in u.queries]
    qa, qb = cold_embed_queries(queries)
    equal = sum(top5(a, qa[i]) == top5(b, qb[i]) for i in range(len(queries)))
    line("onnx fp32 (import, load, encode)", f"{onnx_s:.1f} s", f"{len(texts) / onnx_s:.1f} turns/s")
    line("onnx int8", f"{int8_s:.1f} s", f"{len(texts) / int8_s:.1f} turns/s")
    line("sentence-transformers (baseline)", f"{torch_s:.1f} s", f"{len(texts) / torch_s:.1f} turns/s")
    line("fp32 vs torch: lowest cosine", f"{cosine.min():.6f}")
    line(f"fp32 vs torch: same top-5 over the {len(texts):,} turns", f"{equal}/{len(queries)} queries")
    int8_cos = (c * b).sum(axis=1)
    line("int8 vs torch: mean / lowest cosine", f"{int8_cos.mean():.4f} / {int8_cos.min():.4f}")
    figure(
        f"{len(texts):,} real turns embedded cold",
        "≤ 25 s, same top-5",
        f"{onnx_s:.1f} s, {equal}/{len(queries)} same",
        f"{torch_s:.1f} s torch",
    )
    figure(f"{len(texts):,} turns cold, int8 (opt-in)", "report", f"{int8_s:.1f} s", f"{torch_s:.1f} s torch")

    print("\n3. batch --dry-run on a cold database (maya, Normal, every query, demo:oracle):")
    rag, zs = dry_run("rag"), dry_run("zero-shot")
    line("rag", f"{rag:.2f} s")
    line("zero-shot (baseline)", f"{zs:.2f} s")
    figure("RAG batch --dry-run, cold ÷ zero-shot", "≈ 1", f"{rag / zs:.2f}×", f"{zs:.1f} s zero-shot")

    if not args.quick:
        quality()


def cold_embed_queries(queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from core.history.retrieval import Embedder, InMemoryEmbeddingCache

    return (
        Embedder(cache=InMemoryEmbeddingCache()).embed(queries),
        Embedder(cache=InMemoryEmbeddingCache(), backend="sentence-transformers").embed(queries),
    )


if __name__ == "__main__":
    main()
