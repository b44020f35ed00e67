"""Opening the SQLite database: path resolution, which files are ours, connection pragmas, migrations.

Every connection prefscope opens goes through :func:`open_db`, so each one has WAL journaling,
enforced foreign keys and a busy timeout (SQLite settings that are per connection or easy to
forget). A ``Database`` is bound to the thread that opened it: other threads open their own, and
writes from background work go through :mod:`storage.writer`.

Only prefscope's own databases are opened: a file that is not SQLite, is cut short, or is another
application's SQLite database is refused with :class:`DatabaseRefused` before anything is written
to it. Ours carry :data:`APPLICATION_ID` in the header; an empty file is adopted and stamped, and a
database made before the stamp existed is recognised by its ``migrations`` table and stamped.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlite_utils import Database

from storage.migrations import MigrationError, check_known, discover, pending
from storage.migrations import migrate as run_migrations

#: How long a connection waits for another writer's lock before failing with "database is locked".
BUSY_TIMEOUT_MS = 5000

#: ``PRAGMA application_id`` of a prefscope database: "pref" in ASCII.
APPLICATION_ID = 0x70726566

#: The first 16 bytes of every SQLite 3 database file (for output files; see :func:`check_file`).
SQLITE_HEADER = b"SQLite format 3\x00"

_LEAVE = "prefscope leaves it untouched; point --db (or PREFSCOPE_DB) at another file"


class DatabaseRefused(sqlite3.DatabaseError):
    """The file is not one prefscope may use: missing (read-only open), not SQLite, damaged, or
    another application's. The message names the file and says what to do."""


def default_db_path() -> Path:
    """The configured database file (``PREFSCOPE_DB``, the config file, or the XDG data dir)."""
    from core.settings import load_settings

    return Path(load_settings().db)


def open_db(
    path: str | Path | None = None, *, migrate: bool = True, readonly: bool = False, verify: bool = True
) -> Database:
    """Open the database at ``path`` and bring its schema up to date.

    Writable (the default): the file and its folder are created if missing, here at open time,
    never at import time; ``verify`` first checks that its pages are intact (:func:`check_intact`),
    so a damaged file is refused before anything is written to it. ``readonly``: nothing is created or written (a missing file raises
    :class:`DatabaseRefused`); a database that still needs migrating or stamping is upgraded once
    through a writable connection first, since the code reads the current schema.
    Raises :class:`DatabaseRefused` for a file that is not ours, untouched.
    """
    target = Path(path) if path is not None else default_db_path()
    target = target.expanduser()
    if str(target) == ":memory:":
        return _prepared(sqlite3.connect(":memory:"), target, migrate=migrate, readonly=False)
    check_file(target, must_exist=readonly)
    if not readonly:
        target.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(target), timeout=BUSY_TIMEOUT_MS / 1000)
        return _prepared(conn, target, migrate=migrate, verify=verify)
    db = _prepared(_connect_readonly(target), target, migrate=False, readonly=True)
    if migrate:
        try:
            check_known(db)
        except MigrationError:
            db.close()
            raise
    outdated = migrate and bool(pending(db))
    unstamped = db.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID
    if outdated or unstamped:
        db.close()
        try:
            open_db(target).close()
        except sqlite3.OperationalError:
            if outdated:  # the code cannot read an old schema
                raise
            # only the stamp is missing and the file cannot be written: read it as it is
        db = _prepared(_connect_readonly(target), target, migrate=False, readonly=True)
    return db


def _connect_readonly(target: Path) -> sqlite3.Connection:
    uri = f"file:{quote(str(target.resolve()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            conn.execute("SELECT 1 FROM sqlite_master LIMIT 1")
        except sqlite3.DatabaseError as exc:
            conn.close()
            if is_corruption(exc):
                raise DatabaseRefused(refusal_message(target, exc)) from exc
            raise
        return conn
    except sqlite3.OperationalError:
        # A read-only folder where the WAL index cannot be created: no writer can be active
        # there either (it would need the -wal file), so reading the file as immutable is safe.
        return sqlite3.connect(uri + "&immutable=1", uri=True)


