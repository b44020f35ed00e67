"""Benchmark: how every read command grows with the database — 1K, 10K and 100K stored runs.

    .venv/bin/python bench/scale.py [--sizes 1000,10000,100000] [--only report,runs] [--repeat 3]

1. Builds each database directly, not by running models: the sample users imported, one real
   `prefscope batch` over every query × 3 demo models × 3 methods (945 runs with heuristic and
   parser judgments, made once), then its runs, responses, judgments, prompts and batch cells
   copied in SQL (``INSERT … SELECT``) with new ids, up to N runs — so every row has exactly the
   shape the app writes. Copies come in pairs of the same case and seed, one in batch ``scale-a``
   and one in ``scale-b`` (so `compare` pairs the two halves), and half of the copied scores are
   redrawn at random on their scale (so paired differences vary and bootstraps really run).
   Built databases are cached under ``$TMPDIR/prefscope-bench-scale/<schema hash>/``.
2. Runs each command in a fresh process on a copy, stdout to a file, median of ``--repeat``: wall
   time and peak RSS (``os.wait4``), under a timeout and an address-space limit (``RLIMIT_AS``),
   so a runaway command is recorded as "timeout" or "out of memory" instead of taking the machine.
   The TUI figure is its start to the first painted main screen (headless, as bench/tui.py).
   Baseline in the same run: a bare Python ``SELECT text FROM responses`` (fetchall).
3. Prints command × size, the fitted exponent (least squares of log time and log RSS on log runs)
   and the goals of issue 35: every time exponent ≤ 1.1, peak RSS at 100K ≤ 500 MB, TUI first
   screen at 100K ≤ 1.5× at 1K.

Never touches the configured database.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from _common import REPO, figure, line, offline_env, run_prefscope

SIZES = (1_000, 10_000, 100_000)
MODELS = ("demo:generic", "demo:oracle", "demo:retrieval")
#: self-critic makes three responses and three prompt steps per run: the multi-step row shapes.
METHODS = ("zero-shot", "reminder", "self-critic")
HALVES = ("scale-a", "scale-b")
#: Bump when the way databases are built changes (the migrations' hash covers the schema).
BUILD = "1"
CACHE = Path(tempfile.gettempdir()) / "prefscope-bench-scale"
RSS_GOAL_MB, EXPONENT_GOAL, TUI_GOAL = 500, 1.1, 1.5
#: A command slower than this is not repeated: its noise is small against it.
REPEAT_UNDER_S = 30.0

TUI = r"""
import time
t0 = time.perf_counter()
import asyncio, json, sys
from tui.cli.open_app import _build

async def main():
    app = _build({"db": sys.argv[1]}, demo=False)
    async with app.run_test(size=(200, 50)):
        while app.screen.__class__.__name__ != "MainScreen":
            await asyncio.sleep(0.002)
        first = asyncio.get_running_loop().create_future()
        app.screen.call_after_refresh(lambda: first.done() or first.set_result(None))
        await first
        print(json.dumps({"first_screen": time.perf_counter() - t0}), flush=True)

asyncio.run(main())
"""

SELECT = "import sqlite3, sys; rows = sqlite3.connect(sys.argv[1]).execute('SELECT text FROM responses').fetchall()"


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tui.cli", "--db", "{db}", *args]


#: name -> argv; the arguments ``{db}`` and ``{out}`` (a file in the work folder) are filled in per run.
COMMANDS: dict[str, list[str]] = {
    "tui": [sys.executable, "-c", TUI, "{db}"],
    "report": cli("report", "--by", "model"),
    "diagnose": cli("diagnose", *(a for h in HALVES for a in ("--batch", h))),
    "export": cli("export", "--format", "csv", "--out", "{out}", "--force"),
    # One judge's metric: accuracy has two parser prompt versions here, which compare will not mix.
    "compare": cli("compare", *HALVES, "--metric", "rubric:alignment"),
    "heatmap": cli("report", "--heatmap", "--by", "model,method"),
    "runs": cli("runs"),
    "select": [sys.executable, "-c", SELECT, "{db}"],
}
LABELS = {
    "tui": "TUI start to the first screen",
    "report": "`report --by model`",
    "diagnose": "`diagnose --batch scale-a --batch scale-b`",
    "export": "`export --format csv --out FILE`",
    "compare": "`compare scale-a scale-b` (two halves)",
    "heatmap": "`report --heatmap --by model,method`",
    "runs": "`runs`",
    "select": "baseline: Python SELECT of all answers",
}


def env(tmp: Path) -> dict[str, str]:
    """No keys, no user config, caches in ``tmp``: demo models answer at once, nothing embeds ahead."""
    return offline_env(tmp, PREFSCOPE_DEMO_TOKENS_PER_S="0")


def schema_key() -> str:
    """The cache folder's name: databases built by another schema or builder are not reused."""
    digest = hashlib.sha256(BUILD.encode())
    for path in sorted((REPO / "storage" / "migrations").glob("*")):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def prefscope(tmp: Path, db: Path, *args: str) -> subprocess.CompletedProcess:
    return run_prefscope(env(tmp), db, *args)


