"""InterPref's report sections (``prefscope report --interpref``): the pass rate per group and
the win rate and Bradley–Terry coefficient per model, from the stored ``pairwise`` judgments (LLM
judges only). Judgment rows in, :class:`core.analysis.report.ReportTable` out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from core.analysis.report import JudgmentRow, ReportTable, demo_label, grouped, tag_models
from core.benchmarks.interpref.judge import pass_summary, win_rates
from core.judges.aggregate import source_of


def pass_table(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    """InterPref pass rate (all 4 swapped orders right; chance 6.25%) per group, LLM judges only."""
    rows = []
    for key, js in grouped(j for j in items if source_of(j) == "llm").items():
        _, judge, version, *fvals = key
        s = pass_summary(js)
        rows.append(
            [
                *tag_models(factors, fvals, js),
                *(judge, version, demo_label(js)),
                *(s["n"], s["undecided"], s["pass_rate"], s["order_disagreement"]),
            ]
        )
    notes = ["chance pass rate is 0.5**4 = 6.25%; undecided = an order could not be parsed"]
    if not rows:
        notes.insert(0, "no pairwise pass judgments in the selected runs")
    return ReportTable(
        f"InterPref pass rate by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "n", "undecided", "pass_rate", "order_disagreement"],
        rows,
        "pass_rate",
        (0.0, 1.0),
        notes,
    )


def bradley_terry_table(items: Iterable[JudgmentRow]) -> ReportTable:
    """Win rate and Bradley–Terry coefficient per model from pairwise ``win`` judgments (LLM only)."""
    wins = [j for j in items if source_of(j) == "llm" and j.parse_ok and j.score is not None and "model_a" in j.extra]
    columns = ["model", "comparisons", "mean_win_rate", "bt"]
    if not wins:
        return ReportTable("Bradley–Terry", columns, [], "bt", None, ["no pairwise win judgments in the selected runs"])
    names, matrix, bt = win_rates(wins)
    rows: list[list[Any]] = []
    for i, name in enumerate(names):
        against = np.delete(matrix[i], i)
        met = against[~np.isnan(against)]
        n = sum(1 for j in wins if name in (j.extra["model_a"], j.extra["model_b"]))
        tag = f"{name} [demo]" if name.startswith("demo:") else name
        rows.append([tag, n, float(met.mean()) if len(met) else None, float(bt[i])])
    rows.sort(key=lambda r: -r[3])
    return ReportTable(
        "Bradley–Terry coefficients (InterPref App. C)",
        columns,
        rows,
        "bt",
        None,
        ["coefficients are centred on mean 0; W[i,j] = mean score of i against j"],
    )


def bradley_terry_section(items: Iterable[JudgmentRow], factors: Sequence[str]) -> ReportTable:
    """:func:`bradley_terry_table` as a report section (``core.benchmark.ReportSection``); it has no factors."""
    return bradley_terry_table(items)
