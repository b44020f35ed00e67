"""Full-text search over every stored turn (FTS5, porter stemming), user input taken literally."""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from core.model import turn_ref


@dataclass(frozen=True)
class TurnHit:
    user_id: str | None
    pool_id: str | None
    session_id: str
    turn_index: int
    role: str
    #: The matching passage with hits wrapped in ``[`` ``]``.
    snippet: str
    #: FTS5 bm25 rank: lower is better.
    rank: float

    @property
    def ref(self) -> str:
        return turn_ref(self.session_id, self.turn_index)


def fts_query(text: str) -> str:
    """User text -> an FTS5 query matching all its words, with every FTS operator neutralised.

    Each whitespace-separated word becomes a quoted string (``"`` doubled inside), so quotes,
    ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``:`` and parentheses are searched for, never parsed.
    """
    return " ".join('"' + word.replace('"', '""') + '"' for word in text.split())


def search_turns(db: Database, text: str, user_id: str | None = None, *, limit: int = 50) -> list[TurnHit]:
    """Turns whose content contains all words of ``text``, best first; only ``user_id``'s if given."""
    query = fts_query(text)
    if not query:
        return []
    where = "turns_fts MATCH ?"
    params: list = [query]
    if user_id is not None:
        where += " AND s.user_id = ?"
        params.append(user_id)
    params.append(limit)
    sql = f"""
        SELECT s.user_id, s.pool_id, s.id, t.idx, t.role,
               snippet(turns_fts, 0, '[', ']', '…', 16), turns_fts.rank
        FROM turns_fts
        JOIN turns t ON t.pk = turns_fts.rowid
        JOIN sessions s ON s.pk = t.session_pk
        WHERE {where}
        ORDER BY turns_fts.rank
        LIMIT ?
    """
    return [TurnHit(*r) for r in db.conn.execute(sql, params)]
