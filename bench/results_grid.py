"""Benchmark: the results grid on a database of ~2,000 answers.

    .venv/bin/python bench/results_grid.py [--answers 2000]

The database is filled the real way: the sample data imported, then one `prefscope batch` (the
real batch runner, engine, demo models, heuristic judge and the single writer) over every sample
user's queries × 3 demo models × enough seeds for ``--answers`` answers. Then, best of 5 each:

1. ``storage.results_grid.load_grid`` (ONE query, judgments folded per answer) against two
   baselines measured here: the same answers without their scores (one plain SELECT: the floor),
   and reading them run by run with ``storage.runs.load_run`` (a query per run and per run's
   judgments: the N+1 shape the grid avoids).
2. The grid widget headless: filling it (``ResultsGrid.show``), a filter keystroke and a sort,
   against a plain ``DataTable`` filled with the same cells as strings.

Prints figures and ratios; asserts nothing. Runs in a temporary directory; never touches the
configured database.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import tempfile
import time
from pathlib import Path

from _common import figure, line

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")
os.environ["PREFSCOPE_DEMO_TOKENS_PER_S"] = "0"  # demo models answer at once: the batch only fills the file

MODELS = ["demo:generic", "demo:retrieval", "demo:oracle"]
USERS = ["maya", "priya", "tomasz"]
REPEAT = 5


def best(fn, repeat: int = REPEAT) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def fill(db_path: Path, answers: int) -> None:
    from click.testing import CliRunner

    from storage.db import open_db
    from tui.cli import main

    runner = CliRunner()
    out = runner.invoke(main, ["--db", str(db_path), "import", "sample_data"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    db = open_db(db_path)
    (cases,) = db.execute(
        f"SELECT count(*) FROM queries WHERE user_id IN ({','.join('?' * len(USERS))})", USERS
    ).fetchone()
    db.close()
    seeds = max(1, math.ceil(answers / (cases * len(MODELS))))
    args = ["--db", str(db_path), "batch", "--name", "bench", "--judge", "demo:heuristic", "-y"]
    for u in USERS:
        args += ["--user", u]
    for m in MODELS:
        args += ["--model", m]
    for s in range(seeds):
        args += ["--seed", str(s)]
    t0 = time.perf_counter()
    out = runner.invoke(main, args, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    line(
        f"filled by `prefscope batch` ({cases} cases × {len(MODELS)} models × {seeds} seeds)",
        f"{time.perf_counter() - t0:.1f} s",
    )


def storage_figures(db_path: Path) -> None:
    from storage.db import open_db
    from storage.results_grid import load_grid
    from storage.runs import list_runs, load_run

    db = open_db(db_path, readonly=True)
    grid = load_grid(db)
    n_judgments = sum(len(r.scores) for r in grid.rows)
    print(f"\n1. storage: {len(grid.rows):,} answers, {len(grid.columns)} score columns, {n_judgments:,} scores")
    floor_sql = (
        "SELECT p.id, r.id, r.created_at, r.label, r.user_id, r.query_id, r.expression_type, p.model, r.method, "
        "r.context, p.status FROM runs r JOIN responses p ON p.run_id = r.id AND p.is_final = 1 "
        "ORDER BY r.created_at DESC, r.rowid DESC, p.slot"
    )
    t_grid = best(lambda: load_grid(db))
    t_floor = best(lambda: db.execute(floor_sql).fetchall())
    run_ids = [r.id for r in list_runs(db, limit=1_000_000)]
    t_per_run = best(lambda: [load_run(db, r) for r in run_ids], repeat=1)  # seconds: once is enough
    line("load_grid (one query, scores folded in)", f"{1000 * t_grid:.1f} ms")
    line("baseline: the answers without scores (one plain SELECT)", f"{1000 * t_floor:.1f} ms")
    line("baseline: run by run with load_run (N+1)", f"{1000 * t_per_run:.1f} ms")
    line("ratio load_grid / plain SELECT", f"{t_grid / t_floor:.2f}×")
    line("ratio run-by-run / load_grid", f"{t_per_run / t_grid:.1f}×", "(how much the one query saves)")
    figure(
        f"results grid: load_grid, {len(grid.rows):,} answers",
        "—",
        f"{1000 * t_grid:.0f} ms ({t_grid / t_floor:.2f}× plain SELECT)",
        f"plain SELECT {1000 * t_floor:.0f} ms; N+1 {1000 * t_per_run:.0f} ms",
    )
    db.close()


async def tui_figures(db_path: Path) -> None:
    from textual.app import App
    from textual.widgets import DataTable

    from storage.db import open_db
    from storage.ids import all_run_ids, short_run_ids
    from storage.results_grid import load_grid
    from tui.widgets.results_grid import ResultsGrid

    db = open_db(db_path, readonly=True)
    data = load_grid(db)
    short = short_run_ids(all_run_ids(db), {r.run_id for r in data.rows})

    class Bench(App):
        def compose(self):
            yield ResultsGrid(workbench=None, id="grid")
            yield DataTable(id="plain")

    app = Bench()
    async with app.run_test(size=(200, 50)) as pilot:
        grid = app.query_one(ResultsGrid)
        plain = app.query_one("#plain", DataTable)
        grid.show(data, short)
        cells = [[str(c) for c in grid.get_row_at(i)] for i in range(grid.row_count)]

        def plain_fill() -> None:
            plain.clear(columns=True)
            plain.add_columns(*(str(k.value) for k in grid.columns))
            plain.add_rows(cells)

        t_plain = best(plain_fill)
        t_show = best(lambda: grid.show(data, short))
        t_filter = best(lambda: (grid.filter("model:oracle"), grid.filter("")))
        t_sort = best(lambda: grid.sort_by("alignment"))
        await pilot.pause()
        print(f"\n2. grid widget: {grid.row_count:,} rows × {len(grid.columns)} columns")
        line("ResultsGrid.show (filter, sort, group, cells)", f"{1000 * t_show:.1f} ms")
        line("baseline: plain DataTable.add_rows of the same str cells", f"{1000 * t_plain:.1f} ms")
        line("ratio show / plain DataTable", f"{t_show / t_plain:.2f}×")
        line("a filter keystroke and clearing it (two refills)", f"{1000 * t_filter:.1f} ms")
        line("a sort (s on a score column)", f"{1000 * t_sort:.1f} ms")
        figure(
            f"results grid: ResultsGrid.show, {grid.row_count:,} rows",
            "—",
            f"{1000 * t_show:.0f} ms ({t_show / t_plain:.2f}× plain)",
            f"plain DataTable {1000 * t_plain:.0f} ms",
        )
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="prefscope-bench-grid-") as tmp:
        db_path = Path(tmp) / "grid.db"
        print(f"results grid with ~{args.answers:,} answers")
        fill(db_path, args.answers)
        storage_figures(db_path)
        asyncio.run(tui_figures(db_path))


if __name__ == "__main__":
    main()
