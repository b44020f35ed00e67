"""Benchmark: context building and retrieval cost.

    .venv/bin/python bench/context.py

Prints
1. build + count of an Extreme (35K interval + 210K tail) context ÷ a bare tiktoken
   ``encode_ordinary`` of the same history text (target ≤ 1.5×), cold (empty count cache) and
   warm (same process, second build). Measured twice: with the filler pools as they are (small
   pools are reused, and reused text is counted once) and with every filler session made unique
   (the worst case: every token is encoded);
2. cold embedding time for 1,000 turns (all-MiniLM-L6-v2, CPU), model load timed separately;
3. warm retrieval over those 1,000 turns with every vector cached (target ≤ 50 ms).
Figures are printed, not asserted. Needs no network.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _common import figure  # noqa: E402

from core.formats import FormatError, load_path  # noqa: E402
from core.history import tokens  # noqa: E402
from core.history.build import build_context  # noqa: E402
from core.model import FillerPool  # noqa: E402


def load_user():
    users = REPO / "sample_data" / "users"
    if any(users.glob("*.json")):
        bundles = load_path(users).bundles
        typed = [b for b in bundles if b.expression_types() != [0]]
        return (typed or bundles)[0], "sample_data/users"
    return load_path(REPO / "tests" / "core" / "fixtures" / "mara.json").bundles[0], "tests/core/fixtures"


def load_pools():
    pools, used = [], []
    if any((REPO / "sample_data" / "filler").glob("*.json")):
        pools += load_path(REPO / "sample_data" / "filler").fillers
        used.append("sample_data/filler")
    prefeval = REPO.parent / "shared" / "datasets" / "prefeval"
    if prefeval.exists():
        try:
            pools += load_path(prefeval).fillers
            used.append("PrefEval filtered_inter_turns")
        except (FormatError, ModuleNotFoundError) as exc:
            print(f"(PrefEval filler not used: {exc})")
    if not pools:
        pools = load_path(REPO / "tests" / "core" / "fixtures" / "filler.json").fillers
        used.append("tests/core/fixtures/filler.json")
    return pools, used


def unique_variants(pools, copies: int) -> list[FillerPool]:
    """The pools repeated ``copies`` times with every turn text made distinct (no count-cache reuse)."""
    sessions = []
    for c in range(copies):
        for p in pools:
            for s in p.sessions:
                turns = [t.model_copy(update={"content": f"{t.content} ({c})"}) for t in s.turns]
                sessions.append(s.model_copy(update={"id": f"{p.id}:{s.id}:v{c}", "turns": turns}))
    return [FillerPool(id="unique", sessions=sessions)]


def best_of(fn, n=3):
    times = []
    result = None
    for _ in range(n):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def extreme_ratio(bundle, pools, label):
    query = bundle.queries[0] if bundle.queries else None
    enc = tokens.encoder()

    def cold():
        tokens.clear_cache()
        return build_context(
            bundle,
            query=query,
            config="extreme",
            seed=0,
            filler_pools=pools,
            expression_type=bundle.expression_types()[0] or None,
        )

    cold_t, ctx = best_of(cold)
    warm_t, _ = best_of(
        lambda: build_context(
            bundle,
            query=query,
            config="extreme",
            seed=0,
            filler_pools=pools,
            expression_type=bundle.expression_types()[0] or None,
        )
    )
    text = "\n".join(t.content for cs in ctx.sessions for t in cs.session.turns)
    bare_t, n = best_of(lambda: len(enc.encode_ordinary(text)))
    print(
        f"[{label}] Extreme: {ctx.history_tokens:,} history tokens ({n:,} in the joined text), "
        f"{len(ctx.sessions)} sessions, reused filler: {ctx.reused_filler}, within ±2%: {ctx.within_target}"
    )
    print(f"  bare tiktoken encode: {bare_t * 1000:7.1f} ms")
    print(f"  build+count cold:     {cold_t * 1000:7.1f} ms  → ratio {cold_t / bare_t:.2f}× (target ≤ 1.5×)")
    print(f"  build+count warm:     {warm_t * 1000:7.1f} ms  → ratio {warm_t / bare_t:.2f}×")
    figure(
        f"Extreme build+count, cold ÷ bare tiktoken ({label})",
        "≤ 1.5×",
        f"{cold_t / bare_t:.2f}× (warm {warm_t / bare_t:.2f}×)",
        f"tiktoken {bare_t * 1000:.0f} ms",
    )
    return ctx


def embedding_figures(ctx, query_text):
    from core.history.encoders import encoder_for
    from core.history.retrieval import Embedder, InMemoryEmbeddingCache, rank_units, turn_units

    units = list({u.text: u for u in turn_units(ctx)}.values())
    i = 0
    while len(units) < 1000 and units:  # pad with distinct variants when the history is small
        u = units[i % len(units)]
        units.append(type(u)(u.session_id, u.session_key, u.turn_index, f"{u.user} [{i}]", u.assistant, u.is_filler))
        i += 1
    units = units[:1000]
    emb = Embedder("all-MiniLM-L6-v2", InMemoryEmbeddingCache())
    t = time.perf_counter()
    encoder_for(emb.engine)
    load_t = time.perf_counter() - t
    t = time.perf_counter()
    emb.embed([u.text for u in units])
    cold_t = time.perf_counter() - t
    rank_units(query_text, units, k=5, embedder=emb)  # caches the query vector
    calls = emb.model_calls
    times = []
    for _ in range(20):
        t = time.perf_counter()
        rank_units(query_text, units, k=5, embedder=emb)
        times.append(time.perf_counter() - t)
    print(
        f"embeddings: model load {load_t:.2f} s; cold embedding of {len(units):,} turns {cold_t:.2f} s "
        f"({len(units) / cold_t:.0f} turns/s)"
    )
    print(
        f"warm retrieval over {len(units):,} cached turns: median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms (target ≤ 50 ms); model calls during warm runs: {emb.model_calls - calls}"
    )
    figure(
        f"warm retrieval over {len(units):,} cached turns",
        "≤ 50 ms",
        f"{statistics.median(times) * 1000:.1f} ms",
        f"cold embedding {cold_t:.1f} s",
    )


def main() -> None:
    bundle, user_src = load_user()
    pools, used = load_pools()
    pool_sessions = sum(len(p.sessions) for p in pools)
    print(f"user {bundle.user.id} from {user_src}; filler: {', '.join(used)} ({pool_sessions} sessions)")
    ctx = extreme_ratio(bundle, pools, "pools as they are")
    per_copy = sum(tokens.count_tokens(t.content) for p in pools for s in p.sessions for t in s.turns) or 1
    extreme_ratio(bundle, unique_variants(pools, 250_000 // per_copy + 2), "all filler unique")
    query_text = bundle.queries[0].text if bundle.queries else "what should I do this weekend?"
    embedding_figures(ctx, query_text)


if __name__ == "__main__":
    main()
