"""The export's prompt-size, evidence and retrieval columns, read back with pandas and checked
against the stored rows they come from; judge sources in the long layout."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from core.plan import EvidencePosition, Message, PromptPlan, PromptStep, RetrievedTurn
from core.providers.base import ModelParams, ModelSpec
from core.run.spec import JudgeScored, ResponseFinished, ResponseStarted, RunFinished, RunSpec, RunStarted
from storage.db import open_db
from storage.export import export
from storage.recorder import RunRecorder
from tests.storage.export_fixtures import db_with_tiny, judgment


def step(name: str, tokens: int) -> PromptStep:
    return PromptStep(name=name, tokens=tokens, messages=[Message(role="user", content=f"{name}?")])


def record(rec: RunRecorder, n: int, plan: PromptPlan, *, method: str = "zero-shot", judgments=()) -> None:
    """One run whose steps each got a reply; the last step's reply is the final answer."""
    run_id = f"run-{n}"
    spec = RunSpec(
        user_id="u1",
        query_id="q-cons",
        expression_type=1,
        context="simple",
        method=method,
        models=[ModelSpec(id="openai:gpt-x", params=ModelParams())],
    )
    rec.record(RunStarted(run_id, spec, plan, created_at=f"2026-01-01T00:00:0{n}+00:00"))
    for i, s in enumerate(plan.steps):
        final = i == len(plan.steps) - 1
        rid = f"resp-{n}-{i}"
        rec.record(ResponseStarted(run_id, rid, spec.models[0], 0, s.name, final, f"{n}{i}".ljust(64, "0")))
        rec.record(
            ResponseFinished(run_id, rid, 0, s.name, final, "ok", "reply", None, 1.0, 2.0, s.tokens + 9, 5, None, False)
        )
    for j in judgments:
        rec.record(JudgeScored(run_id, f"resp-{n}-{len(plan.steps) - 1}", j))
    rec.record(RunFinished(run_id, "ok"))


def turn(rank: int, evidence: bool) -> RetrievedTurn:
    return RetrievedTurn(rank=rank, session_id="s1", turn_index=rank, similarity=1.0 / rank, is_evidence=evidence)


EVIDENCE = [EvidencePosition(session_id="s1", position=0, tokens_to_query=300)] + [
    EvidencePosition(session_id="s2", position=1, tokens_to_query=120)
]


@pytest.fixture
def db_path(tmp_path):
    """run-1: a two-step method (50 + 70 planned tokens), two evidence sessions 300 and 120 tokens
    from the query, no retrieval. run-2: RAG whose second retrieved turn is gold. run-3: RAG that
    missed the gold. run-4: RAG on a query without gold evidence. Parser, LLM and heuristic
    judgments on run-1."""
    path = db_with_tiny(tmp_path / "x.db")
    rec = RunRecorder(path)
    judgments = [
        judgment("choice", "accuracy", 1.0, judge="parser:choice", scale=(0, 1)),
        judgment(score=4.0),
        judgment(score=2.0, judge="demo:heuristic", heuristic=True),
    ]
    two_steps = PromptPlan(method="workflow", steps=[step("draft", 50), step("answer", 70)], evidence=EVIDENCE)
    record(rec, 1, two_steps, method="workflow", judgments=judgments)
    for n, retrieved, evidence in (
        (2, [turn(1, False), turn(2, True)], EVIDENCE),
        (3, [turn(1, False)], EVIDENCE),
        (4, [turn(1, False)], []),
    ):
        plan = PromptPlan(method="rag", steps=[step("answer", 200 + n)], evidence=evidence, retrieved=retrieved)
        record(rec, n, plan, method="rag")
    rec.close()
    return path


def frame(db_path, **kw) -> pd.DataFrame:
    db = open_db(db_path)
    try:
        buf = io.StringIO(newline="")
        export(db, buf, **kw)
    finally:
        db.close()
    return pd.read_csv(io.StringIO(buf.getvalue())).set_index("run_id")


def test_prompt_evidence_and_retrieval_columns_match_the_stored_rows(db_path):
    df = frame(db_path)
    columns = list(df.columns)
    assert columns.index("prompt_tokens") == columns.index("history_tokens") + 1
    assert columns.index("estimate_input_tokens") == columns.index("input_tokens") + 1
    db = open_db(db_path)
    try:
        planned = dict(db.execute("SELECT run_id, sum(tokens) FROM prompts GROUP BY run_id").fetchall())
        final_step = dict(
            db.execute(
                "SELECT p.run_id, pt.tokens FROM responses p JOIN prompts pt ON pt.run_id = p.run_id "
                "AND pt.step = p.step WHERE p.is_final = 1"
            ).fetchall()
        )
        reported = dict(db.execute("SELECT run_id, input_tokens FROM responses WHERE is_final = 1").fetchall())
    finally:
        db.close()
    assert df["prompt_tokens"].to_dict() == planned == {"run-1": 120, "run-2": 202, "run-3": 203, "run-4": 204}
    assert (
        df["estimate_input_tokens"].to_dict() == final_step == {"run-1": 70, "run-2": 202, "run-3": 203, "run-4": 204}
    )
    assert df["input_tokens"].to_dict() == reported  # the provider's own figure, next to ours
    # The nearest evidence session; none when the plan has no gold evidence.
    assert df["evidence_tokens_to_query"].to_dict() == pytest.approx(
        {"run-1": 120, "run-2": 120, "run-3": 120, "run-4": float("nan")}, nan_ok=True
    )
    # Whether gold was retrieved: only for retrieval runs on queries with gold evidence.
    gold = df["gold_retrieved"].map(lambda v: None if pd.isna(v) else bool(v)).to_dict()
    assert gold == {"run-1": None, "run-2": True, "run-3": False, "run-4": None}


def test_score_columns_are_readable_and_jsonl_carries_the_same(db_path):
    df = frame(db_path)
    scores = [c for c in df.columns if c.startswith("score_")]
    assert scores == ["score_choice_accuracy", "score_rubric_alignment_heuristic", "score_rubric_alignment_llm"]
    assert df.loc["run-1", scores].tolist() == [1.0, 2.0, 4.0]
    db = open_db(db_path)
    try:
        buf = io.StringIO()
        export(db, buf, fmt="jsonl")
    finally:
        db.close()
    rows = pd.read_json(io.StringIO(buf.getvalue()), lines=True).set_index("run_id")
    assert list(rows.columns) == list(df.columns)
    assert rows.loc["run-2", "gold_retrieved"] and not rows.loc["run-3", "gold_retrieved"]
    assert rows.loc["run-1", "estimate_input_tokens"] == 70


def test_long_layout_names_each_judgments_source(db_path):
    df = frame(db_path, layout="long")
    assert dict(zip(df.judge_model, df.source)) == {
        "parser:choice": "parser",
        "openai:judge": "llm",
        "demo:heuristic": "heuristic",
    }
