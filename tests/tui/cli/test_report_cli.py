"""`prefscope report` fits the data: a real demo batch on MCQ queries reports accuracy (not an
empty rubric table), a mixed batch reports both, `--json` and `--summary` give the numbers the
stored rows hold, and `prefscope batch` ends with the per-model summary."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from storage.db import open_db
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tests.storage.export_fixtures import db_with_maya
from tui.cli import main

MCQ = [f"p{i}-mcq" for i in range(1, 7)]
MODELS = ["--model", "demo:generic", "--model", "demo:oracle"]


def batch(db: str, name: str, queries: list[str]) -> str:
    args = ["batch", "--name", name, "--user", "maya", "--expression", "1", "--context", "simple"]
    args += ["--method", "zero-shot", *MODELS, "--judge", "demo:heuristic", "--yes"]
    for q in queries:
        args += ["--query", q]
    return cli(db, *args)


def report_json(db: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["--db", db, "report", "--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["tables"]  # stdout holds the JSON alone


@pytest.fixture
def db(tmp_path, unpaced_demo_models):  # noqa: F811
    return str(db_with_maya(tmp_path / "r.db"))


def stored(db: str, sql: str, *args) -> dict:
    conn = open_db(db)
    try:
        return dict(conn.execute(sql, list(args)).fetchall())
    finally:
        conn.close()


def test_mcq_batch_reports_accuracy_by_default_and_ends_with_a_summary(db):
    out = batch(db, "mcq", MCQ)
    assert "summary by model" in out and "accuracy" in out  # the batch-end table (80 columns: split header)
    table = out[out.index("summary by model") :].split("note:")[0]
    assert all(len(line) <= 80 for line in table.splitlines()) and "…" not in table

    text = cli(db, "report", "--batch", "mcq")
    assert "accuracy by model" in text and "rubric" not in text and "no accuracy judgments" not in text
    assert "source: parser" in text  # the choice parser is no LLM judge

    [acc] = report_json(db, "--batch", "mcq")
    assert acc["title"] == "accuracy by model"
    rows = {r["model"]: r for r in acc["rows"]}
    scored = stored(
        db,
        "SELECT p.model, avg(j.score) FROM judgments j JOIN responses p ON p.id = j.response_id "
        "JOIN runs r ON r.id = j.run_id WHERE r.label = ? AND j.kind = 'choice' AND j.parse_ok GROUP BY p.model",
        "mcq",
    )
    assert {m.removesuffix(" [demo]"): r["mean"] for m, r in rows.items()} == pytest.approx(scored)
    assert rows["demo:oracle [demo]"]["mean"] == 1.0  # the oracle follows the preference
    assert {r["source"] for r in acc["rows"]} == {"parser"}


def test_mixed_batch_reports_both_metrics_labelled_and_the_summary_matches_stored_rows(db):
    batch(db, "mix", ["p1-open", "p1-mcq", "p2-open", "p2-tf-yes"])
    titles = [t["title"] for t in report_json(db, "--batch", "mix")]
    assert titles == ["accuracy by model", "rubric:alignment by model"]

    [summary] = report_json(db, "--batch", "mix", "--summary")
    assert summary["columns"][5:7] == ["score_choice_accuracy", "score_rubric_alignment"]
    answers = stored(
        db,
        "SELECT p.model, count(*) FROM responses p JOIN runs r ON r.id = p.run_id WHERE r.label = 'mix' "
        "AND p.is_final GROUP BY p.model",
    )
    tokens = stored(
        db,
        "SELECT p.model, sum(p.input_tokens) FROM responses p JOIN runs r ON r.id = p.run_id "
        "WHERE r.label = 'mix' AND p.is_final GROUP BY p.model",
    )
    for row in summary["rows"]:
        model = row["model"].removesuffix(" [demo]")
        assert row["n"] == row["ok"] == answers[model] == 4 and row["failed"] == 0
        assert row["input_tokens"] == tokens[model]
        assert 0 <= row["score_choice_accuracy"] <= 1 and 1 <= row["score_rubric_alignment"] <= 5
    shown = cli(db, "report", "--batch", "mix", "--summary", "--no-chart").split("note:")[0]
    assert "score_" in shown and "…" not in shown and all(len(line) <= 80 for line in shown.splitlines())
    # The export names the same scores the same way.
    csv = cli(db, "export", "--batch", "mix")
    assert "score_choice_accuracy" in csv.splitlines()[0] and "score_rubric_alignment" in csv.splitlines()[0]


def test_an_explicit_metric_and_source_still_win(db):
    batch(db, "mix2", ["p1-open", "p1-mcq"])
    [t] = report_json(db, "--batch", "mix2", "--metric", "rubric:alignment", "--source", "heuristic")
    assert t["title"] == "rubric:alignment by model" and {r["source"] for r in t["rows"]} == {"heuristic"}
    [none] = report_json(db, "--batch", "mix2", "--metric", "accuracy", "--source", "llm")
    assert none["rows"] == [] and "no accuracy judgments" in none["notes"][0]


def test_the_choice_parser_is_shown_as_a_parser_not_an_llm_judge(db):
    from storage.runs import load_run
    from tui.screens.text_view import judgment_markdown
    from tui.widgets.judges_tab import source_label

    batch(db, "one", ["p1-mcq"])
    run_id = next(iter(stored(db, "SELECT id, status FROM runs WHERE label = 'one'")))
    out = cli(db, "judge", run_id, "--judge", "demo:heuristic", "--dry-run")
    assert "[parser]" in out  # the judge column tags the choice parser (the cell may wrap)
    conn = open_db(db)
    try:
        judgments = [j for j in load_run(conn, run_id).judgments if j.kind == "choice"]
    finally:
        conn.close()
    assert judgments and {source_label(j) for j in judgments} == {"parser"}
    assert "(parser (no model call))" in judgment_markdown("demo:oracle", judgments[0])


def test_report_help_names_every_factor_it_accepts():
    """The --by help is written by hand: it must keep naming every factor the report reads."""
    from storage.report import FACTORS

    text = " ".join(CliRunner().invoke(main, ["report", "--help"]).output.split())
    missing = [name for name in FACTORS if name not in text]
    assert not missing, missing
