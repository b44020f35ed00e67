"""`report` and `compare` on 20,000 runs stay under a memory ceiling (issue 35: scipy's BCa
bootstrap built n × (n − 1) jackknife arrays, ~17·n² bytes, so one report group of 20K scores
needed ~7 GB and a compare of two 10K halves ~1.7 GB; 35K scores took 21 GB).

The database is a real `prefscope batch` (maya's open queries, one demo model, the heuristic
judge) replicated in SQL to 20,000 runs, as ``bench/scale.py`` builds its databases: every copy
keeps the rows the app wrote, with new ids, its scores redrawn at random on their scale (so
intervals and paired differences vary and the bootstrap really runs), copies 2j and 2j + 1 the
same item in batches ``half-a`` and ``half-b``. Each command runs in a fresh process whose
address space is capped with ``RLIMIT_AS``: over the cap an allocation fails (MemoryError) and
the command exits non-zero, instead of taking the machine.
"""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLE_DATA

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS is enforced on Linux")

RUNS = 20_000
HALVES = ("half-a", "half-b")
#: Address-space cap of each command (RLIMIT_AS counts mapped libraries and reserved memory too,
#: not only what is used). Measured at 20K runs with the O(n) interval: peak address space 317 MB
#: (`report`) and 333 MB (`compare`), peak RSS 157 MB and 170 MB. The n × (n − 1) jackknife needed
#: ~7 GB for this `report` and ~1.7 GB for this `compare`.
CEILING = 2**30

#: Copy i of template run ``old``: new ids (the template's with a unique tail), the seed and
#: batch chosen so copies 2j and 2j + 1 are the same item in both halves.
COPIES = """
CREATE TEMP TABLE copies AS
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :n - 1),
t AS (SELECT row_number() OVER (ORDER BY id) - 1 AS idx, id FROM temp.tmpl_runs)
SELECT n.i, t.id AS old, substr(t.id, 1, length(t.id) - 12) || printf('%012x', n.i) AS id,
       n.i / (2 * :t) AS seed, CASE n.i % 2 WHEN 0 THEN :a ELSE :b END AS label
FROM n JOIN t ON t.idx = (n.i / 2) % :t
"""
#: A response's id in copy ``c``: the template's with a tail unique per copy and slot.
RESPONSE_ID = "substr({p}.id, 1, length({p}.id) - 12) || printf('%08x%04x', c.i, {p}.slot)"
#: Every score redrawn uniformly on its scale: groups and paired differences vary.
SCORE = (
    "CASE WHEN t.score IS NULL OR t.scale_min IS NULL THEN t.score"
    " ELSE t.scale_min + abs(random()) % CAST(t.scale_max - t.scale_min + 1 AS INTEGER) END"
)
SPEC = "json_set(t.spec, '$.seed', c.seed, '$.label', c.label)"


def env(tmp: Path) -> dict[str, str]:
    """No keys, no user config, caches in ``tmp``; demo models answer at once. One BLAS thread:
    each BLAS thread reserves its own buffers, so the address space would grow with the machine's
    cores, not with what the command holds."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "PREFSCOPE_", "XDG_"))}
    return {
        **keep,
        "HOME": str(tmp / "home"),
        "XDG_CACHE_HOME": str(tmp / "cache"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "XDG_CONFIG_HOME": str(tmp / "config"),
        "PREFSCOPE_DEMO_TOKENS_PER_S": "0",
        "PREFSCOPE_EMBED_AHEAD": "false",
        "PYTHONPATH": str(REPO),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def capped(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def prefscope(db: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess:
    """``prefscope --db db …`` in a fresh process; with ``limit``, its address space capped there."""
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", "--db", str(db), *args],
        cwd=REPO,
        env=env(db.parent),
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=capped(limit) if limit else None,
    )


def copy_rows(conn: sqlite3.Connection, table: str, source: str, overrides: dict[str, str]) -> None:
    """``INSERT INTO table SELECT`` every column of the template's ``t`` rows, some replaced."""
    columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if not (table == "judgments" and c[5])]
    values = [overrides.get(c, f"t.{c}") for c in columns]
    conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT {', '.join(values)} {source}")


