"""Benchmark: hit@5 of gold evidence, sentence embeddings vs BM25.

    .venv/bin/python bench/retrieval.py [--context normal] [--k 5] [--seed 0]

For every sample user (``sample_data/users/*.json``) and every expression type they have, each
query (one per query group: MCQ / true-false variants share the open query's evidence) is asked
against the built history (default: Normal, 35K filler tokens from ``sample_data/filler``).
A query scores a hit when any of the top-k retrieved turns lies in a gold evidence session.
Without sample users it falls back to PrefEval (``../shared/datasets/prefeval``) and says so.
Figures are printed, not asserted. The first run embeds every turn once (CPU; minutes on a
2-vCPU machine); vectors are cached in memory for the rest of the run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from core.formats import load_path  # noqa: E402
from core.history.build import build_context  # noqa: E402
from core.history.retrieval import Embedder, InMemoryEmbeddingCache, hit_at_k, rank_units, turn_units  # noqa: E402


def load_data():
    users = REPO / "sample_data" / "users"
    filler = REPO / "sample_data" / "filler"
    pools = load_path(filler).fillers if any(filler.glob("*.json")) else []
    if any(users.glob("*.json")):
        return load_path(users).bundles, pools, "sample_data/users + sample_data/filler"
    prefeval = REPO.parent / "shared" / "datasets" / "prefeval"
    result = load_path(prefeval)
    return result.bundles, pools + result.fillers, f"PrefEval ({prefeval}) — no sample users found"


def one_per_group(queries):
    seen, out = set(), []
    for q in queries:
        key = q.group or q.id
        if key not in seen:
            seen.add(key)
            out.append(q)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--context", default="normal")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    bundles, pools, source = load_data()
    print(f"data: {source}; {len(bundles)} users; context {args.context} (seed {args.seed}); top-{args.k}")
    embedder = Embedder("all-MiniLM-L6-v2", InMemoryEmbeddingCache())
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    t0 = time.perf_counter()
    for b in bundles:
        for expr in b.expression_types():
            expression = expr or None
            for q in one_per_group(b.queries):
                ctx = build_context(
                    b, query=q, expression_type=expression, config=args.context, seed=args.seed, filler_pools=pools
                )
                if not ctx.evidence:
                    continue  # no gold evidence in this history: nothing to find
                units = turn_units(ctx)
                evidence = ctx.evidence_ids
                label = f"type {expr}" if expr else "untyped"
                for method in ("embedding", "bm25"):
                    got = rank_units(
                        q.text,
                        units,
                        method=method,
                        k=args.k,
                        embedder=embedder if method == "embedding" else None,
                        evidence_ids=evidence,
                    )
                    hits[(label, method)].append(hit_at_k(got))
                    hits[("all", method)].append(hit_at_k(got))
    elapsed = time.perf_counter() - t0
    labels = sorted({k[0] for k in hits if k[0] != "all"}) + ["all"]
    print(f"\n{'expression':12} {'queries':>7} {'embedding hit@' + str(args.k):>18} {'BM25 hit@' + str(args.k):>14}")
    for label in labels:
        e, b_ = hits[(label, "embedding")], hits[(label, "bm25")]
        if not e:
            continue
        print(f"{label:12} {len(e):7d} {sum(e) / len(e):18.3f} {sum(b_) / len(b_):14.3f}")
    print(
        f"\n({elapsed:.1f} s; {embedder.texts_encoded:,} texts embedded in {embedder.model_calls} model calls; "
        "embedding model all-MiniLM-L6-v2 — RealPref used sup-simcse-roberta-large)"
    )


if __name__ == "__main__":
    main()
