"""LongMemEval's report section: its QA accuracy table over ``longmemeval`` judgments (the
numbers come from :func:`core.benchmarks.longmemeval.metrics.longmemeval_metrics`).

Two sources, never pooled: judgments made here (an LLM judge ``longmemeval:<model>``) and labels
recorded by ``evaluate_qa.py`` in a judge log (``recorded:<judge id>``, imported with
``import-results``; no model is called). One block of rows per release (original or cleaned: the
cleaned questions are users ``longmemeval-cleaned-<id>``), model, source, judge and prompt version.
The question type of a row is the stored question's (``Query.meta``, the ``question_type`` factor;
an answer imported before its dataset has none until the dataset is imported), else the one the
judge noted. A failed judge call (or an unusable recorded label) has no score and is left out,
counted in ``failed`` (the official script retries until it has one). Values are not rounded (the
official script prints 4 decimals).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.longmemeval.format import CLEANED
from core.benchmarks.longmemeval.metrics import KIND, longmemeval_metrics
from core.judges.aggregate import source_of

#: Factors the table reads per row rather than grouping by (the descriptor asks for them).
TYPE_FACTOR = "question_type"
USER_FACTOR = "user"
SOURCES = ("llm", "recorded")


def release(user_id: object) -> str:
    """``cleaned`` for the cleaned release's users, else ``original``."""
    return "cleaned" if str(user_id).startswith(f"{CLEANED}-") else "original"


def _typed(j: JudgmentRow, factors: Sequence[str], shown: Sequence[str]) -> JudgmentRow:
    values = dict(zip(factors, j.factors, strict=False))
    qtype = values.get(TYPE_FACTOR) or j.extra.get("question_type")
    keep = [values.get(f) for f in shown]
    if USER_FACTOR in factors:
        keep.append(release(values.get(USER_FACTOR)))
    return replace(j, extra={**j.extra, "question_type": qtype}, factors=tuple(keep))


def longmemeval_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    shown = [f for f in factors if f not in (TYPE_FACTOR, USER_FACTOR)]
    columns = [*shown, *(["release"] if USER_FACTOR in factors else [])]
    js_all = [_typed(j, factors, shown) for j in items if j.kind == KIND and source_of(j) in SOURCES]
    rows = []
    for key, js in grouped(js_all).items():
        source, judge, version, *fvals = key
        failed = sum(1 for j in js if j.score is None)
        head = [*tag_models(shown, fvals[: len(shown)], js), *fvals[len(shown) :], source, judge, version]
        head.append(demo_label(js))
        rows += [[*head, metric, n, failed, acc] for metric, n, acc in longmemeval_metrics(js)]
    notes = [
        "LongMemEval print_qa_metrics.py @9e0b455: per type (abstention questions included), task-averaged ="
        " mean of the six type means (empty unless every type is judged), overall = micro mean, abstention ="
        " ids containing '_abs'",
        "failed = judge calls (or recorded labels) without a label (left out, never counted as 0)",
    ]
    if any(source_of(j) == "recorded" for j in js_all):
        notes.append(
            "source recorded = labels from evaluate_qa.py judge logs (*.eval-results-<judge>), imported, not judged"
            " here; never pooled with judgments made here"
        )
    untyped = sum(1 for j in js_all if j.score is not None and not j.extra.get("question_type"))
    if untyped:
        notes.append(
            f"{untyped} judged answer{'s' * (untyped != 1)} without a question type (imported before their"
            " dataset: placeholder questions) count in overall and abstention only; import the dataset to"
            " see them per type"
        )
    if not rows:
        notes.insert(
            0,
            "no longmemeval judgments (judge `longmemeval:<model>` on LongMemEval questions, or import a judge"
            " log *.eval-results-<judge> with `import-results`)",
        )
    return ReportTable(
        f"LongMemEval QA accuracy by {' × '.join(columns) or 'all'}",
        [*columns, "source", "judge", "prompt_version", "demo", "metric", "n", "failed", "accuracy"],
        rows,
        "accuracy",
        (0.0, 1.0),
        notes,
    )
