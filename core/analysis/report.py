"""The statistics of ``prefscope report``: judgment rows in, :class:`ReportTable`\\ s out.

Pure functions; ``storage.report`` only queries the rows (one SQL query per table) and hands them
here, and the CLI renders the tables (``tui/cli/report_view.py``)::

    score_table(rows, "rubric:alignment", ["expression_type", "model"])   # RealPref Fig. 5
    summary_table(responses, judgments)                                 # a batch per model
    agreement_table(rows, "rubric:alignment", ["model"])                # human vs each judge

A benchmark's own tables (CUPID's matching, InterPref's pass rate, LoCoMo's F1 per category …) are
its report sections (``core.benchmark.ReportSection``), built in its folder on the grouping
helpers here.

Rules (those of :mod:`core.judges.aggregate`, whose :func:`score_summary` and :func:`agreement`
do the arithmetic): every row is ONE judge source (llm / heuristic / parser / human) and ONE judge model
and prompt version, so heuristic scores never pool with LLM-judge scores; parse failures carry
no score and are counted in ``failed``; each row says whether its responses came from demo
models (``demo``: demo / real / mixed) and a grouped model id gets a `` [demo]`` tag. Means come
with a BCa bootstrap 95% interval (2,000 resamples, seed 0; none for fewer than two scores).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.analysis.score_columns import ScoreKey, score_column_names
from core.judges.aggregate import agreement, score_summary, source_of

SOURCE_NOTE = "each row is one judge source and judge model: heuristic, parser, human and recorded scores are never pooled with LLM ones"


@dataclass
class ReportTable:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    #: Column holding the value to chart, and the scale's (min, max) when known.
    value_column: str | None = None
    scale: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)

    def as_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r)) for r in self.rows]


@dataclass(frozen=True)
class JudgmentRow:
    """A stored judgment with the values of the report's factors (duck-types
    ``core.judges.base.Judgment`` for the aggregate helpers)."""

    kind: str
    dimension: str
    score: float | None
    parse_ok: bool
    judge_model: str
    prompt_version: str
    heuristic: bool
    human: bool
    #: Whether the judged response came from a demo model (None: not a response judgment).
    is_demo: bool | None
    scale_min: float | None
    scale_max: float | None
    extra: dict[str, Any]
    #: Values of the ``by`` factors, in their order.
    factors: tuple[Any, ...]
    response_id: str | None = None


def demo_label(items: Sequence[JudgmentRow]) -> str:
    flags = {j.is_demo for j in items if j.is_demo is not None}
    if not flags:
        return "n/a"
    return "demo" if flags == {True} else "real" if flags == {False} else "mixed"


def tag_models(by: Sequence[str], values: Sequence[Any], items: Sequence[JudgmentRow]) -> list[Any]:
    out = list(values)
    if "model" in by:
        i = by.index("model")
        if out[i] is not None and any(j.is_demo for j in items):
            out[i] = f"{out[i]} [demo]"
    return out


def group_sort_key(key: tuple[Any, ...]) -> tuple[tuple[bool, str, Any], ...]:
    """None last, then by type name, then by value: factor values mix str, int and None."""
    return tuple((v is None, type(v).__name__ if v is not None else "", v if v is not None else 0) for v in key)


def grouped(items: Iterable[JudgmentRow]) -> dict[tuple[Any, ...], list[JudgmentRow]]:
    """(source, judge model, prompt version, *factor values) -> its judgments, sorted."""
    groups: dict[tuple[Any, ...], list[JudgmentRow]] = defaultdict(list)
    for j in items:
        groups[(source_of(j), j.judge_model, j.prompt_version, *j.factors)].append(j)
    return dict(sorted(groups.items(), key=lambda kv: group_sort_key(kv[0])))


def _scale(items: Sequence[JudgmentRow]) -> tuple[float, float] | None:
    lows = [j.scale_min for j in items if j.scale_min is not None and j.scale_max is not None]
    highs = [j.scale_max for j in items if j.scale_min is not None and j.scale_max is not None]
    return (min(lows), max(highs)) if lows else None


def score_table(
    items: Iterable[JudgmentRow], label: str, factors: Sequence[str], *, sources: Iterable[str] | None = None
) -> ReportTable:
    """n, failures, mean and bootstrap 95% CI of one metric per group of ``factors`` × judge."""
    wanted = set(sources) if sources else None
    rows = []
    kept: list[JudgmentRow] = []
    for key, js in grouped(items).items():
        source, judge, version, *fvals = key
        if wanted and source not in wanted:
            continue
        s = score_summary(js)
        rows.append(
            [
                *tag_models(factors, fvals, js),
                *(source, judge, version, demo_label(js)),
                *(s.n, s.failed, s.mean, s.ci_low, s.ci_high),
            ]
        )
        kept += js
    notes = [SOURCE_NOTE, "failed = parse failures (no score; never counted as 0)"]
    if not rows:
        notes.insert(0, f"no {label} judgments in the selected runs")
    return ReportTable(
        f"{label} by {' × '.join(factors) or 'all'}",
        [*factors, "source", "judge", "prompt_version", "demo", "n", "failed", "mean", "ci_low", "ci_high"],
        rows,
        "mean",
        _scale(kept),
        notes,
    )


def agreement_table(items: Iterable[JudgmentRow], label: str, factors: Sequence[str]) -> ReportTable:
    """Each human annotator against each machine judge (LLM or heuristic) per group of
    ``factors``, on the responses both scored: n, Cohen's kappa (scores as categories) and
    Spearman's rho. No rows when no human scores exist."""
    groups: dict[tuple[Any, ...], list[JudgmentRow]] = defaultdict(list)
    for j in items:
        groups[j.factors].append(j)
    rows = []
    for fvals, js in sorted(groups.items(), key=lambda kv: group_sort_key(kv[0])):
        humans: dict[str, list[JudgmentRow]] = defaultdict(list)
        judges: dict[tuple[str, str, str], list[JudgmentRow]] = defaultdict(list)
        for j in js:
            if source_of(j) == "human":
                humans[j.judge_model].append(j)
            else:
                judges[(source_of(j), j.judge_model, j.prompt_version)].append(j)
        for annotator, hs in sorted(humans.items()):
            for (source, judge, version), ms in sorted(judges.items()):
                a = agreement(hs, ms)
                if a.n:
                    rows.append(
                        [
                            *tag_models(factors, fvals, ms),
                            *(annotator, source, judge, version, demo_label(ms)),
                            *(a.n, a.kappa, a.spearman),
                        ]
                    )
    notes = [
        "human vs judge on the responses both scored; kappa treats scores as categories, "
        "– where undefined (one constant label on both sides, fewer than two items)"
    ]
    if not rows:
        notes.insert(0, f"no {label} human scores on responses a judge also scored")
    return ReportTable(
        f"{label}: human vs judge agreement by {' × '.join(factors) or 'all'}",
        [*factors, "human", "source", "judge", "prompt_version", "demo", "n", "kappa", "spearman"],
        rows,
        "kappa",
        (-1.0, 1.0),
        notes,
    )


