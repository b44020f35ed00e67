"""`prefscope export` and `prefscope report`: stored runs as CSV/JSONL, and aggregate tables.

The work is done by :mod:`storage.export` and :mod:`storage.report` (shared with the TUI); this
module parses options and renders.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from tui.cli.common import open_workbench, resolve_filter, settings_of

FILTERS = [
    click.option("--runs", "run_ids", multiple=True, help="Run id (repeatable)."),
    click.option("--user", "users", multiple=True, help="User id (repeatable)."),
    click.option("--model", "models", multiple=True, help="Model id (repeatable), e.g. demo:oracle."),
    click.option("--method", "methods", multiple=True, help="Method (repeatable)."),
    click.option("--context", "contexts", multiple=True, help="Context configuration (repeatable)."),
    click.option("--batch", "labels", multiple=True, help="Batch name (repeatable)."),
    click.option("--since", default=None, help="Runs created at or after this ISO date/time, e.g. 2026-05-01."),
]


def filters(func):
    for option in reversed(FILTERS):
        func = option(func)
    return func


def _run_filter(run_ids, users, models, methods, contexts, labels, since):
    from core.history.configs import ContextError, config_named
    from core.methods import UnknownMethod, method_info
    from storage.export import RunFilter

    try:
        methods = [method_info(m).name for m in methods]
        contexts = [config_named(c).name for c in contexts]
    except (UnknownMethod, ContextError) as exc:
        raise click.ClickException(str(exc)) from None
    return RunFilter(list(run_ids), list(users), list(models), methods, contexts, since, list(labels))


FORCE = click.option("--force", is_flag=True, help="Replace an existing output file (never a database).")


def _workbench(ctx: click.Context, outputs: list[str | None], force: bool):
    """The database, read-only, once every output file is known to be writable: a refused target
    fails the command before any work (the writes check again)."""
    from storage.output_files import OutputRefused, check_target

    obj = ctx.obj or {}
    db = Path(settings_of(obj).db).expanduser()
    try:
        for out in filter(None, outputs):
            check_target(out, protect=[db], force=force)
    except OutputRefused as exc:
        raise click.ClickException(str(exc)) from None
    return open_workbench(obj, sample_data=False, readonly=True)


def _corrupt(wb, exc: Exception) -> click.ClickException:
    """A database damaged past its first pages fails mid-query: one line, not a traceback."""
    from storage.db import refusal_message

    return click.ClickException(refusal_message(wb.db_path, exc))


@contextmanager
def _reading(wb) -> Iterator:
    """The workbench's database for one command's reads, closed after; damage met mid-query is
    one line naming the file (:func:`_corrupt`)."""
    import sqlite3

    from storage.db import is_corruption

    try:
        yield wb.db
    except sqlite3.DatabaseError as exc:
        if not is_corruption(exc):
            raise
        raise _corrupt(wb, exc) from None
    finally:
        wb.close()


@click.command("export")
@filters
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True)
@click.option(
    "--layout",
    type=click.Choice(["wide", "long"]),
    default="wide",
    show_default=True,
    help="wide: one row per final response with score columns; long: one row per judgment.",
)
@click.option(
    "--out", "out", type=click.Path(dir_okay=False, writable=True), default=None, help="Output file (default: stdout)."
)
@FORCE
@click.pass_context
def export(
    ctx: click.Context, run_ids, users, models, methods, contexts, labels, since, fmt, layout, out, force
) -> None:
    """Export runs to CSV or JSONL (UTF-8, header row; CSV cells that look like formulas get a leading ').

    --out is written whole or not at all, never onto a database, and replaces a file only with --force."""
    from storage.export import export as do_export
    from storage.output_files import OutputRefused, replace_atomically

    f = _run_filter(run_ids, users, models, methods, contexts, labels, since)
    wb = _workbench(ctx, [out], force)
    f = resolve_filter(wb, f)  # unknown or ambiguous ids: one red line, not an empty file
    with _reading(wb) as db:
        try:
            if out:
                with replace_atomically(out, protect=[wb.db_path], force=force) as fh:
                    n = do_export(db, fh, f=f, fmt=fmt, layout=layout)
                click.echo(f"{n:,} rows → {out}", err=True)
            else:
                stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="", write_through=False)
                try:
                    n = do_export(db, stream, f=f, fmt=fmt, layout=layout)
                    stream.flush()
                finally:
                    stream.detach()
                click.echo(f"{n:,} rows", err=True)
        except OutputRefused as exc:
            raise click.ClickException(str(exc)) from None


@click.command("report")
@filters
@click.option(
    "--by",
    default="model",
    show_default=True,
    help="Comma-separated factors: model, provider, user, query, query_kind, expression_type, context, "
    "turns, method, seed, batch, instance_type, preference_origin, preference_type, topic, dimension, question_type, "
    "category (LoCoMo). LoCoMo F1 judgments also get a per-category table.",
)
@click.option(
    "--metric",
    default=None,
    help="A judgment kind:dimension (rubric:alignment, checklist:preference …), a kind (all its "
    "dimensions), or accuracy (MCQ/TF). Default: what fits the runs' queries — accuracy for MCQ/TF, "
    "rubric:alignment (or the judged open-query metric) for open, one table each for a mix.",
)
@click.option(
    "--source",
    "sources",
    multiple=True,
    type=click.Choice(["llm", "heuristic", "parser", "human"]),
    help="Only these judge sources (default: all, each in its own rows).",
)
@click.option(
    "--summary",
    is_flag=True,
    help="Instead of the tables by --by: per model, answers, ok/failed, the mean of the default metrics "
    "(or --metric), tokens and cost — the table `prefscope batch` ends with.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON (no chart) on stdout.")
@click.option(
    "--cupid",
    is_flag=True,
    help="Also CUPID preference-matching P/R/F1 and the checklist-judge average (grouped by --cupid-by).",
)
@click.option("--cupid-by", default="instance_type", show_default=True)
@click.option("--interpref", is_flag=True, help="Also InterPref pass rate (by --by) and Bradley–Terry coefficients.")
@click.option(
    "--diagnosis",
    is_flag=True,
    help="Instead of scores: the find → know → apply funnel per model × expression_type × context × method "
    "(or --by), generalized preferences apart — counts per diagnosis label, applied and known-not-applied rates "
    "with Wilson 95% CIs; --png draws it as stacked bars.",
)
@click.option(
    "--repeats",
    "repeats_flag",
    is_flag=True,
    help="Also per-item variance and verdict flip rates across repeats of a cell (shown anyway when the runs have repeats).",
)
@click.option(
    "--judge-retest",
    is_flag=True,
    help="Also each judge's test–retest agreement on answers it judged more than once (judge --judge-repeats N).",
)
@click.option(
    "--figure",
    type=click.Choice(["context", "turns", "recency", "depth"]),
    default=None,
    help="A paper's line figure: score vs context configuration (RealPref Fig. 6), vs inter turns (PrefEval), "
    "vs sessions after the latest relevant one (CUPID Fig. 3) or vs evidence depth; one line per model. "
    "Sets --by; --png draws the lines.",
)
@click.option(
    "--heatmap",
    is_flag=True,
    help="Draw each metric as a heatmap over the first two --by factors (rows × columns; e.g. "
    "--by evidence_depth,context), one panel per judge and per value of further factors; --png writes the heatmaps.",
)
@click.option("--chart/--no-chart", default=True, show_default=True, help="Terminal bar chart under each table.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, writable=True), help="Write the tables as CSV.")
@click.option("--png", "png_path", type=click.Path(dir_okay=False, writable=True), help="Write bar charts as PNG.")
@FORCE
@click.pass_context
def report(
    ctx: click.Context,
    run_ids,
    users,
    models,
    methods,
    contexts,
    labels,
    since,
    by,
    metric,
    sources,
    summary,
    as_json,
    cupid,
    cupid_by,
    interpref,
    diagnosis,
    repeats_flag,
    judge_retest,
    figure,
    heatmap,
    chart,
    csv_path,
    png_path,
    force,
) -> None:
    """Aggregate tables: n, mean and bootstrap 95% CI by any factors (e.g. --by expression_type,model).

    --csv / --png are written whole or not at all, never onto a database, and replace a file only with --force."""
    from rich.console import Console

    from storage.report import (
        ReportError,
        agreement_table,
        applicable_sections,
        default_metrics,
        has_repeats,
        repeats_table,
        retest_table,
        score_table,
        section_table,
        summary_table,
    )
    from tui.cli.report_view import bar_chart, rich_table, tables_json, write_csv, write_png

    f = _run_filter(run_ids, users, models, methods, contexts, labels, since)
    factors = [b for b in by.split(",") if b.strip()]
    if figure:
        from tui.cli.figures import FIGURES

        factors = list(FIGURES[figure][0])
    wb = _workbench(ctx, [csv_path, png_path], force)
    f = resolve_filter(wb, f)
    protect = [wb.db_path]
    if diagnosis:
        _diagnosis_report(wb, f, by if by != "model" else None, as_json, csv_path, png_path, protect, force)
        return
    if heatmap:
        _heatmap_report(wb, f, metric, factors, as_json, csv_path, png_path, protect, force)
        return
    with _reading(wb) as db:
        try:
            tables = [summary_table(db, f, [metric] if metric else None)] if summary else []
            for m in () if summary else [metric] if metric else default_metrics(db, f):
                tables.append(score_table(db, m, factors, f, sources=sources or None))
                agreement = agreement_table(db, m, factors, f)
                if agreement.rows:  # only where human scores exist
                    tables.append(agreement)
                if repeats_flag or has_repeats(db, f):
                    tables.append(repeats_table(db, m, factors, f))
                if judge_retest:
                    tables.append(retest_table(db, m, f))
            # The benchmarks' registered sections (core.benchmarks): each one whose judgments the
            # runs have, when it has rows (LongMemEval, LoCoMo, installed benchmarks'), and the
            # ones asked for by flag, always (--cupid by --cupid-by, --interpref by --by).
            flag_by = {"cupid": [b for b in cupid_by.split(",") if b.strip()]}
            flags = [name for name, on in (("cupid", cupid), ("interpref", interpref)) if on]
            for section in () if summary else applicable_sections(db, f, flags):
                by_ = flag_by.get(section.flag or "", factors if section.factors is None else section.factors)
                table = section_table(db, section, by_, f)
                if table.rows or section.flag is not None:
                    tables.append(table)
        except ReportError as exc:
            raise click.ClickException(str(exc)) from None
    from tui.safe_text import safe_text

    if as_json:
        click.echo(tables_json(tables))
    console = Console(stderr=as_json)  # --json: stdout holds the JSON alone
    for t in tables if not as_json else ():
        console.print(rich_table(t, fit=console.width))
        if chart and t.rows:
            console.print(bar_chart(t, fit=console.width))
        for note in t.notes:
            console.print(safe_text(f"note: {note}", style="dim"))
        console.print()
    try:  # ValueError: a refused target (OutputRefused) or nothing to plot
        if csv_path:
            write_csv(tables, csv_path, protect=protect, force=force)
            console.print(f"tables → {csv_path}")
        if png_path and figure:
            from tui.cli.figures import write_figure_png

            score_tables = [t for t in tables if "mean" in t.columns and "source" in t.columns]
            write_figure_png(score_tables, factors, png_path, protect=protect, force=force)
            console.print(f"figure → {png_path}")
        elif png_path:
            write_png(tables, png_path, protect=protect, force=force)
            console.print(f"charts → {png_path}")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


def _heatmap_report(wb, f, metric, factors, as_json: bool, csv_path, png_path, protect, force) -> None:
    """`report --heatmap`: each metric over two factors, in the terminal (or JSON), its long table
    as CSV, the panels as PNG."""
    from rich.console import Console

    from storage.report import ReportError, default_metrics, heatmap_panels, score_table
    from tui.cli.report_view import tables_json, write_csv
    from tui.heatmap_render import heatmap_table, write_heatmaps_png
    from tui.safe_text import safe_text

    with _reading(wb) as db:
        try:
            metrics = [metric] if metric else default_metrics(db, f)
            panels = [p for m in metrics for p in heatmap_panels(db, m, factors, f)]
            tables = [score_table(db, m, factors, f) for m in metrics] if (as_json or csv_path) else []
        except ReportError as exc:
            raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(tables_json(tables))
    console = Console(stderr=as_json)
    if not panels:
        console.print(f"no {' or '.join(metrics) or 'judged'} scores in this selection to draw")
    for panel in panels if not as_json else ():
        console.print(heatmap_table(panel))
        console.print()
    try:
        if csv_path:
            write_csv(tables, csv_path, protect=protect, force=force)
            console.print(f"tables → {csv_path}")
        if png_path:
            write_heatmaps_png(panels, png_path, protect=protect, force=force)
            console.print(safe_text(f"heatmaps → {png_path}"))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None


def _diagnosis_report(wb, f, by: str | None, as_json: bool, csv_path, png_path, protect, force) -> None:
    """`report --diagnosis`: the funnel table (rich, JSON, CSV) and its stacked-bar PNG."""
    from rich.console import Console

    from core.analysis.diagnosis_funnel import DEFAULT_FACTORS, funnel_table
    from storage.export import answer_run_ids
    from tui.cli.diagnosis_view import funnel_rich, write_funnel_png
    from tui.cli.report_view import tables_json, write_csv
    from tui.safe_text import safe_text

    factors = [b.strip() for b in by.split(",") if b.strip()] if by else list(DEFAULT_FACTORS)
    with _reading(wb) as db:
        items = wb.diagnoses(answer_run_ids(db, f))
    if f.models:
        items = [i for i in items if i[0].model in f.models]
    table = funnel_table(items, factors)
    if as_json:
        click.echo(tables_json([table]))
    console = Console(stderr=as_json)
    if not as_json and not table.rows:
        console.print("no final answers in this selection to diagnose (see `prefscope runs`)")
    elif not as_json:
        console.print(funnel_rich(table))
        for note in table.notes:
            console.print(safe_text(f"note: {note}", style="dim"))
    try:
        if csv_path:
            write_csv([table], csv_path, protect=protect, force=force)
            console.print(f"table → {csv_path}")
        if png_path:
            write_funnel_png(table, png_path, protect=protect, force=force)
            console.print(f"funnel → {png_path}")
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
