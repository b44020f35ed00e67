"""LongMemEval's QA metrics over ``longmemeval`` accuracy judgments, as
``src/evaluation/print_qa_metrics.py`` (LongMemEval @ 9e0b455) computes them:

* per question type: the mean of the 0/1 labels of that type, abstention questions included;
* task-averaged: the unweighted mean of the six per-type means (none when a type has no judged
  question: the official script would print NaN);
* overall: the mean over every judged question (micro);
* abstention: the mean over the questions whose id contains ``_abs`` (also counted above).

One block of rows per judge model, prompt version and group of ``factors`` (LLM judges only, like
every other table). A failed judge call has no label and is left out, counted in ``failed`` (the
official script retries until it has one). Values are not rounded (the official script prints 4
decimals).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from statistics import fmean

from core.analysis.report import JudgmentRow, ReportTable, _demo_label, _grouped, _tag_models
from core.formats.longmemeval import QUESTION_TYPES
from core.judges.aggregate import source_of

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


def longmemeval_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    rows = []
    for key, js in _grouped(j for j in items if j.kind == KIND and source_of(j) == "llm").items():
        _, judge, version, *fvals = key
        failed = sum(1 for j in js if j.score is None)
        head = [*_tag_models(factors, fvals, js), judge, version, _demo_label(js)]
        rows += [[*head, metric, n, failed, acc] for metric, n, acc in longmemeval_metrics(js)]
    notes = [
        "LongMemEval print_qa_metrics.py @9e0b455: per type (abstention questions included), task-averaged ="
        " mean of the six type means (empty unless every type is judged), overall = micro mean, abstention ="
        " ids containing '_abs'",
        "failed = judge calls without a label (left out, never counted as 0)",
    ]
    if not rows:
        notes.insert(0, "no longmemeval judgments (judge `longmemeval:<model>` on LongMemEval questions)")
    return ReportTable(
        f"LongMemEval QA accuracy by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "metric", "n", "failed", "accuracy"],
        rows,
        "accuracy",
        (0.0, 1.0),
        notes,
    )
