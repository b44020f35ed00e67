"""Run every bench, then print one table of their headline figures.

    .venv/bin/python bench/run_all.py [NAME ...]     # e.g. `run_all.py tui batch`; default: all

Each ``bench/*.py`` (but this file and ``_common.py``) runs in its own process, its output
streamed as it comes. The ``@@figure`` lines a bench prints through ``_common.figure`` are
collected, not echoed, and shown at the end as one table: bench, figure, goal, now, baseline
(the baseline always measured in the same run). A bench that fails is listed under the table
and makes the exit status non-zero; the others still run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from _common import FIGURE_MARK, REPO

HERE = Path(__file__).resolve().parent
NOT_BENCHES = {"_common.py", Path(__file__).name}
COLUMNS = ("bench", "figure", "goal", "now", "baseline")


def benches(names: list[str]) -> list[Path]:
    found = sorted(p for p in HERE.glob("*.py") if p.name not in NOT_BENCHES)
    if not names:
        return found
    wanted = {n.removesuffix(".py") for n in names}
    unknown = wanted - {p.stem for p in found}
    if unknown:
        raise SystemExit(f"no such bench: {', '.join(sorted(unknown))} (have: {', '.join(p.stem for p in found)})")
    return [p for p in found if p.stem in wanted]


def run_one(path: Path) -> tuple[list[dict], int, float]:
    """Runs one bench, echoing its output line by line; returns its figures and exit status."""
    figures: list[dict] = []
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-u", str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
    )
    assert proc.stdout is not None
    for text in proc.stdout:
        if text.startswith(FIGURE_MARK):
            try:
                figures.append(json.loads(text[len(FIGURE_MARK) :]))
                continue
            except json.JSONDecodeError:
                pass  # not one of ours after all: show it as it is
        print(text, end="", flush=True)
    return figures, proc.wait(), time.perf_counter() - t0


def table(rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    out = [fmt.format(*COLUMNS), fmt.format(*("-" * w for w in widths))]
    out += [fmt.format(*r) for r in rows]
    return "\n".join(s.rstrip() for s in out)


def main(argv: list[str]) -> int:
    rows: list[tuple[str, ...]] = []
    failed: list[str] = []
    for path in benches(argv):
        print(f"== {path.relative_to(REPO)}", flush=True)
        figures, status, took = run_one(path)
        print(f"   ({took:.0f} s)", flush=True)
        if status != 0:
            failed.append(f"{path.stem} (exit {status})")
        for f in figures:
            rows.append((path.stem, *(str(f.get(k, "")) for k in COLUMNS[1:])))
    print("\n== figures (baseline measured in the same run)")
    print(table(rows) if rows else "(no bench reported a figure)")
    if failed:
        print(f"\nFAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
