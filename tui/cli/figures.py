"""`prefscope report --figure NAME`: the papers' line figures drawn from stored runs.

Each figure is a score table by (x factor, line factor[, panel factor]) — the numbers the
terminal table shows, from :func:`storage.report.score_table` — drawn as one line per model with
its 95% interval:

- ``context``: score vs context configuration, shortest history first (RealPref Fig. 6);
- ``turns``: score vs PrefEval inter turns (PrefEval's accuracy-vs-turns curves);
- ``recency``: score vs the user's own sessions after the latest relevant session, one panel per
  CUPID instance type (CUPID Fig. 3: models favour the most recent sessions);
- ``depth``: score vs the depth the evidence was moved to (position sweeps).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from core.analysis.heatmap import axis_order
from core.analysis.report import ReportTable
from tui.png_figures import pyplot, save_png

#: figure -> (x factor, line factor, optional panel factor), and what it reproduces.
FIGURES: dict[str, tuple[list[str], str]] = {
    "context": (["context", "model"], "score vs context configuration per model (RealPref Fig. 6)"),
    "turns": (["turns", "model"], "score vs inter turns per model (PrefEval)"),
    "recency": (
        ["sessions_back", "model", "instance_type"],
        "score vs sessions after the latest relevant one, per CUPID instance type (CUPID Fig. 3)",
    ),
    "depth": (["evidence_depth", "model"], "score vs evidence depth per model (position sweeps)"),
}


def write_figure_png(
    tables: list[ReportTable], factors: list[str], path: str | Path, *, protect: Iterable = (), force: bool = False
) -> None:
    """One panel per table × judge × panel value; x = factors[0], a line per factors[1] value."""
    fig, titles = lines_figure(tables, factors)
    save_png(fig, path, titles=titles, protect=protect, force=force)


def lines_figure(tables: list[ReportTable], factors: list[str]) -> tuple[Any, list[tuple[Any, Any]]]:
    """The figure and each panel's (axes, title): a line per ``factors[1]`` value named in the
    legend, the x ticks named by ``factors[0]`` values, the y axis over the judge's scale (the
    scale stored with the judgments, when known) so a flat line looks flat."""
    plt = pyplot()

    panels: dict[str, dict[object, list[tuple[object, float, float | None, float | None]]]] = defaultdict(
        lambda: defaultdict(list)
    )
    xs: dict[str, list] = defaultdict(list)
    scales: dict[str, tuple[float, float] | None] = {}
    for t in tables:
        col = {c: i for i, c in enumerate(t.columns)}
        for row in t.rows:
            if row[col["mean"]] is None:
                continue
            extra = [f"{f}={row[col[f]]}" for f in factors[2:]]
            name = " · ".join([t.title, f"{row[col['source']]} · {row[col['judge']]}", *extra])
            x = row[col[factors[0]]]
            panels[name][row[col[factors[1]]]].append((x, row[col["mean"]], row[col["ci_low"]], row[col["ci_high"]]))
            xs[name].append(x)
            scales[name] = t.scale
    if not panels:
        raise ValueError("nothing to plot: no scores for this figure in the selected runs")
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.2 * len(panels)), squeeze=False)
    titles = []
    for ax, (name, lines) in zip(axes[:, 0], panels.items()):
        order = axis_order(factors[0], xs[name])
        where = {x: i for i, x in enumerate(order)}
        for label, points in sorted(lines.items(), key=lambda kv: str(kv[0])):
            points = sorted(points, key=lambda p: where[p[0]])
            pos = [where[p[0]] for p in points]
            means = [p[1] for p in points]
            low = [m - (p[2] if p[2] is not None else m) for m, p in zip(means, points)]
            high = [(p[3] if p[3] is not None else m) - m for m, p in zip(means, points)]
            # clip_on off: a point at the top of the scale is drawn whole on the frame
            ax.errorbar(pos, means, yerr=[low, high], marker="o", capsize=3, label=str(label), clip_on=False)
        ax.set_xticks(range(len(order)), ["none" if x is None else str(x) for x in order], fontsize=8)
        if scales[name]:
            ax.set_ylim(*scales[name])
        ax.set_xlabel(factors[0])
        ax.set_ylabel("mean (95% CI)")
        titles.append((ax, ax.set_title(name, fontsize=9, loc="left")))
        # beside the panel, never over a line
        ax.legend(title=factors[1], fontsize=7, title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig, titles
