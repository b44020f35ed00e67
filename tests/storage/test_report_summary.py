"""The report's default metrics, the per-model summary and the parser source, from stored rows."""

from __future__ import annotations

import pytest

from storage.db import open_db
from storage.export import RunFilter
from storage.report import default_metrics, score_table, summary_table
from tests.storage.export_fixtures import Writer, db_with_tiny, judgment

A, B = "openai:gpt-x", "demo:generic"


def accuracy(score: float):
    return judgment("choice", "accuracy", score, judge="parser:choice", scale=(0.0, 1.0))


@pytest.fixture
def db_path(tmp_path):
    """By hand, label "mix" unless said otherwise:

    ======  ===========================================================  ========================
    model   answers                                                      scores
    ======  ===========================================================  ========================
    gpt-x   q-mcq ok × 3 (cost 0.001 each)                               accuracy 1, 1, 0
    gpt-x   q-cons ok (cost 0.001)                                       LLM 4, heuristic 2
    gpt-x   q-cons error (no price)                                      —
    generic q-cons ok × 2, cancelled × 1 (demo)                          LLM 2, 3
    gpt-x   q-mcq ok, label "other"                                      accuracy 0
    ======  ===========================================================  ========================

    Summary of "mix": gpt-x n 5, ok 4, failed 1, accuracy 2/3, alignment LLM 4 / heuristic 2,
    500 tokens in, 100 out, $0.004 (one answer unpriced); generic n 3, ok 2, cancelled 1,
    alignment LLM 2.5."""
    path = db_with_tiny(tmp_path / "s.db")
    w = Writer(path)
    for s in (1.0, 1.0, 0.0):
        w.run(model=A, query="q-mcq", label="mix", judgments=[accuracy(s)])
    w.run(
        model=A,
        label="mix",
        judgments=[judgment(score=4.0), judgment(score=2.0, judge="demo:heuristic", heuristic=True)],
    )
    w.run(model=A, label="mix", status="error", error="boom", cost=None)
    for s in (2.0, 3.0):
        w.run(model=B, label="mix", judgments=[judgment(score=s)])
    w.run(model=B, label="mix", status="cancelled", cost=None)
    w.run(model=A, query="q-mcq", label="other", judgments=[accuracy(0.0)])
    w.close()
    return path


def test_default_metrics_follow_the_selected_queries(db_path):
    db = open_db(db_path)
    try:
        assert default_metrics(db, RunFilter(labels=["mix"])) == ["accuracy", "rubric:alignment"]
        assert default_metrics(db, RunFilter(labels=["other"])) == ["accuracy"]
        assert default_metrics(db, RunFilter(models=[B])) == ["rubric:alignment"]
    finally:
        db.close()


def test_summary_per_model_matches_hand_computation(db_path):
    db = open_db(db_path)
    try:
        t = summary_table(db, RunFilter(labels=["mix"]))
    finally:
        db.close()
    assert t.columns == [
        "model",
        "n",
        "ok",
        "failed",
        "cancelled",
        "score_choice_accuracy",
        "score_rubric_alignment_heuristic",
        "score_rubric_alignment_llm",
        "input_tokens",
        "output_tokens",
        "cost_usd",
    ]
    rows = {r["model"]: r for r in t.as_dicts()}
    a, b = rows[A], rows[f"{B} [demo]"]
    assert (a["n"], a["ok"], a["failed"], a["cancelled"]) == (5, 4, 1, 0)
    assert a["score_choice_accuracy"] == pytest.approx(2 / 3)  # label "other" is not in the batch
    assert a["score_rubric_alignment_llm"] == 4.0 and a["score_rubric_alignment_heuristic"] == 2.0
    assert (a["input_tokens"], a["output_tokens"]) == (500, 100)
    assert a["cost_usd"] == pytest.approx(0.004)
    assert (b["n"], b["ok"], b["failed"], b["cancelled"]) == (3, 2, 0, 1)
    assert b["score_rubric_alignment_llm"] == pytest.approx(2.5)
    assert b["score_choice_accuracy"] is None and b["score_rubric_alignment_heuristic"] is None
    assert any("no price" in n and A in n for n in t.notes)


def test_stored_parser_judgments_read_as_source_parser(db_path):
    """Rows stored as every version stored them (judge model ``parser:choice``, not heuristic,
    not human) come back as the parser source: filterable, never pooled with LLM judges."""
    db = open_db(db_path)
    try:
        stored = db.execute("SELECT DISTINCT heuristic, human FROM judgments WHERE judge_model = 'parser:choice'")
        assert stored.fetchall() == [(0, 0)]
        t = score_table(db, "accuracy", ["model"], RunFilter(labels=["mix"]))
        only_llm = score_table(db, "accuracy", ["model"], RunFilter(labels=["mix"]), sources=["llm"])
        only_parser = score_table(db, "accuracy", ["model"], RunFilter(labels=["mix"]), sources=["parser"])
    finally:
        db.close()
    assert [r["source"] for r in t.as_dicts()] == ["parser"]
    assert only_llm.rows == [] and only_parser.rows == t.rows
