"""docs/reference/database.md: the SQLite schema as the migrations build it. They are applied one by
one to an in-memory database, so each table and column says which migration made it; the notes are
the ``--`` comments of its ``CREATE TABLE``."""

from __future__ import annotations

import inspect
import re
import sqlite3
from dataclasses import dataclass, field

from docs.reference_gen import markdown as md

SOURCE = "the migrations in storage/migrations/, applied to an empty database"

#: SQLite's own tables behind an FTS5 table ``X``: ``X_data``, ``X_idx`` …
_FTS_SHADOWS = ("_config", "_data", "_docsize", "_idx", "_content")
_COLUMN_LINE = re.compile(r"^\s*,?\s*([A-Za-z_][A-Za-z0-9_]*)\b")


@dataclass
class Made:
    """Which migration made each table and each column added later (version, module name)."""

    tables: dict[str, tuple[int, str]] = field(default_factory=dict)
    columns: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)


def built() -> tuple[sqlite3.Connection, Made, list]:
    """An in-memory database with every migration applied, one at a time, and what each made."""
    from storage.db import open_db
    from storage.migrations import discover, migrate

    db = open_db(":memory:", migrate=False)
    migrations = discover()
    made = Made()
    for i, migration in enumerate(migrations):
        before = _columns(db.conn)
        migrate(db, migrations[: i + 1])
        for table, columns in _columns(db.conn).items():
            if table not in before:
                made.tables[table] = (migration.version, migration.name)
            else:
                for column in columns - before[table]:
                    made.columns[(table, column)] = (migration.version, migration.name)
    return db.conn, made, migrations


def _columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    return {t: {c[1] for c in conn.execute(f"PRAGMA table_xinfo({_quoted(t)})")} for t in _tables(conn)}


def _tables(conn: sqlite3.Connection) -> list[str]:
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")]
    fts = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'")}
    shadows = {f"{v}{s}" for v in fts for s in _FTS_SHADOWS}
    return [n for n in names if n not in shadows and not n.startswith("sqlite_")]


def page() -> str:
    conn, made, migrations = built()
    from storage.db import APPLICATION_ID

    latest = migrations[-1].version
    intro = (
        f"A prefscope database is one SQLite file stamped `PRAGMA application_id = {APPLICATION_ID:#x}` "
        f'("pref"), with `PRAGMA user_version = {latest}` (its latest migration). List- and dict-valued '
        "columns hold JSON text. Tables by the migration that created them; a column added later names its migration."
    )
    listing = md.table(
        ("migration", "what it does"),
        [(md.code(m.name), md.text(re.sub(r"^\d+: ", "", md.first_sentence(_doc(m))))) for m in migrations],
    )
    tables = sorted(_tables(conn), key=lambda t: made.tables.get(t, (0, ""))[0])
    return md.page(
        "Database schema",
        SOURCE,
        intro,
        "## The migrations, in order",
        listing,
        *(_table_section(conn, t, made) for t in tables),
    )


def _doc(migration) -> str:
    """The docstring of the module the migration's ``up`` lives in."""
    module = inspect.getmodule(migration.up)
    return (module.__doc__ if module else None) or ""


def _table_section(conn: sqlite3.Connection, table: str, made: Made) -> str:
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0] or ""
    notes = column_notes(sql)
    by = made.tables.get(table)
    origin = f"Created by {md.code(by[1])}." if by else ""
    if table == "migrations":  # the runner's own record, made with the first migration
        origin = "Which migrations were applied and when (written by `storage.migrations.migrate`)."
    if sql.startswith("CREATE VIRTUAL TABLE"):
        origin += f" A virtual table: {md.code(' '.join(sql.split()))}."
    rows = []
    for _, name, kind, notnull, default, pk, hidden in conn.execute(f"PRAGMA table_xinfo({_quoted(table)})"):
        if hidden == 1:
            continue  # an FTS table's hidden columns
        added = made.columns.get((table, name))
        note = " ".join(filter(None, [notes.get(name, ""), f"(added by {added[1]})" if added else ""]))
        declared = [kind or "", "not null" if notnull else "", f"default {md.code(default)}" if default else ""]
        declared.append("primary key" if pk else "")
        rows.append((md.code(name), ", ".join(filter(None, declared)), md.text(note)))
    parts = [
        f"## `{table}`",
        origin.strip(),
        md.table(("column", "declared", "note"), rows),
        _checks(sql),
        _foreign_keys(conn, table),
        _indexes(conn, table),
        _triggers(conn, table),
    ]
    return "\n\n".join(filter(None, parts))


def column_notes(create_sql: str) -> dict[str, str]:
    """Column name → its ``-- comment`` in the ``CREATE TABLE`` (a comment on a continuation line
    belongs to the column above)."""
    notes: dict[str, str] = {}
    current = None
    for line in create_sql.partition("(")[2].splitlines():
        code, _, comment = line.partition("--")
        match = _COLUMN_LINE.match(code)
        if match and match.group(1).upper() not in {"CHECK", "PRIMARY", "UNIQUE", "FOREIGN", "CONSTRAINT"}:
            current = match.group(1)
        if comment.strip() and current:
            notes[current] = " ".join(filter(None, [notes.get(current), comment.strip()]))
    return notes


def _checks(create_sql: str) -> str:
    """The ``CHECK (…)`` constraints of a ``CREATE TABLE``, each whole (parentheses balanced)."""
    found = []
    for match in re.finditer(r"\bCHECK\s*\(", create_sql, flags=re.IGNORECASE):
        found.append(" ".join(create_sql[match.end() : _closing(create_sql, match.end() - 1)].split()))
    return "Checks: " + "; ".join(md.code(c) for c in found) + "." if found else ""


def _closing(text: str, opening: int) -> int:
    """Where the parenthesis opened at ``opening`` closes (the end of ``text`` if it never does)."""
    depth = 0
    for at in range(opening, len(text)):
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        if depth == 0:
            return at
    return len(text)


def _foreign_keys(conn: sqlite3.Connection, table: str) -> str:
    rows = [
        f"{md.code(r[3])} → [{md.code(f'{r[2]}.{r[4]}')}](#{r[2]}) (on delete {r[6].lower()})"
        for r in conn.execute(f"PRAGMA foreign_key_list({_quoted(table)})")
    ]
    return "Foreign keys: " + "; ".join(sorted(rows)) + "." if rows else ""


def _indexes(conn: sqlite3.Connection, table: str) -> str:
    rows = []
    for _, name, unique, origin, _partial in conn.execute(f"PRAGMA index_list({_quoted(table)})"):
        if origin == "pk":
            continue
        columns = ", ".join(r[2] or "(expression)" for r in conn.execute(f"PRAGMA index_info({_quoted(name)})"))
        label = "unique" if unique else "index"
        rows.append(f"{md.code(name)} ({label} on {columns})" if origin == "c" else f"unique ({columns})")
    return "Indexes: " + "; ".join(sorted(rows)) + "." if rows else ""


def _triggers(conn: sqlite3.Connection, table: str) -> str:
    names = [
        r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", [table])
    ]
    return "Triggers: " + ", ".join(md.code(n) for n in sorted(names)) + "." if names else ""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
