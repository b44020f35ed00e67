"""`prefscope users`: the imported users and filler pools, as tables or JSON.

Thousands of users: the listing is one SQL query (``storage.users.list_users``) and each row is one
formatted line; the columns are sized once from the longest values. (A Rich table measured and
rendered every cell of 20,000 rows: seconds.) Tokens are counted as `prefscope show` counts them,
in one scan of the turns (``app.owner_tokens``); a database too large to count quickly, or no
tokenizer offline, shows the characters / 4 estimate, labelled ``~t``.
"""

from __future__ import annotations

import json

import click
from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.text import Text

from core.text.terminal_safe import one_line
from tui.cli.command_info import CommandInfo
from tui.cli.common import open_data

COMMAND = CommandInfo(
    name="users",
    help="List imported users.",
    examples=("prefscope users", "prefscope users --json | jq -r '.users[].id'"),
    writes=False,
    order=60,
)

#: One listed row: id, source and name (made one-line safe) and the counts.
Row = tuple[str, str, str, list[int]]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON (full ids, exact counts) instead of tables.")
@click.pass_context
def users(ctx: click.Context, as_json: bool) -> None:
    """List imported users (and filler pools). Commands take a user id in full or any unique prefix."""
    from app.owner_tokens import owner_tokens

    wb = open_data(ctx, must_exist=True)
    try:
        rows = wb.users()
        pools = wb.filler_pool_rows()
        tokens = owner_tokens(wb)
    finally:
        wb.close()
    if as_json:
        # vars(): the dataclass's fields in order, as asdict gives them, without deep-copying each row.
        doc = {
            "users": [{**vars(u), "tokens": tokens.users.get(u.id, 0)} for u in rows],
            "filler_pools": [{**vars(p), "tokens": tokens.pools.get(p.id, 0)} for p in pools],
            "tokens_estimated": tokens.estimated,  # null: real counts, as `prefscope show` gives them
        }
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    out = Console(highlight=False)
    if not rows and not pools:
        out.print("No users yet. Import some: prefscope import PATH")
        return
    unit = "~t" if tokens.estimated else "tokens"
    if rows:
        counts = [[u.sessions, u.preferences, u.queries, u.attributes, tokens.users.get(u.id, 0)] for u in rows]
        _print_listing(
            out,
            f"{len(rows)} user{'s' * (len(rows) != 1)}",
            _rows([(u.id, u.source, u.name, c) for u, c in zip(rows, counts)]),
            ["sess", "prefs", "qs", "attrs", unit],
        )
    if pools:
        _print_listing(
            out,
            f"{len(pools)} filler pool{'s' * (len(pools) != 1)}",
            _rows([(p.id, p.source, p.name, [p.sessions, tokens.pools.get(p.id, 0)]) for p in pools]),
            ["sess", unit],
        )
    if tokens.estimated:
        note = f"~t = characters / 4 ({tokens.estimated}); `prefscope show USER` counts real tokens."
    else:
        note = "tokens as `prefscope show USER` counts them (each turn as a chat message)."
    out.print(Text(note, style="dim"))


def _rows(items: list[tuple[str, str, str, list[int]]]) -> list[Row]:
    """``items`` with controls in their texts shown escaped (one scan of them all when none has any)."""
    texts = "".join(i[0] + i[1] + i[2] for i in items)
    if one_line(texts) == texts:
        return items
    return [(one_line(i), one_line(s), one_line(n), v) for i, s, n, v in items]


#: The source column is cut to this many cells: the name needs the room more.
SOURCE_CELLS = 12


def _print_listing(out: Console, title: str, items: list[Row], numbers: list[str]) -> None:
    """id | numbers… | source | name, two spaces apart: each column as wide as its longest value
    (the source at most :data:`SOURCE_CELLS`), the name cut with "…" to what the terminal has left."""
    width = out.width  # a property that reads the environment: once, not per line
    counts = [[f"{v:,}" for v in item[3]] for item in items]
    id_w = max(_cells(item[0]) for item in items)
    num_w = [max(len(name), *(len(c[n]) for c in counts)) for n, name in enumerate(numbers)]
    source_w = min(SOURCE_CELLS, max(len("source"), *(_cells(item[1]) for item in items)))
    name_w = max(8, width - id_w - sum(w + 2 for w in num_w) - source_w - 5)

    def line(id_: str, values: list[str], source: str, name: str) -> str:
        cells = [_fit(id_, id_w), *(v.rjust(w) for v, w in zip(values, num_w)), _fit(source, source_w), name]
        text = "  ".join(cells[:-1]) + "  " + _fit(name, name_w).rstrip()
        return text if _cells(text) <= width else set_cell_size(text, width)

    out.print(Text(title, style="italic"))
    out.print(Text(line("id", numbers, "source", "name"), style="bold"))
    out.file.write("".join(line(item[0], c, item[1], item[2]) + "\n" for item, c in zip(items, counts)))
    out.file.flush()


def _cells(text: str) -> int:
    return len(text) if text.isascii() else cell_len(text)


def _fit(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal cells, or cut to ``width`` with "…"."""
    size = _cells(text)
    if size > width:
        return set_cell_size(text, width - 1) + "…"
    return text + " " * (width - size)
