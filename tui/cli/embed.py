"""`prefscope embed [USER …]` and `prefscope import … --embed`: embed histories ahead of need, so a
RAG run's first prompt only embeds its question. Ctrl+C stops; every finished batch is kept."""

from __future__ import annotations

import sys

import click
from rich.console import Console
from rich.text import Text

from tui.cli.common import fail, open_workbench, user_of
from tui.safe_text import terminal_safe


def embed_users(wb, user_ids: list[str], console: Console) -> int:
    """Embed each user's history (``core.methods.embed_ahead``); prints one line per user. Returns
    the exit code: 0, or 130 on Ctrl+C (what finished is cached)."""
    from core.history.retrieval import Embedder, RetrievalError
    from core.methods.embed_ahead import embed_ahead

    pools = wb.filler_pools()
    try:
        embedder = Embedder.configured(wb.settings, wb.embedding_cache())
    except RetrievalError as exc:
        fail(terminal_safe(str(exc)))
    if embedder.engine.fallback_note:
        console.print(Text(f"note: {embedder.engine.fallback_note}", style="yellow"))
    interactive = console.is_terminal
    for user_id in user_ids:
        bundle = wb.user(user_id)

        def show(done: int, total: int, who: str = user_id) -> None:
            if interactive:
                console.file.write(f"\r{terminal_safe(who)}: embedding {done:,}/{total:,} texts ({embedder.id})")
                console.file.flush()

        before = embedder.texts_encoded
        try:
            result = embed_ahead(bundle, pools, embedder, progress=show)
        except RetrievalError as exc:
            fail(terminal_safe(str(exc)))
        except KeyboardInterrupt:  # each finished batch was committed as it was made
            if interactive:
                console.file.write("\r\033[K")
            done = embedder.texts_encoded - before
            console.print(Text(f"{user_id}: stopped after {done:,} texts; those are kept", style="yellow"))
            return 130
        if interactive:
            console.file.write("\r\033[K")
        console.print(Text(f"{user_id}: {result.texts:,} texts, {result.embedded:,} embedded now ({embedder.id})"))
    return 0


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
