"""LoCoMo's QA scores per category over ``locomo`` F1 judgments (judge_model ``metric:locomo``, and
the ``_f1`` values an imported LoCoMo predictions file recorded, ``recorded:locomo-eval``, as blocks
of their own, never pooled), as
snap-research/locomo @ 9228632 aggregates them (``task_eval/evaluation_stats.py``; PROTOCOL.md §3.6):

* per category, in LoCoMo's print order 4, 1, 2, 3, 5: accuracy = sum of the per-question scores /
  number of questions of that category (LoCoMo calls it accuracy; it is the mean F1, and the mean
  0/1 "not mentioned" score for category 5);
* overall: sum of all scores / number of all questions, a micro average over categories 1-5.

Categories are shown as number and name (``4 single-hop``); the names are INFERRED from the
evaluation code, which only uses the numbers (:data:`core.benchmarks.locomo.format.CATEGORY_NAMES`).

One block of rows per judge model, prompt version and group of ``factors``. A judgment without a
score (the judge refused a query that is not LoCoMo's) is left out and counted in ``failed``.
Values are not rounded. Grouped ``--by category``, a block lists only its own category and overall.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.locomo.format import category_label
from core.benchmarks.locomo.judge import CATEGORIES, JUDGE_MODEL, PRINT_ORDER
from core.judges.aggregate import RECORDED_PREFIX

KIND = "locomo"
OVERALL = "overall"


def locomo_metrics(items: Sequence[JudgmentRow]) -> list[tuple[str, int, float | None]]:
    """``(metric, n, accuracy)`` for the five categories in LoCoMo's print order, then overall.
    ``items`` are one judge's judgments; those without a score are left out."""
    scored = [(j.extra.get("category"), j.score) for j in items if j.score is not None]
    out: list[tuple[str, int, float | None]] = []
    for category in PRINT_ORDER:
        scores = [s for c, s in scored if c == category]
        out.append((category_label(category), len(scores), sum(scores) / len(scores) if scores else None))
    every = [s for c, s in scored if c in CATEGORIES]
    out.append((OVERALL, len(every), sum(every) / len(every) if every else None))
    return out


def locomo_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    rows = []
    wanted = (
        j
        for j in items
        if j.kind == KIND and (j.judge_model == JUDGE_MODEL or j.judge_model.startswith(RECORDED_PREFIX))
    )
    for key, js in grouped(wanted).items():
        _, judge, version, *fvals = key
        failed = sum(1 for j in js if j.score is None)
        head = [*tag_models(factors, fvals, js), judge, version, demo_label(js)]
        metrics = locomo_metrics(js)
        if "category" in factors:  # grouped by category already: its other categories would be empty rows
            metrics = [m for m in metrics if m[1] or m[0] == OVERALL]
        rows += [[*head, metric, n, failed, acc] for metric, n, acc in metrics]
    notes = [
        "LoCoMo evaluation_stats.py @9228632: per category accuracy = sum of F1 / questions of that category,"
        " printed in the order 4, 1, 2, 3, 5; overall = micro mean over all questions",
        "category names are inferred from LoCoMo's evaluation code, which only uses the numbers",
        "failed = judgments without a score (not LoCoMo questions; left out, never counted as 0)",
    ]
    if not rows:
        notes.insert(0, "no locomo judgments (judge `locomo` on LoCoMo questions)")
    return ReportTable(
        f"LoCoMo QA F1 by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "metric", "n", "failed", "accuracy"],
        rows,
        "accuracy",
        (0.0, 1.0),
        notes,
    )
