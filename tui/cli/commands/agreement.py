"""`prefscope agreement`: how far annotators and judges agree, per dimension and pair of raters.

The ratings are :mod:`storage.agreement`'s, the statistics :mod:`core.analysis.agreement`'s. The
CSV has one row per (rater_a, rater_b, dimension); Krippendorff's alpha is per dimension over all
raters, repeated on each of its rows.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from tui.cli.cells import number
from tui.cli.command_info import CommandInfo
from tui.cli.common import console
from tui.cli.stored_runs import FORCE, filters, read_only_workbench, reading, run_filter
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="agreement",
    help="Agreement of annotators and judges per dimension: kappa, weighted kappa, alpha, confusion.",
    examples=("prefscope agreement --queue lab1", "prefscope agreement --batch fig5 --csv agreement.csv --png figs/"),
    writes=False,
    order=230,
    details="Per rater pair too.",
)

CSV_COLUMNS = [
    "rater_a",
    "rater_b",
    "dimension",
    "n",
    "exact",
    "within1",
    "cohen_kappa",
    "weighted_kappa_linear",
    "weighted_kappa_quadratic",
    "spearman",
    "kendall",
    "krippendorff_alpha",
    "raters",
    "abstained_a",
    "abstained_b",
]
ABSTENTIONS = (
    "n counts the items both raters scored; an item one rater could not score (a judge's unparsed "
    "reply or abstention) is left out of n and counted under abst; – where a statistic is "
    "undefined (a constant rater, too few items) or needs an order the scale lacks"
)


def pairs_table(d) -> Table:
    alpha = f"α = {number(d.alpha)}" if d.alpha is not None else "α –"
    t = Table(
        title=safe_text(f"{d.dimension} ({d.level}) · {alpha} over {len(d.raters)} raters · {d.items} items"),
        title_justify="left",
        box=None,
        pad_edge=False,
        caption="κl / κq: linear / quadratic weighted κ; abst: items each side could not score (a/b)",
        caption_justify="left",
    )
    t.add_column("rater a", min_width=8)
    t.add_column("rater b", min_width=8)
    for col in ("n", "exact", "±1", "κ", "κl", "κq", "ρ", "τ", "abst"):
        t.add_column(col, justify="right", no_wrap=True)
    for p in d.pairs:
        t.add_row(
            safe_text(p.rater_a),
            safe_text(p.rater_b),
            str(p.n),
            *(number(v, 2) for v in (p.exact, p.within1, p.cohen_kappa, p.weighted_kappa_linear)),
            *(number(v, 2) for v in (p.weighted_kappa_quadratic, p.spearman, p.kendall)),
            f"{p.abstained_a}/{p.abstained_b}",
        )
    return t


def confusion_table(p) -> Table:
    """One pair's confusion matrix (rows rater a, columns rater b) with each side's base rates."""
    labels = [f"{v:g}" for v in p.labels]
    t = Table(title=safe_text(f"{p.dimension}: {p.rater_a} (rows) × {p.rater_b} (columns)"), title_justify="left")
    t.add_column("a \\ b")
    for label in labels:
        t.add_column(label, justify="right")
    t.add_column("base a", justify="right")
    for label, row, rate in zip(labels, p.confusion, p.base_rate_a):
        t.add_row(label, *(str(v) for v in row), f"{rate:.0%}")
    t.add_row("base b", *(f"{r:.0%}" for r in p.base_rate_b), "", style="dim")
    return t


def write_csv(dims, path, protect, force) -> int:
    from app.outputs import formula_safe, replace_atomically

    n = 0
    with replace_atomically(path, protect=protect, force=force) as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for d in dims:
            for p in d.pairs:
                values = [p.rater_a, p.rater_b, d.dimension, p.n, p.exact, p.within1, p.cohen_kappa]
                values += [p.weighted_kappa_linear, p.weighted_kappa_quadratic, p.spearman, p.kendall]
                values += [d.alpha, len(d.raters), p.abstained_a, p.abstained_b]
                w.writerow(["" if v is None else formula_safe(v) for v in values])  # rater names are data
                n += 1
    return n


def png_path(folder: Path, dimension: str) -> Path:
    return folder / f"confusion-{dimension.replace(':', '-')}.png"


def write_confusion_pngs(dims, folder: Path, protect, force) -> list[Path]:
    """One PNG per dimension: a confusion-matrix panel per pair of raters."""
    from tui.png_figures import pyplot, save_png

    plt = pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for d in dims:
        if not d.pairs:
            continue
        cols = min(3, len(d.pairs))
        rows = -(-len(d.pairs) // cols)
        fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.8 * rows), squeeze=False)
        for ax in axes.flat[len(d.pairs) :]:
            ax.axis("off")
        for ax, p in zip(axes.flat, d.pairs):
            ax.imshow(p.confusion, cmap="Blues")
            ticks = range(len(p.labels))
            ax.set_xticks(ticks, [f"{v:g}" for v in p.labels])
            ax.set_yticks(ticks, [f"{v:g}" for v in p.labels])
            ax.set_xlabel(p.rater_b, fontsize=8)
            ax.set_ylabel(p.rater_a, fontsize=8)
            ax.set_title(f"n={p.n} κ={number(p.cohen_kappa, 2)} κq={number(p.weighted_kappa_quadratic, 2)}", fontsize=9)
            peak = max((max(r) for r in p.confusion), default=0)
            for i, row in enumerate(p.confusion):
                for j, v in enumerate(row):
                    ax.text(
                        j, i, str(v), ha="center", va="center", color="white" if v > peak / 2 else "black", fontsize=8
                    )
        fig.suptitle(f"{d.dimension}: α = {number(d.alpha)}")
        path = png_path(folder, d.dimension)
        save_png(fig, path, protect=protect, force=force)
        written.append(path)
    return written


@click.command("agreement")
@filters
@click.option("--queue", default=None, help="Only the items of this annotation queue.")
@click.option("--dimension", "dimensions", multiple=True, help="Only this dimension (kind:dimension; repeatable).")
@click.option("--matrices", is_flag=True, help="Print each pair's confusion matrix and base rates too.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, writable=True), help="Write one row per rater pair.")
@click.option(
    "--png", "png_dir", type=click.Path(file_okay=False, path_type=Path), help="Write confusion-matrix PNGs here."
)
@FORCE
@click.pass_context
def agreement(
    ctx, run_ids, users, models, methods, contexts, labels, since, queue, dimensions, matrices, csv_path, png_dir, force
) -> None:
    """Agreement between every two raters (annotators and judges) per dimension: exact and ±1
    agreement, Cohen's κ (linear / quadratic weighted for ordinal scales), Spearman, Kendall, the
    confusion matrix and base rates, and Krippendorff's α over all raters."""
    from app.labels import AnnotationError
    from tui.cli.common import resolve_filter

    wb = read_only_workbench(ctx, [csv_path], force)
    f = resolve_filter(wb, run_filter(run_ids, users, models, methods, contexts, labels, since))
    f = replace(f, probes=False)
    with reading(wb):
        try:
            dims = wb.agreement(f=f, queue=queue)
        except AnnotationError as exc:
            raise click.ClickException(str(exc)) from None
    if dimensions:
        dims = [d for d in dims if d.dimension in dimensions]
    if not dims:
        console.print("nothing rated by two raters here; label a queue first: prefscope annotate QUEUE --batch B")
        return
    if png_dir:  # every output refused before anything is written
        from app.outputs import OutputRefused, check_target

        try:
            png_dir.mkdir(parents=True, exist_ok=True)
            for d in dims:
                if d.pairs:
                    check_target(png_path(png_dir, d.dimension), protect=[wb.db_path], force=force)
        except (OutputRefused, OSError) as exc:
            raise click.ClickException(str(exc)) from None
    for d in dims:
        if not d.pairs:
            console.print(safe_text(f"{d.dimension}: only {', '.join(d.raters)} rated it (nothing to compare)", "dim"))
            continue
        console.print(pairs_table(d))
        if matrices:
            for p in d.pairs:
                console.print(confusion_table(p))
    console.print(Text(ABSTENTIONS, style="dim"))
    if csv_path:
        n = write_csv(dims, csv_path, [wb.db_path], force)
        console.print(Text(f"{n} rows → {csv_path}"))
    if png_dir:
        from app.outputs import OutputRefused

        try:
            for path in write_confusion_pngs(dims, png_dir, [wb.db_path], force):
                console.print(Text(f"confusion matrices → {path}"))
        except OutputRefused as exc:
            raise click.ClickException(str(exc)) from None
