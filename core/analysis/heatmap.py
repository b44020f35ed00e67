"""A score over two factors as a grid (depth × length, the needle-in-a-haystack picture).

``heatmaps(rows, label, factors)``: the first factor runs down the rows, the second across the
columns; any further factors split the grid into one panel per value combination, as does the
judge (source, model, prompt version: scores of different judges never share a cell, the rule of
:mod:`core.judges.aggregate`). A cell holds the mean of its scores and how many there are; parse
failures carry no score and are left out of the mean (as in every report table). Context
configurations sort by the order of :data:`core.history.configs.CONFIGS` (shortest history first),
other values numerically / alphabetically with "none" (NULL) last.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.analysis.report import JudgmentRow
from core.history.configs import CONFIGS
from core.judges.aggregate import source_of

_CONTEXT_ORDER = {name: i for i, name in enumerate(CONFIGS)}


@dataclass
class Heatmap:
    title: str
    row_factor: str
    col_factor: str
    rows: list[Any]
    cols: list[Any]
    #: means[i][j]: mean score of row value i × column value j (None: no score there).
    means: list[list[float | None]]
    counts: list[list[int]]
    #: The judgments' scale (min, max) when known: the colour range.
    scale: tuple[float, float] | None
    #: "source · judge · prompt version" and the values of the splitting factors.
    panel: str


def axis_order(factor: str, values: Iterable[Any]) -> list[Any]:
    """The factor's values in reading order (see the module docstring)."""

    def key(v: Any) -> tuple:
        if v is None:
            return (2, 0, "")
        if factor == "context" and v in _CONTEXT_ORDER:
            return (0, _CONTEXT_ORDER[v], "")
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return (0, v, "")
        return (1, 0, str(v))

    return sorted(set(values), key=key)


def heatmaps(items: Iterable[JudgmentRow], label: str, factors: Sequence[str]) -> list[Heatmap]:
    """One :class:`Heatmap` per judge and per value combination of ``factors[2:]``."""
    if len(factors) < 2:
        raise ValueError("a heatmap needs two factors: rows, then columns (e.g. --by evidence_depth,context)")
    row_f, col_f, *split = factors
    panels: dict[tuple, list[JudgmentRow]] = defaultdict(list)
    for j in items:
        panels[(source_of(j), j.judge_model, j.prompt_version, *j.factors[2:])].append(j)
    out = []
    for key in sorted(panels, key=lambda k: tuple(("" if v is None else str(v)) for v in k)):
        js = panels[key]
        rows = axis_order(row_f, (j.factors[0] for j in js))
        cols = axis_order(col_f, (j.factors[1] for j in js))
        scores: dict[tuple[Any, Any], list[float]] = defaultdict(list)
        for j in js:
            if j.parse_ok and j.score is not None:
                scores[(j.factors[0], j.factors[1])].append(float(j.score))
        means = [[_mean(scores.get((r, c), [])) for c in cols] for r in rows]
        counts = [[len(scores.get((r, c), [])) for c in cols] for r in rows]
        source, judge, version, *split_values = key
        panel = " · ".join([f"{source} · {judge} · {version}", *(f"{f}={v}" for f, v in zip(split, split_values))])
        lows = [j.scale_min for j in js if j.scale_min is not None and j.scale_max is not None]
        highs = [j.scale_max for j in js if j.scale_min is not None and j.scale_max is not None]
        scale = (min(lows), max(highs)) if lows else None
        out.append(Heatmap(f"{label}: {row_f} × {col_f}", row_f, col_f, rows, cols, means, counts, scale, panel))
    return out


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
