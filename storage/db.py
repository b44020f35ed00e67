"""Opening the SQLite database: path resolution, connection pragmas, migrations.

Every connection prefscope opens goes through :func:`open_db`, so each one has WAL journaling,
enforced foreign keys and a busy timeout (SQLite settings that are per connection or easy to
forget). A ``Database`` is bound to the thread that opened it: other threads open their own, and
writes from background work go through :mod:`storage.writer`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sqlite_utils import Database

from storage.migrations import migrate as run_migrations

#: How long a connection waits for another writer's lock before failing with "database is locked".
BUSY_TIMEOUT_MS = 5000


def default_db_path() -> Path:
    """The configured database file (``PREFSCOPE_DB``, the config file, or the XDG data dir)."""
    from core.settings import load_settings

    return Path(load_settings().db)


def open_db(path: str | Path | None = None, *, migrate: bool = True) -> Database:
    """Open (creating if needed) the database at ``path`` and bring its schema up to date.

    The parent directory is created here, at open time, never at import time.
    """
    target = Path(path) if path is not None else default_db_path()
    target = target.expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(target), timeout=BUSY_TIMEOUT_MS / 1000)
    db = Database(conn, execute_plugins=False)  # no third-party sqlite-utils plugins in our connections
    configure(db)
    if migrate:
        run_migrations(db)
    return db


def configure(db: Database) -> None:
    """Per-connection settings. WAL is a property of the file but setting it again is cheap."""
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    db.enable_wal()
    # WAL + NORMAL is durable across application crashes; only a power cut can lose the last commit.
    db.execute("PRAGMA synchronous = NORMAL")


def db_file(db: Database) -> Path | None:
    """The file behind a connection (None for in-memory databases)."""
    for _, name, file in db.conn.execute("PRAGMA database_list"):
        if name == "main":
            return Path(file) if file else None
    return None


def table_counts(db: Database) -> dict[str, int]:
    """Row count of every table, FTS index tables included: for tests and diagnostics."""
    names = [
        r[0]
        for r in db.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    return {name: db.conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}
