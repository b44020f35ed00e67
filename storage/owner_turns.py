"""Every stored turn's text by its owner (a user or a filler pool), for counting their tokens in
one pass (`prefscope users`), and the sizes that decide whether that pass is worth it."""

from __future__ import annotations

from collections.abc import Iterator

from sqlite_utils import Database

#: (owner is a pool, owner id, turn text)
OwnerTurn = tuple[bool, str, str]


def owner_chars(db: Database) -> int:
    """Characters of every stored turn (the import's per-session count: no turn is read)."""
    return db.conn.execute("SELECT coalesce(sum(chars), 0) FROM sessions WHERE n_turns > 0").fetchone()[0]


def owner_turns(db: Database) -> Iterator[OwnerTurn]:
    """Every turn's text with its session's owner, in one scan of the turns table."""
    sql = """
        SELECT s.pool_id IS NOT NULL, coalesce(s.user_id, s.pool_id), t.content
        FROM turns t JOIN sessions s ON s.pk = t.session_pk
    """
    for is_pool, owner, content in db.conn.execute(sql):
        yield bool(is_pool), owner, content


def estimated_owner_tokens(db: Database) -> Iterator[tuple[bool, str, int]]:
    """(owner is a pool, owner id, tokens) by the characters / 4 estimate, per session then summed,
    as ``core.history.timeline.estimated_tokens`` counts it (no turn is read)."""
    sql = """
        SELECT pool_id IS NOT NULL, coalesce(user_id, pool_id), sum(chars / 4)
        FROM sessions GROUP BY 1, 2
    """
    for is_pool, owner, tokens in db.conn.execute(sql):
        yield bool(is_pool), owner, tokens
