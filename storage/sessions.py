"""Writing and reading sessions with their turns, for either owner (a user or a filler pool)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from sqlite_utils import Database

from core.model import Session
from storage import rows

Owner = Literal["user_id", "pool_id"]

#: Rows per INSERT statement batch (SQLite's bound-variable limit is far above 100 x 6 columns).
BATCH = 500


def insert_sessions(db: Database, owner: Owner, owner_id: str, sessions: list[Session]) -> tuple[int, int]:
    """Insert sessions in history order, then their turns. Returns (sessions, turns) written.

    Call inside a transaction: a failure half-way must not leave half a history.
    """
    if not sessions:
        return 0, 0
    key = {"user_id": owner_id} if owner == "user_id" else {"pool_id": owner_id}
    db.table("sessions").insert_all(
        (rows.session_row(s, position=i, **key) for i, s in enumerate(sessions)), batch_size=BATCH
    )
    pks = dict(db.conn.execute(f"SELECT id, pk FROM sessions WHERE {owner} = ?", (owner_id,)))
    n_turns = 0

    def all_turns() -> Iterator[dict]:
        nonlocal n_turns
        for s in sessions:
            batch = rows.turn_rows(s, pks[s.id])
            n_turns += len(batch)
            yield from batch

    db.table("turns").insert_all(all_turns(), batch_size=BATCH)
    return len(sessions), n_turns


def load_sessions(db: Database, owner: Owner, owner_id: str) -> list[Session]:
    """Every session of one owner, in history order, turns included: two queries in all."""
    session_rows = db.conn.execute(
        f"SELECT {rows.SESSION_COLUMNS} FROM sessions WHERE {owner} = ? ORDER BY position", (owner_id,)
    ).fetchall()
    turn_columns = ", ".join(f"t.{c.strip()}" for c in rows.TURN_COLUMNS.split(","))
    turn_rows = db.conn.execute(
        f"SELECT {turn_columns} FROM sessions s JOIN turns t ON t.session_pk = s.pk "
        f"WHERE s.{owner} = ? ORDER BY s.position, t.idx",
        (owner_id,),
    ).fetchall()
    return rows.sessions_from(session_rows, turn_rows)
