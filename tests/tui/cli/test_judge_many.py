"""`prefscope judge` re-judges many stored runs at once: several ids, or every run whose label
matches (a batch name, ``imported:<file>``, with ``*``), one line per run, every judgment stored."""

from __future__ import annotations

import sqlite3

from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.storage.export_fixtures import db_with_maya
from tui.cli import main


def _batch(db: str, name: str) -> None:
    args = ["batch", "--name", name, "--user", "maya", "--expression", "1", "--context", "simple"]
    cli(
        db,
        *args,
        "--method",
        "zero-shot",
        "--model",
        "demo:generic",
        "--query",
        "p1-open",
        "--query",
        "p2-open",
        "--yes",
    )


def _heuristic_judgments(db: str) -> int:
    sql = "SELECT count(*) FROM judgments WHERE judge_model = 'demo:heuristic'"
    return sqlite3.connect(db).execute(sql).fetchone()[0]


def test_every_run_of_matching_labels_is_judged_and_stored(tmp_path, unpaced_demo_models):  # noqa: F811
    db = str(db_with_maya(tmp_path / "j.db"))
    _batch(db, "first-a")
    _batch(db, "first-b")
    _batch(db, "other")
    assert _heuristic_judgments(db) == 0  # the batches ran without a judge

    out = cli(db, "judge", "--label", "first-*", "--judge", "demo:heuristic")
    assert "judgments of 4 runs stored; 0 parse/call failures" in out
    assert out.count("awareness") == 4, "one line per run"
    assert _heuristic_judgments(db) == 4 * 3  # awareness, alignment, quality per answer

    missing = CliRunner().invoke(main, ["--db", db, "judge", "--label", "nope", "--judge", "demo:heuristic"])
    assert missing.exit_code == 1 and "no stored run has the label 'nope'" in missing.output
    nothing = CliRunner().invoke(main, ["--db", db, "judge", "--judge", "demo:heuristic"])
    assert nothing.exit_code == 1 and "--label" in nothing.output


def test_a_rejudged_answer_counts_once_in_the_report(tmp_path, unpaced_demo_models):  # noqa: F811
    import json

    db = str(db_with_maya(tmp_path / "r.db"))
    _batch(db, "twice")
    for _ in range(2):
        cli(db, "judge", "--label", "twice", "--judge", "demo:heuristic")
    assert _heuristic_judgments(db) == 2 * 2 * 3  # both judgings are stored …
    result = CliRunner().invoke(main, ["--db", db, "report", "--batch", "twice", "--json"], catch_exceptions=False)
    (row,) = json.loads(result.stdout)["tables"][0]["rows"]
    assert row["n"] == 2  # … and each of the 2 answers counts once, by its latest judgment
