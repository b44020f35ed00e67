"""Benchmark: retrieval speed and quality, each engine against sentence-transformers (torch) measured
in the same run.

    .venv/bin/python bench/retrieval.py [--turns 1000] [--quick]

1. The first RAG prompt in a fresh process on a fresh copy of a database with the sample data
   (`prefscope prompt maya p1-open --method rag --context normal`; nothing embedded yet), minus
   the same prompt with zero-shot (medians of 3): what retrieval adds. Goals: ≤ 1.3× the bare ONNX
   encode of the same texts: a fresh process that imports onnxruntime and tokenizers and encodes,
   with the graph, tokenizer, threads and batch size the app loaded (recorded from a RAG prompt,
   as are the texts it encoded); and ≤ 5 s, against ``embedding_backend = sentence-transformers``.
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
import shutil
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


PROMPT = ["prompt", "maya", "p1-open", "-e", "1", "-c", "normal"]


def prompt_env(tmp: str, backend: str = "onnx") -> dict[str, str]:
    """No user config; the exported graph stays in the user's cache (as after `make install`)."""
    return os.environ | {"PREFSCOPE_EMBEDDING_BACKEND": backend, "XDG_DATA_HOME": tmp, "XDG_CONFIG_HOME": tmp}


def sample_db(tmp: str) -> Path:
    """A database with the sample data imported (nothing embedded): copied before every prompt."""
    db = Path(tmp) / "sample.db"
    done = subprocess.run(
        [*PRE, "--db", str(db), "import", str(REPO / "sample_data")], cwd=REPO, env=prompt_env(tmp), capture_output=True
    )
    if done.returncode != 0:
        raise SystemExit(f"import sample_data failed: {done.stderr[-800:]!r}")
    return db


def fresh_prompt(method: str, backend: str, seeded: Path) -> float:
    """Wall seconds of one `prefscope prompt` in a fresh process on a fresh copy of ``seeded``."""
    with tempfile.TemporaryDirectory() as tmp:
        db = shutil.copyfile(seeded, f"{tmp}/a.db")
        t0 = time.perf_counter()
        done = subprocess.run(
            [*PRE, "--db", db, *PROMPT, "-m", method], cwd=REPO, env=prompt_env(tmp, backend), capture_output=True
        )
        took = time.perf_counter() - t0
        if done.returncode != 0:
            raise SystemExit(f"prompt {method} ({backend}) failed: {done.stderr[-800:]!r}")
        return took


# A RAG prompt whose ONNX encoder reports what it loaded and every list of texts it encoded.
RECORD = (
    "import json, sys\n"
    "from core.history import onnx_encoder\n"
    "from core.history.onnx_encoder import OnnxEncoder\n"
    "out, seen = sys.argv[1], {'load': [], 'calls': []}\n"
    "init, encode = OnnxEncoder.__init__, OnnxEncoder.encode\n"
    "def init_(self, folder, graph, threads=1):\n"
    "    seen['load'].append({'graph': str(graph), 'tokenizer': str(folder.tokenizer),\n"
    "                         'max_len': folder.max_seq_length, 'threads': threads,\n"
    "                         'run_tokens': getattr(onnx_encoder, 'RUN_TOKENS', None)})\n"
    "    init(self, folder, graph, threads)\n"
    "def encode_(self, texts, batch_size=32, on_batch=None):\n"
    "    seen['calls'].append({'texts': list(texts), 'batch_size': batch_size})\n"
    "    return encode(self, texts, batch_size, on_batch)\n"
    "OnnxEncoder.__init__, OnnxEncoder.encode = init_, encode_\n"
    "sys.argv = ['prefscope', *sys.argv[2:]]\n"
    "from tui.cli import main\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    if exc.code not in (None, 0):\n"
    "        raise\n"
    "json.dump(seen, open(out, 'w'))\n"
)


def recorded_encode(seeded: Path) -> dict:
    """What the first RAG prompt loaded (graph, tokenizer, threads) and the texts it encoded."""
    with tempfile.TemporaryDirectory() as tmp:
        db, out = shutil.copyfile(seeded, f"{tmp}/a.db"), f"{tmp}/seen.json"
        args = [sys.executable, "-c", RECORD, out, "--db", db, *PROMPT, "-m", "rag"]
        done = subprocess.run(args, cwd=REPO, env=prompt_env(tmp), capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"recording the RAG prompt's encode failed: {done.stderr[-800:]}")
        seen = json.loads(Path(out).read_text())
    if len(seen["load"]) != 1 or not seen["calls"]:
        raise SystemExit(f"the RAG prompt did not encode through one ONNX session: {seen['load']}")
    return seen


