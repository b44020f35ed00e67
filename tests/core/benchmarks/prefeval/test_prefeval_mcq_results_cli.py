"""Through the real CLI and SQLite, without the dataset: PrefEval MCQ results (hand-made, the files
of tests/fixtures/prefeval_results/) import on users of their own, `judge --judge choice` scores
them with PrefEval's parser, and `report` gives each model's accuracy next to PrefEval's recorded
one (hand-worked per record in test_prefeval_mcq_results.py: Llama 2/5, Claude 3/5)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.cli_runner import cli

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "prefeval_results"


def test_imported_mcq_answers_are_judged_and_reported_as_prefeval_scores_them(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    db = str(tmp_path / "p.db")
    out = cli(db, "import-results", str(FIXTURES))
    assert "10 runs added" in out
    out = cli(db, "judge", "--label", "imported:*", "--judge", "choice")
    assert "10 judgments of 10 runs stored; 0 parse/call failures" in out
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT p.model, json_extract(r.plan, '$.imported.record'), j.score, r.plan FROM judgments j "
            "JOIN runs r ON r.id = j.run_id JOIN responses p ON p.id = j.response_id "
            "WHERE j.judge_model = 'parser:choice' ORDER BY p.model, 2"
        ).fetchall()
    assert all('"answer_format": "mcq-prefeval"' in plan for *_, plan in rows)
    scores = {(m, rec): s for m, rec, s, _ in rows}
    assert [scores[("imported:llama370b", i)] for i in range(5)] == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert [scores[("imported:claude3hk", i)] for i in range(5)] == [1.0, 1.0, 0.0, 1.0, 0.0]
    report = cli(db, "report", "--by", "model")
    assert "accuracy by model" in report
    table = report[report.index("accuracy by model") : report.index("demo: real")]
    # table rows: model, source, judge, prompt_version, n, failed, mean, ci_low, ci_high
    rows = [ln.split() for ln in table.splitlines() if ln.startswith("imported:")]
    means = {(r[0], r[2]): (r[4], r[6]) for r in rows}
    assert means[("imported:claude3hk", "parser:choice")] == ("5", "0.600")
    assert means[("imported:llama370b", "parser:choice")] == ("5", "0.400")
    assert means[("imported:claude3hk", "recorded:prefeval-extract-choice")] == ("5", "0.600")
    assert means[("imported:llama370b", "recorded:prefeval-extract-choice")] == ("5", "0.400")
