"""How a diagnosis reads in the terminal: one line per answer, the funnel as a table, and the
funnel as a PNG (one stacked bar per group, a segment per label)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich import box
from rich.table import Table
from rich.text import Text

from core.analysis.diagnosis import (
    APPLIED,
    KNOWN_NOT_APPLIED,
    LABELS,
    MISAPPLIED,
    NOT_IN_CONTEXT,
    NOT_KNOWN,
    NOT_RETRIEVED,
    Diagnosis,
)
from core.analysis.report import ReportTable
from tui.diagnosis_style import COLOURS, MARK, label_text
from tui.png_figures import pyplot, save_png
from tui.safe_text import safe_text


def answer_line(model: str, diagnosis: Diagnosis, *, demo: bool = False) -> Text:
    """``model  label  ✓ in context: … · ✗ known: …`` (data and model text as plain Text)."""
    line = Text()
    line.append_text(safe_text(model + (" [demo]" if demo else ""), style="bold"))
    line.append("  ")
    line.append_text(label_text(diagnosis))
    for step in diagnosis.steps:
        if step.status == "n/a":
            continue
        line.append("\n    ")
        line.append(f"{MARK[step.status]} {step.name}: ", style="dim" if step.status == "unknown" else "")
        line.append_text(safe_text(step.evidence))
    for note in diagnosis.notes:
        line.append("\n    ")
        line.append_text(safe_text(f"note: {note}", style="dim"))
    return line


#: Short headers for the funnel's label columns, so the table fits 80 columns.
SHORT = {
    NOT_IN_CONTEXT: "not in\nctx",
    NOT_RETRIEVED: "not\nretr.",
    NOT_KNOWN: "not\nknown",
    KNOWN_NOT_APPLIED: "known\n¬appl.",
    MISAPPLIED: "mis\nappl",
    APPLIED: "applied",
    "undetermined": "undet.",
}


def _rate(value, low, high, of: int | None = None) -> str:
    """``40%`` over its interval ``12–73`` (two lines, so the table fits 80 columns)."""
    if value is None:
        return "–"
    ci = f"\n{low * 100:.0f}–{high * 100:.0f}" if low is not None else ""
    return f"{value:.0%}{ci}" + (f"\nof {of}" if of else "")


def _shown(name: str, value) -> str:
    return f"E{value}" if name == "expression_type" else str(value)


def shared_factors(table: ReportTable) -> dict[str, object]:
    """Factors with one value in every row (said once, above the table), when there are rows."""
    n_i = table.columns.index("n")
    if len(table.rows) < 2:
        return {}
    return {
        name: table.rows[0][i]
        for i, name in enumerate(table.columns[:n_i])
        if len({repr(r[i]) for r in table.rows}) == 1 and table.rows[0][i] not in (None, "n/a")
    }


def group_label(table: ReportTable, row: list, skip: dict[str, object] | None = None) -> str:
    """The row's factor values (``E1`` for an expression type) but those in ``skip``; the origin
    only when it is not the usual one (generalized rows stand apart)."""
    n_i = table.columns.index("n")
    parts = []
    for name, value in zip(table.columns[:n_i], row[:n_i]):
        if value is None or value in ("n/a", "original") or name in (skip or {}):
            continue
        parts.append(_shown(name, value))
    return " · ".join(parts) or "all"


def funnel_rich(table: ReportTable) -> Table:
    """The funnel in the terminal: the group in one wrapping column, then n, a count per label in
    funnel order (coloured headers), the applied rate and the known-not-applied rate ("k¬a": of the
    answers whose probes passed, the share not applied), each over its Wilson 95% interval."""
    n_i = table.columns.index("n")
    col = table.columns.index
    shared = shared_factors(table)
    said = " · ".join(f"{k.replace('_', ' ')} {_shown(k, v)}" for k, v in shared.items() if v != "original")
    out = Table(
        title=safe_text(table.title),
        caption=safe_text(f"every row: {said}") if said else None,
        caption_justify="left",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    # misapplied (restraint queries) only where the selection has some: the usual funnel keeps 80 columns
    restraint = any(row[col("restraint_n")] for row in table.rows) if "restraint_n" in table.columns else False
    labels = [label for label in LABELS if label != MISAPPLIED or restraint]
    out.add_column("group", min_width=8 if restraint else 12, overflow="fold")
    out.add_column("n", justify="right", no_wrap=True)
    for label in labels:
        out.add_column(Text(SHORT[label], style=COLOURS[label]), justify="right", no_wrap=True)
    out.add_column("applied\n95% CI", justify="right", no_wrap=True)
    out.add_column("k¬a\nrate", justify="right", no_wrap=True)
    for row in table.rows:
        out.add_row(
            safe_text(group_label(table, row, shared)),
            str(row[n_i]),
            *(str(row[col(label)]) for label in labels),
            _rate(row[col("applied_rate")], row[col("ci_low")], row[col("ci_high")]),
            _rate(
                row[col("known_not_applied_rate")], row[col("kna_ci_low")], row[col("kna_ci_high")], row[col("known_n")]
            ),
            end_section=True,
        )
    return out


def write_funnel_png(table: ReportTable, path: str | Path, *, protect: Iterable[str | Path] = (), force: bool = False):
    """One horizontal stacked bar per row: the share of answers at each label, n and the
    known-not-applied rate in the row label (matplotlib, Agg), written whole or not at all."""
    plt = pyplot()

    if not table.rows:
        raise ValueError("nothing to plot: no diagnosed answers")
    n_i = table.columns.index("n")
    kna_i = table.columns.index("known_not_applied_rate")
    labels = []
    for row in table.rows:
        group = group_label(table, row)
        kna = row[kna_i]
        labels.append(f"{group}  (n={row[n_i]}" + (f", known→not applied {kna:.0%})" if kna is not None else ")"))
    fig, ax = plt.subplots(figsize=(11, max(2.2, 0.4 * len(table.rows) + 1.4)))
    left = [0.0] * len(table.rows)
    for label in LABELS:
        i = table.columns.index(label)
        shares = [row[i] / row[n_i] if row[n_i] else 0.0 for row in table.rows]
        ax.barh(range(len(shares)), shares, left=left, color=COLOURS[label], label=label)
        left = [a + b for a, b in zip(left, shares)]
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.tick_params(axis="y", pad=4)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of answers")
    ax.set_title(table.title, fontsize=10, loc="left")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    save_png(fig, path, protect=protect, force=force)
