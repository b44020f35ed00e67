"""Rendering :class:`core.analysis.report.ReportTable`: rich table, terminal bar chart, JSON, CSV, PNG."""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from app.outputs import formula_safe, replace_atomically
from core.analysis.report import ReportTable
from core.text.short_ids import MIN_COLUMN, fitted, short_forms
from tui.png_figures import pyplot, save_png
from tui.safe_text import safe_text

BAR_WIDTH = 30
#: The terminal chart's narrowest bar and widest label (longer labels are cut from the middle).
MIN_BAR = 10
LABEL_WIDTH = 48
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
    "item_variance",
    "item_sd",
    "flip_rate",
    "flip_ci_low",
    "flip_ci_high",
    "exact",
    "within1",
    "answer_sd",
}

#: Columns shown once under the table when every row has the same value.
CAPTION_COLUMNS = ("source", "judge", "prompt_version", "demo", "cancelled")
COUNT_COLUMNS = {
    "n",
    "ok",
    "failed",
    "cancelled",
    "undecided",
    "comparisons",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "items",
    "repeats",
    "answers",
    "judgings",
}


def _fmt(col: str, v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if col in ("pass_rate", "order_disagreement", "mean_win_rate"):
            return f"{v:.1%}"
        if col == "cost_usd":
            return f"${v:,.4f}"
        return f"{v:.3f}"
    if isinstance(v, int) and not isinstance(v, bool) and col.endswith("_tokens"):
        return f"{v:,}"
    return str(v)


def rich_table(t: ReportTable, fit: int | None = None) -> Table:
    """The table; a descriptive column with one value in every row (the judge, its source, prompt
    version …) moves into the caption, and columns sit closer when that makes the table fit
    ``fit`` terminal columns. Numbers are never cut: when the table is still too wide, long text
    (user, query and batch ids …) is cut from the middle so the score columns stay on screen."""
    keep = list(range(len(t.columns)))
    shared = []
    for i, c in enumerate(t.columns):
        values = {_fmt(c, r[i]) for r in t.rows}
        if c in CAPTION_COLUMNS and len(values) == 1 and (len(t.rows) > 1 or c == "prompt_version"):
            keep.remove(i)
            shared.append(f"{c.replace('_', ' ')}: {values.pop()}")
    columns = [t.columns[i] for i in keep]
    cells = [[_fmt(t.columns[i], row[i]) for i in keep] for row in t.rows]
    headers, gap = _layout(columns, cells, fit)
    if fit is not None and _width(columns, headers, cells, gap) > fit:
        cells = _shortened(columns, headers, cells, fit - _width(columns, headers, cells, gap, texts=False))
        headers, gap = _layout(columns, cells, fit)
    table = Table(
        title=safe_text(t.title),
        title_justify="left",
        caption=safe_text(" · ".join(shared)) if shared else None,
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, (gap - 1) // 2, 0, (gap - 1) - (gap - 1) // 2),
    )
    for c, header in zip(columns, headers):
        table.add_column(header, justify="right" if _is_number(c) else "left", no_wrap=True)
    for r in cells:
        table.add_row(*(safe_text(v) for v in r))  # "[demo]" is not markup
    return table


def _is_number(column: str) -> bool:
    return column in VALUE_COLUMNS or column in COUNT_COLUMNS or column.startswith("score_")


def _layout(columns: list[str], cells: list[list[str]], fit: int | None) -> tuple[list[Text], int]:
    """Headers and the gap between columns: whole headers 3 apart when that fits ``fit``, else
    closer, else headers broken after their underscores (:func:`_header`), closer still."""
    widths = _widths(cells, len(columns))
    headers: list[Text] = []
    for split in (False, True):
        headers = [_header(c, w if split else len(c)) for c, w in zip(columns, widths)]
        for gap in (3, 2, 1):
            if fit is None or _width(columns, headers, cells, gap) <= fit:
                return headers, gap
    return headers, 1


def _widths(cells: list[list[str]], n: int) -> list[int]:
    return [max((len(r[i]) for r in cells), default=0) for i in range(n)]


def _width(columns: list[str], headers: list[Text], cells: list[list[str]], gap: int, *, texts: bool = True) -> int:
    """The table's width in terminal columns; with ``texts=False`` without its text columns
    (what the numbers and the gaps take)."""
    total = gap * (len(columns) - 1)
    for c, w, h in zip(columns, _widths(cells, len(columns)), headers):
        if texts or _is_number(c):
            total += max(w, _header_width(h))
    return total


def _shortened(columns: list[str], headers: list[Text], cells: list[list[str]], room: int) -> list[list[str]]:
    """The cells with the text columns cut from the middle to share ``room`` columns
    (:func:`core.text.short_ids.fitted`: distinct values stay distinct)."""
    texts = [i for i, c in enumerate(columns) if not _is_number(c)]
    return fitted(cells, texts, room, headers={i: _header_width(headers[i]) for i in texts})


def _header_width(header: Text) -> int:
    return max(map(len, header.plain.split("\n")))


def _header(column: str, width: int) -> Text:
    """A long column name broken after its underscores to about its values' width (values are
    never cut, so a narrow terminal keeps every number whole)."""
    lines: list[str] = []
    for piece in re.findall(r"[^_]+_*|_+", column):
        if lines and len(lines[-1]) + len(piece) <= max(width, 1):
            lines[-1] += piece
        else:
            lines.append(piece)
    return safe_text("\n".join(lines))


def _label_columns(t: ReportTable) -> list[int]:
    """The columns that tell the rows apart: those before the first number (the factors, a
    benchmark's metric …), less the descriptive ones with one value in every row (the judge, its
    source …: :func:`_shared` puts those in the chart's heading)."""
    stop = next((i for i, c in enumerate(t.columns) if _is_number(c) or c == t.value_column), len(t.columns))
    return [i for i in range(stop) if t.columns[i] not in CAPTION_COLUMNS or len({r[i] for r in t.rows}) > 1]


def _shared(t: ReportTable) -> str:
    """The judge source and judge every row shares (``heuristic · demo:heuristic``), or ""."""
    labelled = set(_label_columns(t))
    shared = [i for i, c in enumerate(t.columns) if c in ("source", "judge") and i not in labelled]
    return " · ".join(str(t.rows[0][i]) for i in shared if t.rows and t.rows[0][i] is not None)


def _label(t: ReportTable, row: list, columns: list[int] | None = None) -> str:
    """What the row's bar stands for: its label columns' values (a judge source in brackets)."""
    parts = []
    for i in _label_columns(t) if columns is None else columns:
        if row[i] is None or (t.columns[i] == "source" and row[i] == "llm"):
            continue
        parts.append(f"({row[i]})" if t.columns[i] == "source" else str(row[i]))
    return " · ".join(parts) or "all"


def _labels(t: ReportTable) -> list[str]:
    columns = _label_columns(t)
    return [_label(t, row, columns) for row in t.rows]


def bar_chart(t: ReportTable, width: int = BAR_WIDTH, *, fit: int | None = None) -> Text:
    """One bar per row, scaled to the metric's scale (or the data's range), with the 95% CI;
    bars shortened so a line fits ``fit`` columns when given."""
    out = Text()
    if not t.rows or t.value_column not in t.columns:
        return out
    vi = t.columns.index(t.value_column)
    values = [r[vi] for r in t.rows if isinstance(r[vi], (int, float))]
    if not values:
        return out
    if t.scale:
        lo, hi = t.scale
    else:  # no recorded scale: the data's range, intervals included, so no interval leaves the axis
        ends = values + [r[t.columns.index(c)] for c in ("ci_low", "ci_high") if c in t.columns for r in t.rows]
        ends = [e for e in ends if isinstance(e, (int, float))]
        lo, hi = min(0.0, min(ends)), max(ends)
    if hi <= lo:
        hi = lo + 1
    labels = _labels(t)
    natural = max(map(len, labels))
    lw = min(LABEL_WIDTH, natural)
    if fit is not None:  # label, space, bar, " 0.571  [0.14, 0.86]"
        lw = max(min(lw, fit - 22 - MIN_BAR), min(natural, MIN_COLUMN))
        width = max(MIN_BAR, min(width, fit - lw - 22))
    forms = short_forms(labels, lw)  # cut from the middle: distinct labels stay distinct
    axis = f"scale {lo:g}–{hi:g}" if t.scale else f"no recorded scale: {lo:g}–{hi:g} from the data"
    out.append(f"{t.value_column} ({axis})\n", style="bold")
    for label, row in zip(labels, t.rows):
        v = row[vi]
        out.append(f"{forms[label]:<{lw}} ")
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


def _plain(v):
    """JSON-safe: NaN/inf (an undefined statistic) as null."""
    return None if isinstance(v, float) and not math.isfinite(v) else v


def tables_json(tables: list[ReportTable]) -> str:
    """``{"tables": [{title, columns, rows: [{column: value}], value_column, scale, notes}]}``."""
    out = [
        {
            "title": t.title,
            "columns": t.columns,
            "rows": [{c: _plain(v) for c, v in zip(t.columns, row)} for row in t.rows],
            "value_column": t.value_column,
            "scale": list(t.scale) if t.scale else None,
            "notes": t.notes,
        }
        for t in tables
    ]
    return json.dumps({"tables": out}, ensure_ascii=False, indent=2)


def write_csv(
    tables: list[ReportTable], path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False
) -> None:
    """All tables into one CSV; a ``table`` column says which table a row belongs to. Text cells
    are :func:`app.outputs.formula_safe` (numbers untouched). Written whole or not at all;
    ``protect``/``force`` as in :func:`storage.output_files.check_target`."""
    with replace_atomically(path, protect=protect, force=force) as fh:
        w = csv.writer(fh)
        for t in tables:
            w.writerow([formula_safe(c) for c in ("table", *t.columns)])
            for row in t.rows:
                w.writerow([formula_safe(c) for c in (t.title, *("" if v is None else v for v in row))])


def write_png(
    tables: list[ReportTable], path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False
) -> None:
    """Horizontal bar charts with 95% CI whiskers, one panel per table (matplotlib, Agg), written
    like :func:`write_csv`."""
    fig, titles = bar_figure(tables)
    save_png(fig, path, titles=titles, protect=protect, force=force)


def bar_figure(tables: list[ReportTable]) -> tuple[Any, list[tuple[Any, Any]]]:
    """The figure and each panel's (axes, title): a bar per row labelled with what it stands for
    (its factor values, a benchmark's metric …), its value printed at its end, the value axis on
    the metric's scale; what every bar shares (judge source and judge) is in the title."""
    plt = pyplot()

    drawable = [t for t in tables if t.rows and t.value_column in t.columns]
    if not drawable:
        raise ValueError("nothing to plot: the report has no rows")
    heights = [max(1.5, 0.35 * len(t.rows) + 1) for t in drawable]
    fig, axes = plt.subplots(
        len(drawable), 1, figsize=(9, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    titles = []
    for ax, t in zip(axes[:, 0], drawable):
        vi = t.columns.index(t.value_column)
        vals = [r[vi] if isinstance(r[vi], (int, float)) else float("nan") for r in t.rows]
        err = None
        if "ci_low" in t.columns:
            lo_i, hi_i = t.columns.index("ci_low"), t.columns.index("ci_high")
            err = [
                [(v - r[lo_i]) if r[lo_i] is not None else 0 for v, r in zip(vals, t.rows)],
                [(r[hi_i] - v) if r[hi_i] is not None else 0 for v, r in zip(vals, t.rows)],
            ]
        ax.barh(range(len(vals)), vals, xerr=err, color="#3b7dd8", capsize=3)
        ax.set_yticks(range(len(vals)), _labels(t), fontsize=8)
        ax.invert_yaxis()
        if t.scale:
            ax.set_xlim(*t.scale)
        left = ax.get_xlim()[0]
        for y, v in enumerate(vals):  # the number past its whisker; "no score" where the group has none
            end = v if err is None or math.isnan(v) else v + err[1][y]
            text = " no score" if math.isnan(v) else f" {_fmt(t.value_column, v)}"
            ax.text(left if math.isnan(v) else end, y, text, va="center", fontsize=7)
        shared = _shared(t)
        titles.append((ax, ax.set_title(t.title + (f" · {shared}" if shared else ""), fontsize=10, loc="left")))
        ax.set_xlabel(t.value_column)
    return fig, titles
