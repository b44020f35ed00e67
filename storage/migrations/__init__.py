"""Numbered schema migrations, applied in order and recorded in the database.

Adding one: create ``storage/migrations/mNNN_short_name.py`` with the next free number and a
function ``up(db)`` that changes the schema (plain SQL through ``db.executescript`` or sqlite-utils
calls). Nothing else needs registering. Each migration runs in its own ``BEGIN IMMEDIATE``
transaction together with the row that records it, so it either lands completely or not at all.
Never edit a migration that has shipped; add a new one.

The record is the ``migrations`` table (version, name, applied_at). A migration is pending until
its version is recorded, so numbers need not be contiguous and one merged into a gap still runs.
``PRAGMA user_version`` mirrors the highest version for tools that only read the file header.
A database holding a version this code does not know is refused (it was written by a newer
prefscope).
"""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from sqlite_utils import Database

from storage.transactions import transaction

_NAME = re.compile(r"^m(\d{3})_[a-z0-9_]+$")


class MigrationError(RuntimeError):
    """The database and the code disagree about the schema."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    up: Callable[[Database], None]


def discover(package: ModuleType | None = None) -> list[Migration]:
    """All migration modules of ``package`` (default: this one), sorted by number."""
    package = package or importlib.import_module(__name__)
    found: dict[int, Migration] = {}
    for info in pkgutil.iter_modules(package.__path__):
        match = _NAME.match(info.name)
        if not match:
            continue
        version = int(match.group(1))
        if version in found:
            raise MigrationError(f"two migrations numbered {version:03d}: {found[version].name}, {info.name}")
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found[version] = Migration(version, info.name, module.up)
    return [found[v] for v in sorted(found)]


def applied(db: Database) -> list[tuple[int, str, str]]:
    """(version, name, applied_at) of every recorded migration, oldest first."""
    if not db.table("migrations").exists():
        return []
    return [tuple(r) for r in db.conn.execute("SELECT version, name, applied_at FROM migrations ORDER BY version")]


def current_version(db: Database) -> int:
    """The highest recorded version (0 for a fresh file)."""
    return max(_recorded(db), default=0)


def _recorded(db: Database) -> set[int]:
    if not db.table("migrations").exists():
        return set()
    return {r[0] for r in db.conn.execute("SELECT version FROM migrations")}


def check_known(db: Database, migrations: list[Migration] | None = None) -> None:
    """Raise :class:`MigrationError` if ``db`` was migrated by a newer prefscope."""
    known = {m.version for m in (discover() if migrations is None else migrations)}
    unknown = _recorded(db) - known
    if unknown:
        raise MigrationError(
            f"the database has schema migration(s) {sorted(unknown)} that this prefscope does not know; "
            "upgrade prefscope or point --db at another file"
        )


def pending(db: Database, migrations: list[Migration] | None = None) -> list[Migration]:
    """The known migrations not yet recorded in ``db`` (what :func:`migrate` would apply)."""
    recorded = _recorded(db)
    return [m for m in (discover() if migrations is None else migrations) if m.version not in recorded]


def migrate(db: Database, migrations: list[Migration] | None = None) -> list[str]:
    """Apply every known migration not yet recorded, in number order. Returns the names applied.

    Pending is "not recorded", not "above the highest recorded": a migration numbered into a gap
    (two branches adding 004 and 005) is still applied.
    """
    migrations = discover() if migrations is None else migrations
    check_known(db, migrations)
    recorded = _recorded(db)
    done: list[str] = []
    for migration in migrations:
        if migration.version in recorded:
            continue
        with transaction(db):
            # Re-check inside the write lock: another process may have migrated meanwhile.
            _ensure_table(db)
            if migration.version in _recorded(db):
                continue
            migration.up(db)
            db.conn.execute(
                "INSERT INTO migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, dt.datetime.now(dt.UTC).isoformat(timespec="seconds")),
            )
            db.conn.execute(f"PRAGMA user_version = {max(current_version(db), migration.version)}")
        done.append(migration.name)
    return done


def _ensure_table(db: Database) -> None:
    db.conn.execute(
        "CREATE TABLE IF NOT EXISTS migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
