"""Benchmark: PersonaMem import memory on 1M-token contexts (synthetic, same layout as the release).

    .venv/bin/python bench/personamem_import.py

Writes a ``shared_contexts_1M.jsonl`` of 4 contexts of ~1M tokens each (~4 MB of text apiece) and
a questions CSV asking 20 questions of 2 of them, then imports it with tracemalloc on. Prints the
peak Python memory of the import, and as the baseline measured in the same run, the peak of
``json.loads`` of the whole contexts file (what an importer that reads the file at once holds
before it builds anything). Target: the import's peak <= the baseline (the streaming reader parses
only the contexts a question needs, one at a time; the built users themselves are kept).
"""

from __future__ import annotations

import csv
import json
import random
import tempfile
import time
import tracemalloc
from pathlib import Path

from _common import figure  # repo on sys.path, offline settings

from core.benchmarks.personamem.format import COLUMNS
from core.formats import load_path

WORDS = "the a we I you it to of and in that for on with trip coffee garden recipe budget museum running".split()


def context(rng: random.Random, tokens: int) -> list[dict]:
    out = [{"role": "system", "content": "Current user persona: a synthetic person."}]
    total = 0
    while total < tokens:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(40, 200)))
        out.append({"role": "user" if len(out) % 2 else "assistant", "content": text})
        total += len(text.split())
    return out


def write(folder: Path) -> tuple[Path, int]:
    rng = random.Random(0)
    ids = [f"ctx-{i}" for i in range(4)]
    lengths = {}
    with (folder / "shared_contexts_1M.jsonl").open("w", encoding="utf-8") as fh:
        for cid in ids:
            msgs = context(rng, 1_000_000)
            lengths[cid] = len(msgs)
            fh.write(json.dumps({cid: msgs}) + "\n")
    options = str([f"({x}) option {x}" for x in "abcd"])
    with (folder / "questions_1M.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        for n in range(20):
            cid = ids[n % 2]
            end = lengths[cid] * (n + 1) // 21
            w.writerow(
                [n % 2, f"q{n}", "recall_user_shared_facts", "t", "False", 1, 1, 0, 10, 0, 0.1, "Q?", "(a)"]
                + [options, cid, end]
            )
    return folder / "questions_1M.csv", (folder / "shared_contexts_1M.jsonl").stat().st_size


def peak(fn) -> tuple[int, float]:
    tracemalloc.start()
    t = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - t
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top, elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        questions, size = write(Path(tmp))
        ctx_file = questions.with_name("shared_contexts_1M.jsonl")
        base, base_s = peak(lambda: json.loads("[" + ",".join(ctx_file.read_text().splitlines()) + "]"))
        ours, ours_s = peak(lambda: load_path(questions, max_bytes=1 << 30))
        print(f"contexts file {size / 1e6:.1f} MB (4 contexts of ~1M tokens; 2 asked about, 20 questions)")
        print(f"  json.loads of the whole file (baseline)  peak {base / 1e6:8.1f} MB  {base_s:5.1f} s")
        print(f"  prefscope import (streaming)             peak {ours / 1e6:8.1f} MB  {ours_s:5.1f} s")
        print(f"  ratio import / baseline: {ours / base:.2f}  (target <= 1)")
        figure(
            "PersonaMem 4×1M-token import: peak memory",
            "≤ baseline",
            f"{ours / 1e6:.0f} MB ({ours / base:.2f}×)",
            f"json.loads of the file {base / 1e6:.0f} MB",
        )


if __name__ == "__main__":
    main()
