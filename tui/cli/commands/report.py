"""`prefscope report`: aggregate tables of stored runs (by model, method, context …), the
diagnosis funnel, paper figures and heatmaps, and the installed benchmarks' own sections.

The work is done by :mod:`app.reports` (shared with the TUI); this module parses options and
renders (:mod:`tui.cli.report_view`).
"""

from __future__ import annotations

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import resolve_filter
from tui.cli.stored_runs import FORCE, filters, read_only_workbench, reading, run_filter

COMMAND = CommandInfo(
    name="report",
    help="Aggregate tables of stored runs (by model, method, context …).",
    examples=(
        "prefscope report --by model,expression_type",
        "prefscope report --batch 'imported:single_pref_remind/*' --figure turns --png turns.png",
    ),
    writes=False,
    order=200,
    details="`--diagnosis`: the find → know → apply funnel; `--heatmap`, `--figure`, repeats.",
)


def section_options(func):
    """``--section NAME`` and one ``--<flag>`` per section flag of the installed benchmarks
    (``--cupid``, ``--interpref`` …), with ``--<flag>-by`` where every section of the flag has
    factors of its own (``--cupid-by``, default instance_type)."""
    from app.reports import section_flags
    from core.benchmark import report_sections

    flags = section_flags()
    names = ", ".join(s.name for _, s in report_sections())
    for flag, group in reversed(flags.items()):
        own = {tuple(s.factors) for s in group if s.factors}
        if len(own) == 1 and all(s.factors for s in group):
            func = click.option(f"--{flag}-by", f"{flag}_by", default=",".join(own.pop()), show_default=True)(func)
        titles = " and ".join(s.title for s in group)
        func = click.option(f"--{flag}", f"{flag}", is_flag=True, help=f"Also {titles}.")(func)
    return click.option(
        "--section",
        "sections",
        multiple=True,
        help=f"Also this benchmark table, even when empty (repeatable): {names or 'none installed'}.",
    )(func)


def _asked_flags(values: dict) -> dict[str, list[str] | None]:
    """The ``--<flag>`` options given, each with its ``--<flag>-by`` factors (None: none declared)."""
    out: dict[str, list[str] | None] = {}
    for name, on in values.items():
        if on is True and not name.endswith("_by"):
            by = values.get(f"{name}_by")
            out[name] = [b for b in by.split(",") if b.strip()] if isinstance(by, str) else None
    return out


@click.command("report")
@filters
@click.option(
    "--by",
    default="model",
    show_default=True,
    help="Comma-separated factors: model, provider, user, query, query_kind, expression_type, context, "
    "turns, evidence_depth, sessions_back, repeat, temperature, method, seed, batch, instance_type, "
    "preference_origin, preference_type, topic, question_type, dimension, category (the dataset's question "
    "category). A benchmark's own tables follow when the runs have its judgments (see --section).",
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
    type=click.Choice(["llm", "heuristic", "parser", "human", "recorded"]),
    help="Only these judge sources (default: all, each in its own rows).",
)
@click.option(
    "--summary",
    is_flag=True,
    help="Instead of the tables by --by: per model, answers, ok/failed, the mean of the default metrics "
    "(or --metric), tokens and cost — the table `prefscope batch` ends with.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the tables as JSON (no chart) on stdout.")
@section_options
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
    sections,
    diagnosis,
    repeats_flag,
    judge_retest,
    figure,
    heatmap,
    chart,
    csv_path,
    png_path,
    force,
    **section_flags,
) -> None:
    """Aggregate tables: n, mean and bootstrap 95% CI by any factors (e.g. --by expression_type,model).

    --batch and --model take patterns (* matches any text, as `judge --label`): the report covers the
    matching batches or models only, e.g. one imported file's runs. --csv / --png are written whole or
    not at all, never onto a database, and replace a file only with --force."""
    from dataclasses import replace

    from rich.console import Console

    from app.reports import ReportError, ReportRequest, report_tables
    from tui.cli.report_view import bar_chart, rich_table, tables_json, write_csv, write_png

    f = run_filter(run_ids, users, models, methods, contexts, labels, since)
    factors = [b for b in by.split(",") if b.strip()]
    if figure:
        from tui.cli.figures import FIGURES

        factors = list(FIGURES[figure][0])
    wb = read_only_workbench(ctx, [csv_path, png_path], force)
    f = resolve_filter(wb, f)
    protect = [wb.db_path]
    if diagnosis:
        _diagnosis_report(wb, f, by if by != "model" else None, as_json, csv_path, png_path, protect, force)
        return
    if heatmap:
        _heatmap_report(wb, f, metric, factors, as_json, csv_path, png_path, protect, force)
        return
    request = ReportRequest(
        f,
        factors,
        metric=metric,
        sources=tuple(sources),
        summary=summary,
        flags=_asked_flags(section_flags),
        sections=tuple(sections),
        repeats=repeats_flag,
        judge_retest=judge_retest,
    )
    with reading(wb) as db:
        request = replace(request, f=_patterns_expanded(db, f))
        try:
            tables = report_tables(db, request)
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


def _patterns_expanded(db, f):
    """The filter with its batch and model patterns replaced by what they match (one red line
    for a pattern that matches nothing, never an empty report)."""
    from app.reports import ReportError, with_patterns_expanded

    try:
        return with_patterns_expanded(db, f)
    except ReportError as exc:
        raise click.ClickException(str(exc)) from None


def _heatmap_report(wb, f, metric, factors, as_json: bool, csv_path, png_path, protect, force) -> None:
    """`report --heatmap`: each metric over two factors, in the terminal (or JSON), its long table
    as CSV, the panels as PNG."""
    from rich.console import Console

    from app.reports import ReportError, heatmap_tables
    from tui.cli.report_view import tables_json, write_csv
    from tui.heatmap_render import heatmap_table, write_heatmaps_png
    from tui.safe_text import safe_text

    with reading(wb) as db:
        f = _patterns_expanded(db, f)
        try:
            metrics, panels, tables = heatmap_tables(db, f, metric, factors, with_tables=as_json or bool(csv_path))
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
    from tui.cli.diagnosis_view import funnel_rich, write_funnel_png
    from tui.cli.report_view import tables_json, write_csv
    from tui.safe_text import safe_text

    factors = [b.strip() for b in by.split(",") if b.strip()] if by else list(DEFAULT_FACTORS)
    with reading(wb) as db:  # streamed: one run's plan in memory at a time
        f = _patterns_expanded(db, f)
        items = wb.iter_diagnoses(wb.answer_run_ids(f))
        table = funnel_table((i for i in items if not f.models or i[0].model in f.models), factors)
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
