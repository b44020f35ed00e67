"""One write transaction on a connection (the lowest storage module: migrations and writers use it)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlite_utils import Database


@contextlib.contextmanager
def transaction(db: Database) -> Iterator[Database]:
    """One write transaction, taken with ``BEGIN IMMEDIATE``: commit on success, roll back on error.

    IMMEDIATE takes the write lock up front (waiting up to the busy timeout) so a transaction that
    reads before it writes cannot fail half-way with SQLITE_BUSY. sqlite-utils calls made inside
    become savepoints of this transaction. Never ``await`` inside it.
    """
    if db.conn.in_transaction:
        raise RuntimeError("transaction() cannot be nested; use db.atomic() for a savepoint")
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        db.conn.execute("COMMIT")
