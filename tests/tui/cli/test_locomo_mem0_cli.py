"""Through the real CLI and SQLite: a LoCoMo dataset, its LoCoMo predictions file and a mem0 results
file (hand-made, tests/fixtures/locomo_mem0/) import; judged with prefscope's LoCoMo F1 and mem0's
F1 / BLEU-1, `report` shows the recorded and the computed numbers side by side."""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

import pytest

from tests.cli_runner import cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "locomo_mem0"


def _judgments(db: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT r.query_id, j.kind, j.dimension, j.judge_model, j.score FROM judgments j "
            "JOIN runs r ON r.id = j.run_id ORDER BY r.query_id, j.kind, j.judge_model"
        ).fetchall()


def test_locomo_predictions_and_mem0_results_give_both_numbers(tmp_path):
    db = str(tmp_path / "p.db")
    cli(db, "import", str(FIXTURES / "annotations.json"))
    out = cli(db, "import-results", str(FIXTURES / "predictions.json"))
    assert "3 runs added" in out and "3 of 3 matched" in out
    out = cli(db, "import-results", str(FIXTURES / "mem0_metrics.json"))
    assert "2 runs added" in out
    cli(db, "judge", "--label", "imported:*", "--judge", "locomo")
    # mem0 skips category 5 (a recorded failure, exit 3): judge the mem0 file's answers only
    cli(db, "judge", "--label", "imported:mem0_metrics.json", "--judge", "mem0-f1", "--judge", "mem0-bleu1")
    rows = _judgments(db)
    by = {(q, k, m): s for q, k, _, m, s in rows}
    # LoCoMo: recorded _f1 and prefscope's LoCoMo F1 agree (hand-computed: 0.5, 0.5, 1)
    for k, want in enumerate([0.5, 0.5, 1.0]):
        q = f"locomo-fx-1-qa{k:03d}"
        assert by[(q, "locomo", "recorded:locomo-eval")] == want
        assert by[(q, "locomo", "metric:locomo")] == pytest.approx(want)
    # mem0: recorded f1_score and prefscope's mem0 F1 agree (hand-computed: 2/3 twice)
    mem0 = [(k, m, s) for q, k, _, m, s in rows if q.startswith("mem0-locomo-0-") and k == "mem0-f1"]
    assert sorted(m for _, m, _ in mem0) == ["metric:mem0-f1"] * 2 + ["recorded:mem0-evals"] * 2
    assert all(s == pytest.approx(2 / 3) for *_, s in mem0)
    report = cli(db, "report", "--by", "model")
    assert "LoCoMo QA F1" in report and "mem0 F1" in report and "mem0 BLEU-1" in report
    assert "recorded:locomo-eval" in report and "metric:locomo" in report
    assert "recorded:mem0-evals" in report and "metric:mem0-f1" in report


def test_locomo_predictions_without_the_dataset_land_on_placeholder_users(tmp_path):
    db = str(tmp_path / "p.db")
    result = (
        pytest.importorskip("click.testing")
        .CliRunner()
        .invoke(
            __import__("tui.cli", fromlist=["main"]).main,
            ["--db", db, "import-results", str(FIXTURES / "predictions.json")],
        )
    )
    if result.exit_code != 0 and "no stored user" in result.output:
        pytest.xfail("storage links user_id/query_id only to stored users (fallback on missing ids: issue 39)")
    assert result.exit_code == 0, result.output
    # the placeholder has the importer's ids: importing the dataset later replaces it, the runs stay
    cli(db, "import", str(FIXTURES / "annotations.json"))
    cli(db, "judge", "--label", "imported:*", "--judge", "locomo")
    by = {(q, m): s for q, k, _, m, s in _judgments(db) if k == "locomo"}
    assert by[("locomo-fx-1-qa000", "metric:locomo")] == pytest.approx(0.5)


def test_agreement_compares_a_recorded_score_with_one_made_here(tmp_path):
    """Recorded scores are a rater of their own: `agreement` sets mem0's recorded F1 beside the F1
    prefscope computes now on the same answers (equal on both items: exact agreement 1.00)."""
    db = str(tmp_path / "p.db")
    cli(db, "import-results", str(FIXTURES / "mem0_metrics.json"))
    cli(db, "judge", "--label", "imported:mem0_metrics.json", "--judge", "mem0-f1")
    out = cli(
        db,
        "agreement",
        "--batch",
        "imported:mem0_metrics.json",
        "--dimension",
        "mem0-f1:f1",
        "--csv",
        str(tmp_path / "a.csv"),
    )
    assert "metric:mem0-f1" in out and "recorded:mem0-evals" in out
    with (tmp_path / "a.csv").open(encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    assert {row["rater_a"], row["rater_b"]} == {"metric:mem0-f1", "recorded:mem0-evals"}, row
    assert (row["n"], float(row["exact"])) == ("2", 1.0), row
