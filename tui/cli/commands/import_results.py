"""`prefscope import-results`: answers produced elsewhere become stored runs (core.results + storage)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from core.results import result_format_names
from tui.cli.command_info import CommandInfo
from tui.cli.common import fail, open_workbench, settings_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="import-results",
    help="Import answers produced elsewhere (PrefEval, LongMemEval, PersonaMem, LoCoMo, mem0, Inspect, Every Eval Ever, "
    "lm-eval, OpenAI Batch and Evals, JSONL) as runs, with their recorded scores.",
    examples=(
        "prefscope import-results ../shared/datasets/prefeval/SFT",
        "prefscope import-results answers.jsonl --format jsonl",
    ),
    writes=True,
    order=40,
    details="Their model is `imported:<model>`.",
)


@click.command("import-results")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "format_", type=click.Choice(result_format_names()), help="Skip auto-detection.")
@click.option("--max-mb", type=click.IntRange(min=1), help="Refuse files larger than this (default from settings).")
@click.option(
    "--keep-duplicates",
    is_flag=True,
    help="Store a record repeated in its file as a run of its own (default: skip it and say so).",
)
@click.pass_obj
def import_results(obj, path: Path, format_: str | None, max_mb: int | None, keep_duplicates: bool) -> None:
    """Import answers produced elsewhere (a file or folder) as runs, all or nothing.

    Each answer becomes one run of model imported:<model>, linked to a stored user and query:
    PrefEval records by their preference and question text (the others get a user of their own),
    generic JSONL by its user and query ids. Importing the same file again adds nothing.

    A record that repeats an earlier one of the same file (the same user and query, or texts, the
    same model and how it was produced, the same answer text, messages and meta; only its position
    differs) is a duplicate: it is skipped and counted, or stored with --keep-duplicates.
    """
    from core.formats import FormatError
    from core.results import load_results

    settings = settings_of(obj)
    max_bytes = (max_mb or settings.max_import_mb) * 1024 * 1024
    try:
        result = load_results(path, format=format_, max_bytes=max_bytes)
    except FormatError as exc:
        fail(str(exc))
    wb = open_workbench(obj, sample_data=False)
    try:
        summary = wb.save_imported(result, keep_duplicates=keep_duplicates)
    except FormatError as exc:
        fail(str(exc))
    except sqlite3.DatabaseError as exc:
        fail(f"{path.name}: {exc} (the database is unchanged)")
    finally:
        wb.close()
    out = Console(highlight=False, soft_wrap=True)
    added = len(summary.runs_added)
    total = added + summary.runs_existing
    out.print(
        safe_text(
            f"Imported {path.name} ({summary.format}): {added} run{'s' * (added != 1)} added"
            + (f", {summary.runs_existing} already stored" if summary.runs_existing else ""),
            style="green",
        )
    )
    if added:
        line = f"{summary.matched} of {added} matched a stored user"
        if summary.unmatched:
            line += f"; {summary.unmatched} on users of their own ({len(summary.users_added)} new users)"
        out.print(Text(line))
    elif total:
        out.print(Text("nothing new to store: this file was imported before"))
    if summary.duplicates:
        out.print(safe_text(duplicates_line(summary.duplicates, summary.duplicates_kept), style="yellow"))
    for note in summary.notes:
        out.print(safe_text(f"note: {note}", style="yellow"))


def duplicates_line(duplicates: list[tuple[str, str, str]], kept: bool) -> str:
    """One line: how many repeated records were skipped (or kept), naming the first few."""
    n = len(duplicates)
    shown = "; ".join(f"{file} {label} repeats {first}" for file, label, first in duplicates[:3])
    more = f"; {n - 3} more" if n > 3 else ""
    what = f"{n} duplicate record{'s' * (n != 1)}"
    if kept:
        return f"kept {what} as runs of their own (--keep-duplicates): {shown}{more}"
    return f"skipped {what}: {shown}{more} (--keep-duplicates stores them)"
