"""`batch --turns` (repeatable: PrefEval's inter-turn sweep) and user patterns (`--user 'prefeval-*'`
for `batch` and the stored-run filters of `export` / `report`, a grid file's ``users``) on real
SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from storage.db import open_db
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tests.conftest import dataset
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"


def _runs(db: str) -> list[tuple]:
    conn = open_db(db)
    try:
        sql = "SELECT user_id, context, json_extract(spec, '$.turns'), status FROM runs ORDER BY 1, 3"
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def test_turns_sweep_over_a_user_pattern_runs_prefeval_turns_cells(tmp_path, unpaced_demo_models):  # noqa: F811
    db = str(tmp_path / "t.db")
    cli(db, "import", str(dataset("prefeval")))
    sweep = ["--turns", "0", "--turns", "3", "--query-kind", "open", "--model", "demo:generic", "--yes"]
    cli(db, "batch", "--user", "prefeval-travel_restaurant-00[0-2]", *sweep)
    expected = [
        (f"prefeval-travel_restaurant-00{n}", "prefeval-turns", turns, "ok") for n in range(3) for turns in (0, 3)
    ]
    assert _runs(db) == expected


def _dry_cells(db: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", db, "batch", *args, "--model", "demo:generic", "--dry-run"])
    return result.output


def test_patterns_in_user_options_and_grid_files(tmp_path):
    db = str(tmp_path / "s.db")
    cli(db, "import", str(SAMPLE / "users"))
    assert "cells            8 " in _dry_cells(db, "--user", "ma*", "--query-kind", "open")  # maya: 8 open
    grid = tmp_path / "g.toml"
    grid.write_text('users = ["p*", "dana"]\nquery_kinds = ["open"]\nmodels = ["demo:generic"]\n')
    assert "cells            13 " in _dry_cells(db, "--grid", str(grid))  # priya 8 + dana 5


def test_a_pattern_that_matches_nobody_and_turns_without_their_context_are_refused(tmp_path):
    db = str(tmp_path / "s.db")
    cli(db, "import", str(SAMPLE / "users"))
    result = CliRunner().invoke(main, ["--db", db, "batch", "--user", "nobody-*", "--model", "demo:generic"])
    assert result.exit_code == 1 and "no user matches 'nobody-*'" in result.output
    result = CliRunner().invoke(
        main, ["--db", db, "batch", "--turns", "5", "--context", "simple", "--model", "demo:generic", "--dry-run"]
    )
    assert result.exit_code == 1 and "--turns goes with --context prefeval-turns" in result.output


def test_a_user_pattern_filters_stored_runs(tmp_path, unpaced_demo_models):  # noqa: F811
    db = str(tmp_path / "e.db")
    cli(db, "import", str(SAMPLE / "users"))
    cli(db, "batch", "--user", "maya", "--user", "priya", "--query", "p1-open", "--model", "demo:generic", "--yes")
    result = CliRunner().invoke(main, ["--db", db, "export", "--format", "jsonl", "--user", "ma*"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and {r["user_id"] for r in rows} == {"maya"}