def _prepared(
    conn: sqlite3.Connection, target: Path, *, migrate: bool, readonly: bool = False, verify: bool = False
) -> Database:
    db = Database(conn, execute_plugins=False)  # no third-party sqlite-utils plugins in our connections
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if verify:
            check_intact(db, target)  # before claim and migrations: both write
        claim(db, target, stamp=not readonly)  # before configure: WAL mode would change a foreign file
        configure(db, readonly=readonly)
        if migrate:
            run_migrations(db)
    except sqlite3.DatabaseError as exc:
        db.close()
        if is_corruption(exc):
            raise DatabaseRefused(refusal_message(target, exc)) from exc
        raise
    except BaseException:
        db.close()
        raise
    return db


def check_file(target: Path, *, must_exist: bool = False) -> None:
    """A missing file is refused only when it must exist. The file's bytes are judged by SQLite
    itself (first query): reading them here with open()/close() would drop the POSIX locks SQLite
    holds on the same file from other threads of this process, and let another process corrupt it."""
    if must_exist and not target.exists():
        raise DatabaseRefused(f"no database at {target}")


def check_intact(db: Database, target: Path) -> None:
    """Refuse a file whose pages are damaged (:class:`DatabaseRefused`, untouched), before a writer
    changes it: SQLite reports damage only when a query reads the damaged page, which may be after
    other tables were written. ``quick_check`` reads every page once (linear in the file's size,
    about 0.6 ms per MB from the page cache) but skips the index-to-table cross-check of
    ``integrity_check``, which is superlinear."""
    problems = [line for row in db.execute("PRAGMA quick_check(3)").fetchall() for line in row[0].splitlines()]
    if problems != ["ok"]:
        found = [p for p in problems if not p.startswith("***")]  # drop "*** in database main ***"
        raise DatabaseRefused(damaged_message(target, "; ".join(found)))


def claim(db: Database, target: Path, *, stamp: bool = True) -> None:
    """Accept only our databases: stamped ones, empty ones and ones made before the stamp (their
    ``migrations`` table says so). ``stamp`` writes our application id into the last two kinds."""
    app_id = db.execute("PRAGMA application_id").fetchone()[0]
    if app_id == APPLICATION_ID:
        return
    if app_id != 0:
        raise DatabaseRefused(f"{target} belongs to another application (application_id {app_id:#x}); {_LEAVE}")
    names = [
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    ]
    if names and not _made_by_prefscope(db, names):
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        raise DatabaseRefused(f"{target} is a SQLite database of another application ({shown}); {_LEAVE}")
    if stamp:
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def _made_by_prefscope(db: Database, names: list[str]) -> bool:
    if "migrations" not in names:
        return False
    first = discover()[0]
    try:
        row = db.execute("SELECT 1 FROM migrations WHERE version = ? AND name = ?", [first.version, first.name])
        return row.fetchone() is not None
    except sqlite3.OperationalError:  # a "migrations" table of some other shape
        return False


def is_corruption(exc: BaseException) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB: the file is damaged, not merely busy or read-only."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.DatabaseError) and code is not None and code & 0xFF in (11, 26)


def refusal_message(target: Path, exc: BaseException) -> str:
    """SQLITE_NOTADB: not SQLite at all (or its first page is gone); else damaged further in."""
    if (getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF == 26:
        return f"{target} is not a SQLite database (or its first page is damaged); {_LEAVE}"
    return damaged_message(target, exc)


def damaged_message(target: Path, why: object) -> str:
    return (
        f"{target} is damaged ({why}); prefscope leaves it as it is. Restore it from a backup, "
        "or point --db (or PREFSCOPE_DB) at another file"
    )


def configure(db: Database, *, readonly: bool = False) -> None:
    """Per-connection settings. WAL is a property of the file but setting it again is cheap."""
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    if readonly:
        return  # journal mode and sync level only matter to writers
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
