"""LongMemEval's report section: its QA accuracy table over ``longmemeval`` judgments (the
numbers come from :func:`core.benchmarks.longmemeval.metrics.longmemeval_metrics`).

One block of rows per judge model, prompt version and group of ``factors`` (LLM judges only, like
every other table). A failed judge call has no label and is left out, counted in ``failed`` (the
official script retries until it has one). Values are not rounded (the official script prints 4
decimals).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.longmemeval.metrics import KIND, longmemeval_metrics
from core.judges.aggregate import source_of


def longmemeval_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    rows = []
    for key, js in grouped(j for j in items if j.kind == KIND and source_of(j) == "llm").items():
        _, judge, version, *fvals = key
        failed = sum(1 for j in js if j.score is None)
        head = [*tag_models(factors, fvals, js), judge, version, demo_label(js)]
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
