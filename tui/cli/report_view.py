"""Rendering :class:`core.analysis.report.ReportTable`: rich table, terminal bar chart, CSV, PNG."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path

from rich.table import Table
from rich.text import Text

from core.analysis.report import ReportTable
from storage.output_files import replace_atomically

BAR_WIDTH = 30
VALUE_COLUMNS = {
    "mean",
    "ci_low",
    "ci_high",
    "precision",
    "recall",
    "f1",
    "pass_rate",
    "order_disagreement",
    "mean_win_rate",
    "bt",
    "kappa",
    "spearman",
}


def _fmt(col: str, v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if col in ("pass_rate", "order_disagreement", "mean_win_rate"):
            return f"{v:.1%}"
        return f"{v:.3f}"
    return str(v)


def rich_table(t: ReportTable) -> Table:
    """The table; a prompt_version shared by every row moves into the caption to save width."""
    keep = list(range(len(t.columns)))
    caption = None
    if "prompt_version" in t.columns and t.rows:
        i = t.columns.index("prompt_version")
        versions = {r[i] for r in t.rows}
        if len(versions) == 1:
            keep.remove(i)
            caption = f"prompt version: {versions.pop()}"
    table = Table(title=t.title, title_justify="left", caption=caption, caption_justify="left")
    for i in keep:
        c = t.columns[i]
        table.add_column(
            c, justify="right" if c in VALUE_COLUMNS or c in ("n", "failed", "undecided", "comparisons") else "left"
        )
    for row in t.rows:
        table.add_row(*(Text(_fmt(t.columns[i], row[i])) for i in keep))  # Text: "[demo]" is not markup
    return table


def _label(t: ReportTable, row: list) -> str:
    # The group's factor values are the columns before the first descriptive one.
    stop = min((t.columns.index(c) for c in ("source", "judge", "comparisons") if c in t.columns), default=len(row))
    parts = [str(v) for v in row[:stop] if v is not None]
    if "source" in t.columns:
        src = row[t.columns.index("source")]
        if src != "llm":
            parts.append(f"({src})")
    return " · ".join(parts) or "all"


def bar_chart(t: ReportTable, width: int = BAR_WIDTH) -> Text:
    """One bar per row, scaled to the metric's scale (or the data's range), with the 95% CI."""
    out = Text()
    if not t.rows or t.value_column not in t.columns:
        return out
    vi = t.columns.index(t.value_column)
    values = [r[vi] for r in t.rows if isinstance(r[vi], (int, float))]
    if not values:
        return out
    lo, hi = t.scale if t.scale else (min(0.0, min(values)), max(values))
    if hi <= lo:
        hi = lo + 1
    labels = [_label(t, r) for r in t.rows]
    lw = min(48, max(len(s) for s in labels))
    out.append(f"{t.value_column} (scale {lo:g}–{hi:g})\n", style="bold")
    for label, row in zip(labels, t.rows):
        v = row[vi]
        out.append(f"{label[:lw]:<{lw}} ")
        if not isinstance(v, (int, float)) or math.isnan(v):
            out.append("–\n")
            continue
        frac = max(0.0, min(1.0, (v - lo) / (hi - lo)))
        full = int(round(frac * width))
        out.append("█" * full, style="cyan")
        out.append("·" * (width - full), style="dim")
        extra = ""
        if "ci_low" in t.columns and row[t.columns.index("ci_low")] is not None:
            extra = f"  [{row[t.columns.index('ci_low')]:.2f}, {row[t.columns.index('ci_high')]:.2f}]"
        out.append(f" {_fmt(t.value_column, v)}{extra}\n")
    return out


def write_csv(
    tables: list[ReportTable], path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False
) -> None:
    """All tables into one CSV; a ``table`` column says which table a row belongs to.
    Written whole or not at all; ``protect``/``force`` as in :func:`storage.output_files.check_target`."""
    with replace_atomically(path, protect=protect, force=force) as fh:
        w = csv.writer(fh)
        for t in tables:
            w.writerow(["table", *t.columns])
            for row in t.rows:
                w.writerow([t.title, *("" if v is None else v for v in row)])


def write_png(
    tables: list[ReportTable], path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False
) -> None:
    """Horizontal bar charts with 95% CI whiskers, one panel per table (matplotlib, Agg), written
    like :func:`write_csv`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    drawable = [t for t in tables if t.rows and t.value_column in t.columns]
    if not drawable:
        raise ValueError("nothing to plot: the report has no rows")
    heights = [max(1.5, 0.35 * len(t.rows) + 1) for t in drawable]
    fig, axes = plt.subplots(
        len(drawable), 1, figsize=(9, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, t in zip(axes[:, 0], drawable):
        vi = t.columns.index(t.value_column)
        labels = [_label(t, r) for r in t.rows]
        vals = [r[vi] if isinstance(r[vi], (int, float)) else float("nan") for r in t.rows]
        err = None
        if "ci_low" in t.columns:
            lo_i, hi_i = t.columns.index("ci_low"), t.columns.index("ci_high")
            err = [
                [(v - r[lo_i]) if r[lo_i] is not None else 0 for v, r in zip(vals, t.rows)],
                [(r[hi_i] - v) if r[hi_i] is not None else 0 for v, r in zip(vals, t.rows)],
            ]
        ax.barh(range(len(vals)), vals, xerr=err, color="#3b7dd8", capsize=3)
        ax.set_yticks(range(len(vals)), labels, fontsize=8)
        ax.invert_yaxis()
        if t.scale:
            ax.set_xlim(*t.scale)
        ax.set_title(t.title, fontsize=10, loc="left")
        ax.set_xlabel(t.value_column)
    fig.tight_layout()
    try:
        with replace_atomically(path, binary=True, protect=protect, force=force) as fh:
            fig.savefig(fh, format="png", dpi=120)
    finally:
        plt.close(fig)