# The baseline: onnxruntime and tokenizers used directly, timed from their import to the last vector
# (numpy is imported before: the zero-shot prompt imports it too). Each text once, sorted by length,
# batched and split into graph runs like the app, mean pooling and L2 norm.
BARE = (
    "import json, sys, time\n"
    "import numpy as np\n"
    "t0 = time.perf_counter()\n"
    "import onnxruntime as ort\n"
    "from tokenizers import Tokenizer\n"
    "load, texts, batch = json.load(open(sys.argv[1]))\n"
    "tok = Tokenizer.from_file(load['tokenizer'])\n"
    "tok.enable_truncation(max_length=load['max_len'])\n"
    "tok.no_padding()\n"
    "opts = ort.SessionOptions()\n"
    "opts.intra_op_num_threads = load['threads']\n"
    "opts.inter_op_num_threads = 1\n"
    "opts.add_session_config_entry('session.intra_op.allow_spinning', '0')\n"
    "session = ort.InferenceSession(load['graph'], opts, providers=['CPUExecutionProvider'])\n"
    "encs = tok.encode_batch(texts)\n"
    "order = sorted(range(len(encs)), key=lambda i: -len(encs[i].ids))\n"
    "budget, start = load['run_tokens'] or len(order) * 10**6, 0\n"
    "while start < len(order):\n"
    "    end = min(start + max(1, budget // len(encs[order[start]].ids)), start - start % batch + batch)\n"
    "    rows, start = [encs[i] for i in order[start:end]], end\n"
    "    ids = np.zeros((len(rows), max(len(e.ids) for e in rows)), np.int64)\n"
    "    mask = np.zeros_like(ids)\n"
    "    for r, e in enumerate(rows):\n"
    "        ids[r, :len(e.ids)], mask[r, :len(e.ids)] = e.ids, e.attention_mask\n"
    "    hidden = session.run(None, {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)})[0]\n"
    "    pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)\n"
    "    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)\n"
    "print(time.perf_counter() - t0)\n"
)


def bare_encode(seen: dict, tmp: str) -> float:
    """Seconds of the bare ONNX encode of the distinct texts the app encoded, in a fresh process."""
    texts = list(dict.fromkeys(t for call in seen["calls"] for t in call["texts"]))
    src = Path(tmp) / "bare.json"
    src.write_text(json.dumps([seen["load"][0], texts, seen["calls"][0]["batch_size"]]))
    done = subprocess.run([sys.executable, "-c", BARE, str(src)], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bare ONNX encode failed: {done.stderr[-800:]}")
    return float(done.stdout.strip().splitlines()[-1])


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

    print("1. the first RAG prompt, fresh process, fresh copy of the sample database (maya p1-open, Normal):")
    first_rag_prompt()

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


def first_rag_prompt() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        seeded = sample_db(tmp)
        seen = recorded_encode(seeded)
        zero = statistics.median(fresh_prompt("zero-shot", "onnx", seeded) for _ in range(3))
        onnx = statistics.median(fresh_prompt("rag", "onnx", seeded) for _ in range(3)) - zero
        bare = statistics.median(bare_encode(seen, tmp) for _ in range(3))
        torch_ = fresh_prompt("rag", "sentence-transformers", seeded) - zero
    texts = [t for call in seen["calls"] for t in call["texts"]]
    line("texts the RAG prompt encoded (distinct)", f"{len(texts)} ({len(set(texts))})", "each once")
    line("  encoder threads / batch size", f"{seen['load'][0]['threads']} / {seen['calls'][0]['batch_size']}")
    line("zero-shot prompt (no retrieval)", f"{zero:.2f} s")
    line("RAG adds: onnx fp32", f"{onnx:.2f} s", f"{onnx / bare:.2f}× bare encode, goal ≤ 1.3×; ≤ 5 s")
    line("bare ONNX encode of the same texts (baseline)", f"{bare:.2f} s", "import, load, tokenize, run, pool")
    line("RAG adds: sentence-transformers (baseline)", f"{torch_:.2f} s")
    figure(
        "first RAG prompt: added seconds ÷ bare ONNX encode",
        "≤ 1.3×",
        f"{onnx / bare:.2f}× ({onnx:.1f} s)",
        f"bare encode {bare:.1f} s ({len(set(texts))} texts)",
    )
    figure("first RAG prompt: seconds added by retrieval", "≤ 5 s", f"{onnx:.1f} s", f"{torch_:.1f} s torch")


def cold_embed_queries(queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
    from core.history.retrieval import Embedder, InMemoryEmbeddingCache

    return (
        Embedder(cache=InMemoryEmbeddingCache()).embed(queries),
        Embedder(cache=InMemoryEmbeddingCache(), backend="sentence-transformers").embed(queries),
    )


if __name__ == "__main__":
    main()