@dataclass(frozen=True)
class ResponseRow:
    """A stored final answer, for :func:`summary_table`."""

    model: str
    status: str
    is_demo: bool
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None


#: Answer statuses counted as failed (cancelled answers are counted on their own).
FAILED_STATUSES = ("error", "interrupted")


def summary_table(responses: Iterable[ResponseRow], judgments: Iterable[JudgmentRow]) -> ReportTable:
    """Per model: answers, ok / failed / cancelled, the mean of each score column (named by
    :func:`core.analysis.score_columns.score_column_names`, one per metric × judge source × judge
    model, so sources never pool), tokens and cost. ``judgments`` carry the model as their one factor."""
    per_model: dict[str, list[ResponseRow]] = defaultdict(list)
    for r in responses:
        per_model[r.model].append(r)
    scores: dict[tuple[str, ScoreKey], list[float]] = defaultdict(list)
    keys: set[ScoreKey] = set()
    kept: list[JudgmentRow] = []
    for j in judgments:
        key = ScoreKey(j.kind, j.dimension, source_of(j), j.judge_model)
        keys.add(key)
        kept.append(j)
        if j.parse_ok and j.score is not None:
            scores[(j.factors[0], key)].append(j.score)
    names = score_column_names(keys)
    ordered = sorted(names, key=names.__getitem__)
    rows = []
    unpriced = []
    for model, rs in sorted(per_model.items()):
        costs = [r.cost_usd for r in rs if r.cost_usd is not None]
        if len(costs) < len(rs):
            unpriced.append(model)
        means = [scores.get((model, k)) for k in ordered]
        rows.append(
            [
                f"{model} [demo]" if any(r.is_demo for r in rs) else model,
                len(rs),
                sum(r.status == "ok" for r in rs),
                sum(r.status in FAILED_STATUSES for r in rs),
                sum(r.status == "cancelled" for r in rs),
                *(sum(m) / len(m) if m else None for m in means),
                sum(r.input_tokens or 0 for r in rs),
                sum(r.output_tokens or 0 for r in rs),
                sum(costs) if costs else None,
            ]
        )
    columns = [
        "model",
        "n",
        "ok",
        "failed",
        "cancelled",
        *(names[k] for k in ordered),
        "input_tokens",
        "output_tokens",
        "cost_usd",
    ]
    notes = [
        "one row per model over the stored final answers; score columns are plain means of the parsed scores "
        "(`prefscope report` gives n, failures and 95% intervals; `prefscope export` has the same column names)"
    ]
    if unpriced:
        notes.append(f"cost_usd sums the known prices; no price for some answers of {', '.join(unpriced)}")
    if not ordered:
        notes.append("no scores: the batch was run without --judge (add one, or `prefscope judge` the runs)")
    return ReportTable("summary by model", columns, rows, names[ordered[0]] if ordered else None, _scale(kept), notes)
