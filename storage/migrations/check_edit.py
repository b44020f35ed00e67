"""Widening a table's CHECK constraint in place.

Rebuilding a table means dropping it, which cascades into the tables that reference it (foreign
keys cannot be switched off inside a migration's transaction), so the constraint's text is edited
in ``sqlite_master``: SQLite's documented way for a change that every existing row already
satisfies (https://sqlite.org/lang_altertable.html, section 7).
"""

from __future__ import annotations

from sqlite_utils import Database


def widen_check(db: Database, table: str, old: str, new: str) -> None:
    conn = db.conn
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    if old not in sql:
        raise RuntimeError(f"{table} has an unexpected CHECK constraint; not changing it")
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", (sql.replace(old, new), table)
        )
        # Other connections re-read the schema when its version changes.
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
