"""`prefscope users`: the imported users and filler pools, as tables or JSON."""

from __future__ import annotations

import json

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tui.cli.command_info import CommandInfo
from tui.cli.common import open_data
from tui.safe_text import safe_cell

COMMAND = CommandInfo(
    name="users",
    help="List imported users.",
    examples=("prefscope users", "prefscope users --json | jq -r '.users[].id'"),
    writes=False,
    order=60,
)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON (full ids, exact counts) instead of tables.")
@click.pass_context
def users(ctx: click.Context, as_json: bool) -> None:
    """List imported users (and filler pools). Commands take a user id in full or any unique prefix."""
    from dataclasses import asdict

    wb = open_data(ctx, must_exist=True)
    try:
        rows = wb.users()
        pools = wb.filler_pool_rows()
    finally:
        wb.close()
    if as_json:
        doc = {"users": [asdict(u) for u in rows], "filler_pools": [asdict(p) for p in pools]}
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    out = Console(highlight=False)
    if not rows and not pools:
        out.print("No users yet. Import some: prefscope import PATH")
        return
    if rows:
        out.print(
            _listing(
                f"{len(rows)} user{'s' * (len(rows) != 1)}",
                out.width,
                [
                    (u.id, u.source, u.name, [u.sessions, u.preferences, u.queries, u.attributes, u.chars // 4])
                    for u in rows
                ],
                ["sess", "prefs", "qs", "attrs", "~t"],
            )
        )
    if pools:
        out.print(
            _listing(
                f"{len(pools)} filler pool{'s' * (len(pools) != 1)}",
                out.width,
                [(p.id, p.source, p.name, [p.sessions, p.chars // 4]) for p in pools],
                ["sess", "~t"],
            )
        )
    out.print(Text("~t = characters / 4; `prefscope show USER` counts real tokens.", style="dim"))


def _listing(title: str, width: int, items: list[tuple[str, str, str, list[int]]], numbers: list[str]) -> Table:
    """id | numbers… | source | name, the name cut to whatever width is left."""
    table = Table(title=title, title_justify="left", box=None, pad_edge=False, header_style="bold")
    id_w = max(len(safe_cell(i[0])) for i in items)
    table.add_column("id", no_wrap=True, min_width=id_w)
    used = id_w + 2
    for n, name in enumerate(numbers):
        w = max(len(name), *(len(f"{i[3][n]:,}") for i in items))
        table.add_column(name, justify="right", no_wrap=True, min_width=w)
        used += w + 2
    source_w = min(12, max(len("source"), *(len(safe_cell(i[1])) for i in items)))
    table.add_column("source", no_wrap=True, overflow="ellipsis", max_width=source_w)
    used += source_w + 2
    table.add_column("name", no_wrap=True, overflow="ellipsis", max_width=max(8, width - used - 1))
    for id_, source, name, values in items:
        table.add_row(safe_cell(id_), *(f"{v:,}" for v in values), safe_cell(source), safe_cell(name))
    return table
