"""LongMemEval's metrics as print_qa_metrics.py computes them: per type (abstention included),
task-averaged over the six types, overall, abstention apart; failed calls left out and counted."""

from __future__ import annotations

import pytest

from core.analysis.report import JudgmentRow
from core.benchmarks.longmemeval.format import QUESTION_TYPES
from core.benchmarks.longmemeval.report import longmemeval_table


def row(qtype: str, score: float | None, *, abstention: bool = False, model: str = "m", judge: str = "openai:gpt-4o"):
    return JudgmentRow(
        kind="longmemeval", dimension="accuracy", score=score, parse_ok=score is not None, judge_model=judge,
        prompt_version="longmemeval-anscheck-9e0b455", heuristic=False, human=False, is_demo=False,
        scale_min=0.0, scale_max=1.0, extra={"question_type": qtype, "abstention": abstention}, factors=(model,),
    )  # fmt: skip


def metrics(table) -> dict[str, tuple[int, float | None]]:
    return {r["metric"]: (r["n"], r["accuracy"]) for r in table.as_dicts()}


def test_task_average_is_the_mean_of_type_means_and_abstention_is_apart():
    rows = [row(t, 1.0) for t in QUESTION_TYPES]
    rows += [row("multi-session", 0.0), row("multi-session", 0.0), row("multi-session", 1.0, abstention=True)]
    rows += [row("temporal-reasoning", 0.0, abstention=True), row("temporal-reasoning", None)]
    got = metrics(longmemeval_table(rows, ["model"]))
    assert got["multi-session"] == (4, 0.5) and got["temporal-reasoning"] == (2, 0.5)
    assert got["single-session-user"] == (1, 1.0)
    assert got["task-averaged"][1] == pytest.approx((4 * 1.0 + 0.5 + 0.5) / 6)
    assert got["overall"] == (10, 0.7)  # micro: every judged question once
    assert got["abstention"] == (2, 0.5)
    assert {r["failed"] for r in longmemeval_table(rows, ["model"]).as_dicts()} == {1}


def test_a_missing_type_leaves_the_task_average_empty_and_judges_never_pool():
    rows = [row("knowledge-update", 1.0), row("knowledge-update", 0.0, judge="openai:gpt-4o-mini")]
    table = longmemeval_table(rows, ["model"])
    by_judge = {(r["judge"], r["metric"]): r["accuracy"] for r in table.as_dicts()}
    assert by_judge[("openai:gpt-4o", "knowledge-update")] == 1.0
    assert by_judge[("openai:gpt-4o-mini", "knowledge-update")] == 0.0
    assert by_judge[("openai:gpt-4o", "task-averaged")] is None
    assert by_judge[("openai:gpt-4o", "single-session-user")] is None


def test_no_judgments_says_how_to_get_them():
    table = longmemeval_table([], ["model"])
    assert table.rows == [] and "longmemeval:<model>" in table.notes[0]
