"""`prefscope compare A B`: is B really better than A? Paired statistics on the items both answered.

A and B are run ids, batch names, or two values of one factor (``method=zero-shot
method=reminder``, with ``--batch NAME`` to stay inside one batch). The statistics are
:mod:`core.analysis.paired`'s; the pairing is :mod:`storage.compare`'s (through :mod:`app.analyses`).
"""

from __future__ import annotations

import csv
import json

import click
from rich.table import Table
from rich.text import Text

from tui.cli.command_info import CommandInfo
from tui.cli.common import console
from tui.cli.stored_runs import FORCE, read_only_workbench, reading
from tui.paired_view import statistics, value_text, varying
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="compare",
    help="Is B better than A? Paired tests on the items both answered, and what regressed.",
    examples=(
        "prefscope compare zs-batch reminder-batch --metric rubric:alignment",
        "prefscope compare method=zero-shot method=reminder --batch fig5 --tui",
    ),
    writes=True,
    order=210,
    details="A and B: runs, batches or two values of a factor; paired bootstrap CI, McNemar / Wilcoxon, "
    "effect size (`--tui`: the two answers side by side).",
)


def pairs_table(result, which: str, limit: int) -> Table:
    pairs = getattr(result.comparison, which)
    shown = varying(result)
    first = pairs[0].key if pairs else ()
    same = [f"{result.key_factors[i]} {first[i]}" for i in range(len(first)) if i not in shown and first[i] is not None]
    more = f", first {limit}" if len(pairs) > limit else ""
    t = Table(
        title=f"{which} ({len(pairs)}{more})",
        title_justify="left",
        caption=safe_text("all pairs: " + ", ".join(same)) if same else None,
        caption_justify="left",
    )
    for i in shown:
        t.add_column(safe_text(result.key_factors[i]), no_wrap=True)
    for col in ("A", "B", "B − A"):
        t.add_column(col, justify="right", no_wrap=True)
    for p in pairs[:limit]:
        values = (safe_text(value_text(p.key[i])) for i in shown)
        t.add_row(*values, f"{p.a:g}", f"{p.b:g}", f"{p.diff:+g}")
    return t


def result_json(result) -> str:
    c = result.comparison
    stats = {k: getattr(c, k) for k in ("n", "unpaired_a", "unpaired_b", "mean_a", "mean_b", "mean_diff")}
    stats |= {k: getattr(c, k) for k in ("ci_low", "ci_high", "binary", "test", "statistic", "p_value")}
    stats |= {"effect_dz": c.effect_dz, "rank_biserial": c.rank_biserial, "a_only": c.a_only, "b_only": c.b_only}

    def rows(pairs):
        return [
            {
                **dict(zip(result.key_factors, p.key)),
                "a": p.a,
                "b": p.b,
                "a_response": p.a_ref[1],
                "b_response": p.b_ref[1],
            }
            for p in pairs
        ]

    out = {
        "a": result.a.label,
        "b": result.b.label,
        "metric": result.metric,
        "judge": result.judge,
        "key": result.key_factors,
        **stats,
        "regressed": rows(c.regressed),
        "improved": rows(c.improved),
        "notes": result.notes,
    }
    return json.dumps(out, ensure_ascii=False, indent=2, default=str)


def write_pairs_csv(result, path, protect, force) -> None:
    """Every pair: key factors, a, b, diff, the two run and response ids (text cells formula-safe)."""
    from app.outputs import formula_safe, replace_atomically

    with replace_atomically(path, protect=protect, force=force) as fh:
        w = csv.writer(fh)
        header = [*result.key_factors, "a", "b", "diff", "a_run", "a_response", "b_run", "b_response"]
        w.writerow([formula_safe(c) for c in header])
        c = result.comparison
        for p in [*c.regressed, *c.improved, *c.ties]:
            row = [*("" if v is None else v for v in p.key), p.a, p.b, p.diff, *p.a_ref, *p.b_ref]
            w.writerow([formula_safe(v) for v in row])


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option(
    "--batch",
    multiple=True,
    help="With FACTOR=VALUE sides: only the runs of this batch (repeatable: of these batches).",
)
@click.option("--metric", default=None, help="kind:dimension, e.g. rubric:alignment or accuracy (default: what fits).")
@click.option(
    "--judge", default=None, help="The judge whose scores to compare (judge model or source) when several scored."
)
@click.option(
    "--list", "limit", type=click.IntRange(0), default=10, show_default=True, help="Regressions / improvements to list."
)
@click.option("--json", "as_json", is_flag=True, help="Print the statistics and every changed pair as JSON.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, writable=True), help="Write every pair as CSV.")
@click.option(
    "--tui",
    "open_tui",
    is_flag=True,
    help="Open the regressions and improvements in the workbench (enter: the two answers side by side).",
)
@FORCE
@click.pass_context
def compare(ctx, a, b, batch, metric, judge, limit, as_json, csv_path, open_tui, force) -> None:
    """Paired comparison of B against A: mean difference with a paired bootstrap CI, McNemar (binary
    scores) or Wilcoxon signed-rank (ordinal), effect size, and the items that regressed / improved."""
    from app.reports import ReportError

    wb = read_only_workbench(ctx, [csv_path], force)
    with reading(wb):
        try:
            result = wb.paired_comparison(a, b, batch, metric, judge)
        except ReportError as exc:
            raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(result_json(result))
    else:
        console.print(safe_text(f"{result.metric}: B − A", "bold"))
        console.print(statistics(result))
        for which in ("regressed", "improved"):
            if limit and getattr(result.comparison, which):
                console.print(pairs_table(result, which, limit))
        for note in result.notes:
            console.print(safe_text(f"note: {note}", style="dim"))
    if csv_path:
        try:
            write_pairs_csv(result, csv_path, [wb.db_path], force)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        console.print(Text(f"pairs → {csv_path}"))
    if open_tui:
        from tui.cli.open_app import open_paired

        open_paired(ctx.obj, result)
