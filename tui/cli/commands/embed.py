"""`prefscope embed [USER …]`: embed histories ahead of need, so a RAG run's first prompt only
embeds its question. Ctrl+C stops; every finished batch is kept (:mod:`tui.cli.embed_ahead`)."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from tui.cli.command_info import CommandInfo
from tui.cli.common import open_workbench, user_of
from tui.cli.embed_ahead import embed_users

COMMAND = CommandInfo(
    name="embed",
    help="Embed users' histories now, so RAG runs start warm.",
    examples=("prefscope embed", "prefscope embed maya priya"),
    writes=True,
    order=50,
    details="Ctrl+C keeps the finished batches.",
)


@click.command()
@click.argument("user_ids", metavar="[USER]...", nargs=-1)
@click.pass_context
def embed(ctx: click.Context, user_ids: tuple[str, ...]) -> None:
    """Embed users' histories now (all users when none is named), so RAG runs start warm."""
    wb = open_workbench(ctx.obj)
    try:
        ids = [user_of(wb, u).user.id for u in user_ids] or wb.user_ids()
        code = embed_users(wb, ids, Console(stderr=False, highlight=False, soft_wrap=True))
    finally:
        wb.close()
    if code:
        sys.exit(code)
