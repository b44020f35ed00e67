"""LongMemEval's QA metrics over ``longmemeval`` accuracy judgments, as
``src/evaluation/print_qa_metrics.py`` (LongMemEval @ 9e0b455) computes them:

* per question type: the mean of the 0/1 labels of that type, abstention questions included;
* task-averaged: the unweighted mean of the six per-type means (none when a type has no judged
  question: the official script would print NaN);
* overall: the mean over every judged question (micro);
* abstention: the mean over the questions whose id contains ``_abs`` (also counted above).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from core.analysis.report import JudgmentRow
from core.benchmarks.longmemeval.format import QUESTION_TYPES

KIND = "longmemeval"
TASK_AVERAGED = "task-averaged"
OVERALL = "overall"
ABSTENTION = "abstention"


def longmemeval_metrics(items: Sequence[JudgmentRow]) -> list[tuple[str, int, float | None]]:
    """``(metric, n, accuracy)`` for the six types in the official order, then task-averaged,
    overall and abstention. ``items`` are one judge's scored judgments."""
    scored = [j for j in items if j.score is not None]
    out: list[tuple[str, int, float | None]] = []
    per_type: list[float | None] = []
    for qtype in QUESTION_TYPES:
        labels = [j.score for j in scored if j.extra.get("question_type") == qtype and j.score is not None]
        per_type.append(fmean(labels) if labels else None)
        out.append((qtype, len(labels), per_type[-1]))
    means = [m for m in per_type if m is not None]
    out.append((TASK_AVERAGED, len(scored), fmean(means) if len(means) == len(QUESTION_TYPES) else None))
    out.append((OVERALL, len(scored), fmean(j.score for j in scored if j.score is not None) if scored else None))
    abstention = [j.score for j in scored if j.extra.get("abstention") and j.score is not None]
    out.append((ABSTENTION, len(abstention), fmean(abstention) if abstention else None))
    return out