def template(folder: Path) -> Path:
    """The sample users and one real demo batch: the rows every size is copied from."""
    db = folder / "template.db"
    if not db.exists():
        t0 = time.perf_counter()
        part = folder / "template.db.part"
        part.unlink(missing_ok=True)
        prefscope(folder, part, "import", str(REPO / "sample_data" / "users"))
        grid = [a for m in MODELS for a in ("--model", m)] + [a for m in METHODS for a in ("--method", m)]
        prefscope(folder, part, "batch", "--name", "template", "--judge", "demo:heuristic", "-y", *grid)
        checkpoint(part)
        part.rename(db)
        line("template: `prefscope batch` on the sample users (once)", f"{time.perf_counter() - t0:.1f} s")
    return db


def checkpoint(db: Path) -> None:
    """Folds the WAL into the file, so the file alone is the whole database (it gets copied)."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


#: Temp table ``copies``: copy i of template run ``old`` under ``id`` (random tail), every time
#: shifted by i seconds, seed and batch chosen so copies 2j and 2j+1 are the same item in both halves.
COPIES = """
CREATE TEMP TABLE copies AS
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :n - 1),
t AS (SELECT row_number() OVER (ORDER BY substr(id, -12)) - 1 AS idx, id, created_at FROM tmpl.runs)
SELECT n.i, t.id AS old, 'run-' || strftime('%Y%m%dT%H%M%S', t.created_at, '+' || n.i || ' seconds') || '-'
       || lower(hex(randomblob(6))) AS id, '+' || n.i || ' seconds' AS shift, n.i / (2 * :t) AS seed,
       CASE n.i % 2 WHEN 0 THEN :a ELSE :b END AS label
