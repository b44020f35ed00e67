"""`prefscope runs`: the stored runs, newest first, as a table or JSON."""

from __future__ import annotations

import click

from tui.cli.command_info import CommandInfo
from tui.cli.common import open_workbench, user_of

COMMAND = CommandInfo(
    name="runs",
    help="List stored runs.",
    examples=("prefscope runs --user maya --limit 10", "prefscope runs --json | jq -r '.[0].id'"),
    writes=False,
    order=120,
)


@click.command()
@click.option("--user", default=None, help="Only this user's runs (full id or unique prefix).")
@click.option("--limit", default=30, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (full ids, every model) instead of a table.")
@click.pass_obj
def runs(obj, user, limit, as_json):
    """List stored runs, newest first.

    The run column shows the full id when the terminal is wide enough, else the unique short form
    (the start of the id's random tail); every command that takes a run id accepts either."""
    import json

    from rich.console import Console
    from rich.table import Table

    from tui.safe_text import safe_cell

    workbench = open_workbench(obj, sample_data=False)
    user_id = user_of(workbench, user).user.id if user else None
    rows = workbench.list_runs(user_id=user_id, limit=limit)
    if as_json:
        keys = ("id", "created_at", "user_id", "query_id", "expression_type", "context", "method", "models", "status")
        docs = [{k: getattr(r, k) for k in keys} | {"batch": r.label} for r in rows]
        click.echo(json.dumps(docs, indent=2, ensure_ascii=False))
        return
    out = Console(highlight=False)  # the terminal's width now (COLUMNS included)
    short = out.width < FULL_ID_WIDTH
    shown = workbench.short_run_ids([r.id for r in rows]) if short else {}
    cells = [
        [
            shown.get(r.id, r.id),
            r.created_at[:16].replace("T", " ") if not short else r.created_at[5:16].replace("T", " "),
            r.user_id,
            r.query_id,
            str(r.expression_type or ""),
            r.context,
            r.method,
            ", ".join(r.models),
            r.status,
        ]
        for r in rows
    ]
    table = Table(*HEADERS)
    for column in table.columns[:2]:
        column.no_wrap = True  # an id is useful only whole
    for row in _fitted(cells, out.width):
        table.add_row(*(safe_cell(c) for c in row))  # Text cells: ids and model names are data, never markup
    out.print(table)
    if short and rows:
        out.print("[dim]run: short ids, accepted by every command (full ids: a wider terminal or --json)[/]")


HEADERS = ("run", "created", "user", "query", "E", "context", "method", "models", "status")
#: The columns cut from the middle when the table is wider than the terminal (user, query, models):
#: a cut at the end shows `prefeval-travel_restaur…` on every row.
CUT = (2, 3, 7)


def _fitted(cells: list[list[str]], width: int) -> list[list[str]]:
    """The rows with the user, query and model cells cut from the middle (distinct values stay
    distinct, :func:`core.text.short_ids.fitted`) so the table fits ``width`` columns."""
    from core.text.short_ids import fitted

    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(HEADERS)]
    frame = 3 * len(HEADERS) + 1  # a border and a space each side of every cell
    if sum(widths) + frame <= width:
        return cells
    room = width - frame - sum(w for i, w in enumerate(widths) if i not in CUT)
    return fitted(cells, CUT, room, headers={i: len(HEADERS[i]) for i in CUT})


#: Terminal width from which `runs` prints full run ids.
FULL_ID_WIDTH = 140
