"""LoCoMo's per-category aggregation (evaluation_stats.py): sum / count per category in the print
order 4, 1, 2, 3, 5, micro overall; unscored judgments left out and counted; other judges ignored."""

from __future__ import annotations

import pytest

from core.analysis.report import JudgmentRow
from core.benchmarks.locomo.report import locomo_table


def row(category: int | None, score: float | None, *, model: str = "m", judge: str = "metric:locomo"):
    return JudgmentRow(
        kind="locomo", dimension="f1", score=score, parse_ok=score is not None, judge_model=judge,
        prompt_version="locomo-f1-repo-9228632", heuristic=False, human=False, is_demo=False,
        scale_min=0.0, scale_max=1.0, extra={} if category is None else {"category": category}, factors=(model,),
    )  # fmt: skip


def test_sum_over_count_per_category_and_micro_overall():
    rows = [row(4, 1.0), row(4, 0.5), row(4, 0.0), row(1, 0.25), row(5, 1.0), row(5, 0.0), row(None, None)]
    rows.append(row(4, 1.0, judge="openai:gpt-4o"))  # not the metric: ignored
    table = locomo_table(rows, ["model"])
    got = [(r["metric"], r["n"], r["failed"], r["accuracy"]) for r in table.as_dicts()]
    assert got == [
        ("4 single-hop", 3, 1, pytest.approx(1.5 / 3)),
        ("1 multi-hop", 1, 1, 0.25),
        ("2 temporal", 0, 1, None),
        ("3 open-domain", 0, 1, None),
        ("5 adversarial", 2, 1, 0.5),
        ("overall", 6, 1, pytest.approx(2.75 / 6)),  # micro: (1 + .5 + 0 + .25 + 1 + 0) / 6
    ]


def test_no_judgments_says_so():
    table = locomo_table([], ["model"])
    assert table.rows == [] and table.notes[0].startswith("no locomo judgments")
