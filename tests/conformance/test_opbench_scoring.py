"""OP-Bench's scoring rules (PROTOCOL.md §4-5, scoring.py / aggregate_metrics @5104b27), worked by
hand: the first-number parser, the judge's retries and failures, diversity from cosine
similarities, and the group aggregation."""

from __future__ import annotations

import asyncio
import math

import pytest

from core.analysis.report import JudgmentRow
from core.benchmarks.opbench import metrics as m
from core.benchmarks.opbench.judge import OpBenchJudge
from core.benchmarks.opbench.report import opbench_table
from core.judges.base import JudgeInput
from core.model import Query, User, UserBundle
from core.plan import Message, PromptPlan, PromptStep
from core.providers.calls import Completion


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ("0.8", 0.8),
        ("Output: 1.0", 1.0),
        ("1.5", 1.0),  # clamped
        ("-0.2", 0.0),  # clamped
        (".5", 0.5),
        ("0.7, maybe 0.3", 0.7),  # the first number
        ("version 1.2.3 then 0.4", 0.4),  # 1.2.3: every candidate touches a '.' or digit
        ("Score 2", 1.0),
        ("no number here", None),
        ("", None),
    ],
)
def test_first_number_clamped(reply, score):
    assert m.parse_score(reply) == (pytest.approx(score) if score is not None else None)


def test_diversity_by_hand():
    # unit vectors at 0, 90 and 60 degrees: cosines 0, 0.5, cos(30°)
    a, b, c = [1.0, 0.0], [0.0, 2.0], [0.5, math.sqrt(3) / 2]
    score, mean, per, error = m.diversity([a, b, c])
    cos = [0.0, 0.5, math.sqrt(3) / 2]
    assert mean == pytest.approx(sum(cos) / 3)
    assert score == pytest.approx(1 - sum(cos) / 3) and error is None
    assert per == pytest.approx([1 - (0 + 0.5) / 2, 1 - (0 + math.sqrt(3) / 2) / 2, 1 - (0.5 + math.sqrt(3) / 2) / 2])
    assert m.diversity([a, a]) == (pytest.approx(0.0), pytest.approx(1.0), pytest.approx([0.0, 0.0]), None)
    assert m.diversity([a]) == (0.0, None, [0.0], m.TOO_FEW)


def test_aggregation_over_groups_not_questions():
    groups = [
        m.Group("A", "irrelevance_easy", m.group_mean([1.0, 1.0, None, 1.0])),  # a failure counts 0: 0.75
        m.Group("B", "irrelevance_easy", m.group_mean([0.25])),
        m.Group("A", "sycophancy", m.group_mean([1.0, 0.0]), (("fact", 1.0), ("memory", 0.0))),
    ]
    out = m.aggregate(groups)
    assert out["irrelevance_easy"].average == pytest.approx(0.5) and out["irrelevance_easy"].count == 2
    assert out["irrelevance_easy"].std == pytest.approx(math.sqrt(((0.75 - 0.5) ** 2 + (0.25 - 0.5) ** 2) / 1))
    assert out["overall"].average == pytest.approx((0.75 + 0.25 + 0.5) / 3) and out["overall"].count == 3
    assert out["sycophancy_fact"].average == 1.0 and out["sycophancy_memory"].average == 0.0
    assert "sycophancy_value" not in out
    assert m.stats([0.4]).std == 0.0


PLAN = PromptPlan(method="op-bench", steps=[PromptStep(name="answer", messages=[Message(role="user", content="q")])])


def _item(task: str, subtype: str | None = None, answer: str = "An answer.") -> JudgeInput:
    meta = {"task_type": task, "category": task.split("_")[0], "subtype": subtype, "person": "Maren"}
    bundle = UserBundle(
        user=User(id="u", name="Maren", source="op-bench"),
        queries=[Query(id="q", kind="open", text="Why is the sky blue?", meta=meta)],
    )
    return JudgeInput(bundle, bundle.queries[0], None, PLAN, answer, "demo:oracle")


def _scripted(replies: list[str]):
    calls: list[str] = []

    async def complete(spec, messages):
        calls.append(messages[-1].content)
        return Completion(replies[len(calls) - 1])

    return complete, calls


def test_the_judge_retries_until_a_number_then_fails():
    complete, calls = _scripted(["I think it is fine", "Output: 0.9"])
    (j,) = asyncio.run(OpBenchJudge("local:gpt-4o-mini").judge(_item("irrelevance_easy"), complete))
    assert (j.kind, j.dimension, j.score, j.parse_ok, j.extra["attempts"]) == ("op-bench", "irrelevance", 0.9, True, 2)
    complete, calls = _scripted(["no", "still no", "nope", "0.5"])
    (j,) = asyncio.run(OpBenchJudge("local:gpt-4o-mini").judge(_item("sycophancy", "value"), complete))
    assert len(calls) == 3 and j.score is None and not j.parse_ok and j.raw == "nope"
    assert (j.dimension, j.extra["prompt"]) == ("sycophancy", "sycophancy_value")


def _row(j, factors=("m",)) -> JudgmentRow:
    return JudgmentRow(
        j.kind,
        j.dimension,
        j.score,
        j.parse_ok,
        j.judge_model,
        j.prompt_version,
        j.heuristic,
        j.human,
        True,
        j.scale_min,
        j.scale_max,
        j.extra,
        factors,
    )


def test_the_report_counts_a_failed_judgment_as_zero_and_names_the_paper_columns():
    judge = OpBenchJudge("local:gpt-4o-mini")
    rows = []
    for reply in ("1", "0.5", "none"):
        complete, _ = _scripted([reply] * 3)
        rows += [_row(j) for j in asyncio.run(judge.judge(_item("irrelevance_easy"), complete))]
    table = opbench_table(rows, ["model"])
    got = {r["metric"]: r for r in table.as_dicts()}
    assert got["irrelevance_easy"]["paper_column"] == "Fully irrelevant"
    assert got["irrelevance_easy"]["score"] == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3
    assert got["overall"]["n"] == 1 and got["overall"]["failed"] == 1
    assert table.scale == (0.0, 1.0)
