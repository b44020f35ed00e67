"""Embedding users' histories ahead of need, one progress line per user: `prefscope embed` and
`prefscope import … --embed`. Ctrl+C stops; every finished batch is kept."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from tui.cli.common import fail
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
