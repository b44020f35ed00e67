"""`prefscope export`: stored runs as CSV or JSONL, on stdout or into a file written whole.

The rows come from :mod:`app.reports` (shared with the TUI); this module parses options and writes.
"""

from __future__ import annotations

import io
import sys

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import resolve_filter
from tui.cli.stored_runs import FORCE, filters, read_only_workbench, reading, run_filter

COMMAND = CommandInfo(
    name="export",
    help="Export runs to CSV, JSONL or Inspect logs.",
    examples=(
        "prefscope export --batch mybatch --out runs.csv",
        "prefscope export --batch mybatch --format inspect --out 2026-11-28T10-00-00_mybatch.eval",
    ),
    writes=False,
    order=190,
)


@click.command("export")
@filters
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "jsonl", "inspect", "eee"]),
    help="inspect: Inspect (inspect_ai) logs, .eval or .json by --out's suffix, one per batch and model; "
    "eee: Every Eval Ever 0.3.0 records (aggregate + samples) per model under the folder --out.",
    default="csv",
    show_default=True,
)
@click.option(
    "--layout",
    type=click.Choice(["wide", "long"]),
    default="wide",
    show_default=True,
    help="wide: one row per final response with score columns; long: one row per judgment.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Output file (default: stdout); for eee a new folder.",
)
@FORCE
@click.pass_context
def export(
    ctx: click.Context, run_ids, users, models, methods, contexts, labels, since, fmt, layout, out, force
) -> None:
    """Export runs to CSV or JSONL (UTF-8, header row; CSV cells that look like formulas get a leading '),
    or as Inspect logs (--format inspect --out x.eval|x.json) that `inspect view` shows.

    --out is written whole or not at all, never onto a database, and replaces a file only with --force."""
    from app.outputs import OutputRefused, replace_atomically
    from app.reports import export_runs
    from tui.safe_text import TerminalSafeStream

    if fmt == "inspect" and not (out or "").lower().endswith((".eval", ".json")):
        raise click.UsageError("--format inspect needs --out ending in .eval or .json")
    if fmt == "eee" and not out:
        raise click.UsageError("--format eee needs --out: a new folder, or a .json file for one model")
    f = run_filter(run_ids, users, models, methods, contexts, labels, since)
    wb = read_only_workbench(ctx, [out], force)
    f = resolve_filter(wb, f)  # unknown or ambiguous ids: one red line, not an empty file
    with reading(wb) as db:
        try:
            if fmt == "inspect":
                _inspect(db, f, out, wb.db_path, force)
            elif fmt == "eee":
                _eee(db, f, out, wb.db_path, force)
            elif out:
                with replace_atomically(out, protect=[wb.db_path], force=force) as fh:
                    n = export_runs(db, fh, f, fmt, layout)
                click.echo(f"{n:,} rows → {out}", err=True)
            else:
                stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="", write_through=False)
                # On a terminal the rows are read, not parsed: answers' escape sequences shown, not
                # acted on. Piped or redirected, the bytes stay verbatim.
                shown = TerminalSafeStream(stream) if sys.stdout.isatty() else stream
                try:
                    n = export_runs(db, shown, f, fmt, layout)
                    stream.flush()
                finally:
                    stream.detach()
                click.echo(f"{n:,} rows", err=True)
        except OutputRefused as exc:
            raise click.ClickException(str(exc)) from None


def _inspect(db, f, out: str, db_path, force: bool) -> None:
    from app.reports import export_inspect

    written = export_inspect(db, out, f, protect=[db_path], force=force)
    if not written:
        raise click.ClickException("no answers selected: nothing to export")
    for path, n in written:
        click.echo(f"{n:,} samples → {path}", err=True)


def _eee(db, f, out: str, db_path, force: bool) -> None:
    from app.reports import export_eee

    try:
        written = export_eee(db, out, f, protect=[db_path], force=force)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    for record in written:
        click.echo(f"{record.rows:,} samples → {record.aggregate}", err=True)
