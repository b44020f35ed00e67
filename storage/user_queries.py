"""Queries added to a stored user after its import (generated restraint probes,
:mod:`core.analysis.restraint_probes`): appended after the user's own, in one transaction.

A re-import of the user replaces them with the rest of the user (``storage.users.save_import``);
the runs that answered them are kept, as for any query.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from core.model import Query
from storage import rows
from storage.transactions import transaction
from storage.users import UnknownUser


def add_queries(db: Database, user_id: str, queries: Sequence[Query]) -> list[str]:
    """Append ``queries`` to the stored user; an id the user already has is left as stored.
    Returns the ids added. Raises UnknownUser."""
    with transaction(db):
        if db.conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
            raise UnknownUser(user_id)
        stored = {r[0] for r in db.conn.execute("SELECT id FROM queries WHERE user_id = ?", (user_id,))}
        (last,) = db.conn.execute("SELECT max(position) FROM queries WHERE user_id = ?", (user_id,)).fetchone()
        new: list[Query] = []
        for q in queries:
            if q.id not in stored:
                stored.add(q.id)
                new.append(q)
        first = 0 if last is None else last + 1
        db.table("queries").insert_all(
            rows.query_row(q, user_id=user_id, position=first + i) for i, q in enumerate(new)
        )
    return [q.id for q in new]
