"""Responses may be ``incomplete``: the stream ended without its finish signal (text kept).

The status CHECK of ``responses`` gains one value. Rebuilding the table would mean dropping it,
which cascades into judgments (foreign keys cannot be switched off inside the migration's
transaction), so the constraint's text is edited in place: SQLite's documented way for a change
that every existing row already satisfies (https://sqlite.org/lang_altertable.html, section 7).
"""

from __future__ import annotations

from sqlite_utils import Database

OLD = "CHECK (status IN ('running','ok','error','cancelled','interrupted'))"
NEW = "CHECK (status IN ('running','ok','error','cancelled','interrupted','incomplete'))"


def up(db: Database) -> None:
    conn = db.conn
    (sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'responses'").fetchone()
    if OLD not in sql:
        raise RuntimeError("responses.status has an unexpected CHECK constraint; not changing it")
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'responses'", (sql.replace(OLD, NEW),)
        )
        # Other connections re-read the schema when its version changes.
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