FROM n JOIN t ON t.idx = (n.i / 2) % :t
"""
#: Per copy, each response's new id (``resp-<time>-<random tail>``), for the judgments' links.
RESPONSE_IDS = """
INSERT INTO temp.response_ids
SELECT c.i, p.id, 'resp-' || strftime('%Y%m%dT%H%M%S', p.started_at, c.shift) || '-' || lower(hex(randomblob(6)))
FROM temp.copies c JOIN tmpl.responses p ON p.run_id = c.old
"""
#: A time column (``*_at``) moved by the copy's shift, in the app's format: with milliseconds where
#: the app writes them, UTC offset kept; NULL stays NULL.
SHIFTED = (
    "strftime(CASE WHEN instr(t.{c}, '.') THEN '%Y-%m-%dT%H:%M:%f' ELSE '%Y-%m-%dT%H:%M:%S' END, t.{c}, c.shift)"
    " || '+00:00'"
)
#: Half the scores redrawn uniformly on their scale: varied paired differences, models still apart.
SCORE = (
    "CASE WHEN t.score IS NULL OR t.scale_min IS NULL OR abs(random()) % 2 THEN t.score"
    " ELSE t.scale_min + abs(random()) % CAST(t.scale_max - t.scale_min + 1 AS INTEGER) END"
)


def copy_table(conn: sqlite3.Connection, table: str, source: str, overrides: dict[str, str]) -> None:
    """``INSERT INTO table SELECT`` every column of ``tmpl.table t`` joined by ``source``, some replaced."""
    columns = [c[1] for c in conn.execute(f"PRAGMA main.table_info({table})") if not (table == "judgments" and c[5])]
    values = [overrides.get(c, SHIFTED.format(c=c) if c.endswith("_at") else f"t.{c}") for c in columns]
    conn.execute(f"INSERT INTO main.{table} ({', '.join(columns)}) SELECT {', '.join(values)} {source}")


def replicate(db: Path, tmpl: Path, n: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("ATTACH ? AS tmpl", (str(tmpl),))
        (count,) = conn.execute("SELECT count(*) FROM tmpl.runs").fetchone()
        conn.execute("BEGIN")
        for table in ("judgments", "prompts", "batch_cells", "responses", "response_cache", "runs"):
            conn.execute(f"DELETE FROM main.{table}")  # the template's own rows: only copies count
        conn.execute(COPIES, {"n": n, "t": count, "a": HALVES[0], "b": HALVES[1]})
        conn.execute(
            "CREATE TEMP TABLE response_ids (i INTEGER, old TEXT, id TEXT, PRIMARY KEY (i, old)) WITHOUT ROWID"
        )
        conn.execute(RESPONSE_IDS)
        spec = "json_set(t.spec, '$.seed', c.seed, '$.label', c.label)"
        copy_table(
            conn,
            "runs",
            "FROM temp.copies c JOIN tmpl.runs t ON t.id = c.old ORDER BY c.i",
            {"id": "c.id", "seed": "c.seed", "label": "c.label", "spec": spec},
        )
        copy_table(
            conn,
            "responses",
            "FROM temp.copies c JOIN tmpl.responses t ON t.run_id = c.old"
            " JOIN temp.response_ids r ON r.i = c.i AND r.old = t.id ORDER BY c.i, t.slot",
            {"id": "r.id", "run_id": "c.id"},
        )
        copy_table(
            conn,
            "judgments",
            "FROM temp.copies c JOIN tmpl.judgments t ON t.run_id = c.old"
            " LEFT JOIN temp.response_ids r ON r.i = c.i AND r.old = t.response_id ORDER BY c.i, t.id",
            {"run_id": "c.id", "response_id": "r.id", "score": SCORE},
        )
        copy_table(conn, "prompts", "FROM temp.copies c JOIN tmpl.prompts t ON t.run_id = c.old", {"run_id": "c.id"})
        copy_table(
            conn,
            "batch_cells",
            "FROM temp.copies c JOIN tmpl.batch_cells t ON t.run_id = c.old",
            {"batch": "c.label", "cell_key": "lower(hex(randomblob(32)))", "run_id": "c.id", "spec": spec},
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    checkpoint(db)


def database(n: int) -> Path:
    """The cached database of ``n`` runs, built when missing (built as ``.part``, renamed when whole)."""
    folder = CACHE / schema_key()
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"runs-{n}.db"
    if not db.exists():
        tmpl = template(folder)
        t0 = time.perf_counter()
        part = folder / f"runs-{n}.db.part"
        shutil.copy(tmpl, part)
        replicate(part, tmpl, n)
        part.rename(db)
        line(f"built {n:,} runs in SQL", f"{time.perf_counter() - t0:.1f} s", f"{db.stat().st_size / 2**20:.0f} MB")
    return db


# --- measuring ----------------------------------------------------------------------------


@dataclass
class Result:
    seconds: float
    rss_mb: float
    #: "ok", "timeout", "out of memory" or "failed (exit N)".
    status: str = "ok"

    def cell(self) -> str:
        if self.status != "ok":
            return f"{self.status} (after {self.seconds:.0f} s)"
        return f"{self.seconds:.2f} s, {self.rss_mb:.0f} MB"


def limit_memory(gb: float):
    def apply() -> None:
        cap = int(gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return apply


def run_once(argv: list[str], tmp: Path, timeout: float, mem_gb: float) -> Result:
    """One fresh process: wall time and its own peak RSS (``wait4``, not all children's maximum).
    On timeout its whole process group is killed."""
    out, err = tmp / "stdout", tmp / "stderr"
    with out.open("w") as stdout, err.open("w") as stderr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env(tmp),
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=limit_memory(mem_gb),
        )
        timer = threading.Timer(timeout, os.killpg, (proc.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: keep Popen from waiting again
    rss = usage.ru_maxrss / 1024  # KiB on Linux
    if proc.returncode == 0:
        return Result(wall, rss)
    if wall >= timeout:
        return Result(wall, rss, "timeout")
    tail = err.read_text(errors="replace")[-3000:]
    if "MemoryError" in tail or "Cannot allocate memory" in tail or "bad_alloc" in tail:
        return Result(wall, rss, "out of memory")
    print(f"    {argv[2:5]} failed ({proc.returncode}): {tail[-800:]}")
    return Result(wall, rss, f"failed (exit {proc.returncode})")


def measure(name: str, db: Path, tmp: Path, repeat: int, timeout: float, mem_gb: float) -> Result:
    """Median of ``repeat`` runs (fewer when one is slow or fails); the TUI's time is its own mark."""
    fill = {"{db}": str(db), "{out}": str(tmp / "export.csv")}
    argv = [fill.get(a, a) for a in COMMANDS[name]]
    results: list[Result] = []
    for _ in range(repeat):
        r = run_once(argv, tmp, timeout, mem_gb)
        if r.status == "ok" and name == "tui":
            r.seconds = json.loads((tmp / "stdout").read_text().strip().splitlines()[-1])["first_screen"]
        results.append(r)
        if r.status != "ok" or r.seconds > REPEAT_UNDER_S:
            return r
    return Result(median(r.seconds for r in results), max(r.rss_mb for r in results))


def exponent(sizes: list[int], values: list[float]) -> float | None:
    """Slope of log(value) on log(size), least squares: 1 is linear, 2 quadratic."""
    if len(sizes) < 2:
        return None
    xs, ys = [math.log(s) for s in sizes], [math.log(v) for v in values]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


#: Cut short: the figure is a floor (the time or memory when it was stopped).
FLOORS = ("timeout", "out of memory")


def fitted(sizes: list[int], row: dict[int, Result], what: str) -> str:
    """The exponent over the sizes measured. A run cut short counts with its figure when stopped,
    so the slope is a floor, shown as "≥"; a failed run is left out."""
    have = [s for s in sizes if row[s].status == "ok" or row[s].status in FLOORS]
    value = exponent(have, [getattr(row[s], what) for s in have])
    if value is None:
        return "—"
    return f"{'≥ ' if any(row[s].status in FLOORS for s in have) else ''}{value:.2f}"


def report(sizes: list[int], results: dict[str, dict[int, Result]]) -> None:
    """The table; with 3+ sizes also the slope between the two largest, where a fixed start-up cost
    no longer hides how the work grows."""
    last = sizes[-2:] if len(sizes) > 2 else []
    head = ["command", *(f"{s:,} runs" for s in sizes), "exp. time", "exp. RSS"]
    head += ["exp. time, last step"] if last else []
    rows = [
        [
            LABELS[n],
            *(row[s].cell() for s in sizes),
            fitted(sizes, row, "seconds"),
            fitted(sizes, row, "rss_mb"),
            *([fitted(last, row, "seconds")] if last else []),
        ]
        for n, row in results.items()
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print()
    for r in [head, ["-" * w for w in widths], *rows]:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    goals(sizes, results)


def meets(exp: str, r: Result) -> str:
    """The verdict on the goals of one command: exponent ≤ 1.1 and peak RSS ≤ 500 MB at the largest size."""
    if r.status != "ok" or r.rss_mb > RSS_GOAL_MB or exp.startswith("≥") or (exp != "—" and float(exp) > EXPONENT_GOAL):
        return "MISSES"
    return "ok" if exp != "—" else "—"


def goals(sizes: list[int], results: dict[str, dict[int, Result]]) -> None:
    big, small = max(sizes), min(sizes)
    base = results.get("select", {}).get(big)
    print(f"\ngoals (issue 35) at {big:,} runs: time exponent ≤ {EXPONENT_GOAL}, peak RSS ≤ {RSS_GOAL_MB} MB")
    for name, row in results.items():
        if name == "select":
            continue
        r, exp = row[big], fitted(sizes, row, "seconds")
        times = f" = {r.seconds / base.seconds:.0f}× the SELECT" if base and base.status == r.status == "ok" else ""
        line(LABELS[name], f"exp {exp}", f"{r.cell()}{times} · {meets(exp, r)}")
        figure(
            f"scale: {LABELS[name]}, {big:,} runs",
            f"exp ≤ {EXPONENT_GOAL}, ≤ {RSS_GOAL_MB} MB",
            f"{r.cell()}{times}, exp {exp}",
            f"SELECT of all answers {base.cell()}" if base else "—",
        )
    tui = results.get("tui")
    if tui and big > small:
        a, b = tui[small], tui[big]
        ratio = b.seconds / a.seconds if a.status == b.status == "ok" else None
        now = f"{ratio:.2f}×" if ratio is not None else b.cell()
        verdict = "ok" if ratio is not None and ratio <= TUI_GOAL else "MISSES"
        line(f"TUI first screen, {big:,} ÷ {small:,} runs", now, f"goal ≤ {TUI_GOAL}× · {verdict}")
        figure(
            f"scale: TUI first screen, {big:,} ÷ {small:,} runs", f"≤ {TUI_GOAL}×", now, f"{small:,} runs {a.cell()}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="runs per database, comma-separated")
    parser.add_argument("--only", default="", help=f"commands, comma-separated: {', '.join(COMMANDS)}")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, the median is shown (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per command run (default 300)")
    parser.add_argument("--mem-gb", type=float, default=8.0, help="address-space limit per command (default 8)")
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(COMMANDS)
    if unknown := set(names) - set(COMMANDS):
        parser.error(f"unknown command(s) {', '.join(sorted(unknown))}; have {', '.join(COMMANDS)}")
    print(f"bench/scale.py — {', '.join(f'{s:,}' for s in sizes)} runs; cache {CACHE / schema_key()}")
    results: dict[str, dict[int, Result]] = {n: {} for n in names}
    with tempfile.TemporaryDirectory(prefix="prefscope-bench-scale-") as name:
        tmp = Path(name)
        for size in sizes:
            db = tmp / "runs.db"
            shutil.copy(database(size), db)  # commands may write (recovery, caches): never the cached one
            for n in names:
                results[n][size] = r = measure(n, db, tmp, args.repeat, args.timeout, args.mem_gb)
                line(f"{size:,} runs: {LABELS[n]}", r.cell())
            for leftover in tmp.glob("runs.db*"):
                leftover.unlink()
    report(sizes, results)


if __name__ == "__main__":
    main()
