"""`prefscope import PATH`: a dataset file or folder into the database, all or nothing.

A thin view over ``core.formats`` (reading) and the workbench (``app``, storing): it parses options,
calls them, prints what was stored.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from core.formats import FORMAT_ORDER, FormatError
from tui.cli.command_info import CommandInfo
from tui.cli.common import fail, open_data, root_obj, settings_of
from tui.safe_text import safe_text

COMMAND = CommandInfo(
    name="import",
    help="Import a dataset file or folder (auto-detected format).",
    examples=("prefscope import ../shared/datasets/prefeval", "prefscope import locomo10.json --user-speaker b"),
    writes=True,
    order=30,
    details="`--embed`: embed the imported histories now (RAG starts warm).",
)


def format_options(func):
    """One option per :class:`core.benchmark.ImportOption` of the installed benchmarks
    (``--user-speaker`` for LoCoMo, ``--contexts`` for PersonaMem …), each saying whose it is."""
    from core.benchmark import installed

    for bench in reversed(installed()):
        for option in reversed(bench.import_options):
            kind = (
                click.Choice(list(option.choices))
                if option.choices
                else click.Path(exists=True, dir_okay=False, path_type=Path)
            )
            func = click.option(option.flag, option.keyword, type=kind, help=f"{bench.title} only: {option.help}")(func)
    return func


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "format_", type=click.Choice(FORMAT_ORDER), help="Skip auto-detection.")
@click.option(
    "--max-mb", type=click.IntRange(min=1), help="Refuse files larger than this (default from settings: 200)."
)
@click.option(
    "--max-field-mb",
    type=click.FloatRange(min=0, min_open=True),
    help="Refuse any single text (a turn, a persona) longer than this many MB (default from settings: 4).",
)
@format_options
@click.option("--embed", "embed_now", is_flag=True, help="Embed the imported users' histories now (RAG starts warm).")
@click.pass_context
def import_cmd(
    ctx: click.Context,
    path: Path,
    format_: str | None,
    max_mb: int | None,
    max_field_mb: float | None,
    embed_now: bool,
    **format_values: object,
) -> None:
    """Import a dataset file or folder into the database, all or nothing.

    Re-importing a user or filler pool id replaces the stored one.
    """
    from core.formats import load_path

    settings = settings_of(root_obj(ctx))
    max_bytes = (max_mb or settings.max_import_mb) * 1024 * 1024
    max_field_chars = int((max_field_mb or settings.max_field_mb) * 1024 * 1024)
    try:
        options = {keyword: value for keyword, value in format_values.items() if value is not None}
        result = load_path(path, format=format_, max_bytes=max_bytes, max_field_chars=max_field_chars, **options)
    except FormatError as exc:
        fail(str(exc))
        return

    from app.errors import DuplicateInImport, MergeConflict

    wb = open_data(ctx)
    db_path = wb.db_path
    try:
        summary = wb.save_import(result)
    except (DuplicateInImport, MergeConflict, sqlite3.DatabaseError) as exc:
        fail(f"{path.name}: {exc} (the database is unchanged)")
        return
    finally:
        wb.close()

    out = Console(highlight=False, soft_wrap=True)
    parts = []
    if summary.users_added:
        parts.append(f"{len(summary.users_added)} user{'s' * (len(summary.users_added) != 1)} added")
    if summary.users_replaced:
        parts.append(f"{len(summary.users_replaced)} replaced ({_ids(summary.users_replaced)})")
    if summary.pools_added:
        parts.append(f"{len(summary.pools_added)} filler pool{'s' * (len(summary.pools_added) != 1)} added")
    if summary.pools_replaced:
        parts.append(f"{len(summary.pools_replaced)} filler pool(s) replaced ({_ids(summary.pools_replaced)})")
    out.print(
        safe_text(
            f"Imported {path.name} ({summary.format}): " + (", ".join(parts) or "nothing to store"), style="green"
        )
    )
    out.print(
        Text(
            f"{summary.sessions:,} sessions · {summary.turns:,} turns · {summary.preferences:,} preferences · "
            f"{summary.queries:,} queries · {summary.attributes:,} attributes → {db_path}"
        )
    )
    for note in summary.notes:
        out.print(safe_text(f"note: {note}", style="yellow"))
    if embed_now:
        import sys

        from tui.cli.embed_ahead import embed_users

        users = [*summary.users_added, *summary.users_replaced]
        wb = open_data(ctx)
        try:
            code = embed_users(wb, users, out)
        finally:
            wb.close()
        if code:
            sys.exit(code)


def _ids(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f", … {len(ids) - limit} more" if len(ids) > limit else "")