def replicate(db: Path, n: int) -> None:
    """The template's runs (with their responses, judgments, prompts and batch cells) replaced by
    ``n`` copies, in one transaction."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for table in ("runs", "responses", "judgments", "prompts", "batch_cells"):
            conn.execute(f"CREATE TEMP TABLE tmpl_{table} AS SELECT * FROM main.{table}")
            conn.execute(f"DELETE FROM main.{table}")
        conn.execute("DELETE FROM main.response_cache")  # it points at the template's responses
        (count,) = conn.execute("SELECT count(*) FROM temp.tmpl_runs").fetchone()
        conn.execute(COPIES, {"n": n, "t": count, "a": HALVES[0], "b": HALVES[1]})
        copy_rows(
            conn,
            "runs",
            "FROM temp.copies c JOIN temp.tmpl_runs t ON t.id = c.old ORDER BY c.i",
            {"id": "c.id", "seed": "c.seed", "label": "c.label", "spec": SPEC},
        )
        copy_rows(
            conn,
            "responses",
            "FROM temp.copies c JOIN temp.tmpl_responses t ON t.run_id = c.old ORDER BY c.i, t.slot",
            {"id": RESPONSE_ID.format(p="t"), "run_id": "c.id"},
        )
        copy_rows(
            conn,
            "judgments",
            "FROM temp.copies c JOIN temp.tmpl_judgments t ON t.run_id = c.old"
            " LEFT JOIN temp.tmpl_responses p ON p.id = t.response_id ORDER BY c.i, t.id",
            {
                "run_id": "c.id",
                "response_id": f"CASE WHEN p.id IS NULL THEN NULL ELSE {RESPONSE_ID.format(p='p')} END",
                "score": SCORE,
            },
        )
        copy_rows(
            conn, "prompts", "FROM temp.copies c JOIN temp.tmpl_prompts t ON t.run_id = c.old", {"run_id": "c.id"}
        )
        copy_rows(
            conn,
            "batch_cells",
            "FROM temp.copies c JOIN temp.tmpl_batch_cells t ON t.run_id = c.old",
            {"batch": "c.label", "cell_key": "lower(hex(randomblob(32)))", "run_id": "c.id", "spec": SPEC},
        )
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def twenty_thousand_runs(tmp: Path) -> Path:
    """maya's 8 open queries answered by demo:generic and judged by demo:heuristic, copied to 20K runs."""
    db = tmp / "runs.db"
    for args in (
        ("import", str(SAMPLE_DATA / "users" / "maya.json")),
        ("batch", "--name", "template", "--user", "maya", "--query-kind", "open", "--expression", "1",
         "--model", "demo:generic", "--judge", "demo:heuristic", "--yes"),
    ):  # fmt: skip
        done = prefscope(db, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    replicate(db, RUNS)
    return db


@pytest.fixture(scope="module")
def runs_db(tmp_path_factory) -> Path:
    return twenty_thousand_runs(tmp_path_factory.mktemp("memory-ceiling"))


def run_capped(db: Path, *args: str) -> dict:
    """The command's JSON; it must finish under the ceiling, not fail for want of memory."""
    done = prefscope(db, *args, "--json", limit=CEILING)
    assert "MemoryError" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_report_of_one_20k_group_fits_under_the_ceiling(runs_db):
    tables = run_capped(runs_db, "report", "--by", "model")["tables"]
    (row,) = next(t for t in tables if t["title"] == "rubric:alignment by model")["rows"]
    assert row["n"] == RUNS
    assert row["ci_low"] < row["mean"] < row["ci_high"]


def test_compare_of_two_10k_halves_fits_under_the_ceiling(runs_db):
    result = run_capped(runs_db, "compare", *HALVES, "--metric", "rubric:alignment")
    assert result["n"] == RUNS // 2
    assert result["regressed"] and result["improved"]  # differences vary: the bootstrap really ran
    assert result["ci_low"] < result["mean_diff"] < result["ci_high"]


def test_running_out_of_memory_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    """A selection too large for the machine (or a `ulimit -v`) ends in one line and exit 1."""
    from click.testing import CliRunner

    import core.metrics
    from tui.cli import main

    db = tmp_path / "m.db"
    for args in (
        ("import", str(SAMPLE_DATA / "users" / "maya.json")),
        ("run", "maya", "p1-open", "--plain", "--model", "demo:generic", "--judge", "demo:heuristic"),
        ("run", "maya", "p1-open", "--plain", "--model", "demo:generic", "--judge", "demo:heuristic"),
    ):
        assert prefscope(db, *args).returncode == 0

    def exhausted(*_args, **_kwargs):
        raise MemoryError

    import core.judges.aggregate

    # every module that bound the name when it was imported (the intervals of `report`'s tables)
    for module in (core.metrics, core.judges.aggregate):
        monkeypatch.setattr(module, "bootstrap_ci", exhausted)
    result = CliRunner().invoke(main, ["--db", str(db), "report", "--by", "model"])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and "ran out of memory" in result.output, result.output
