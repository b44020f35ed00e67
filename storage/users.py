"""The user repository: store an import in one transaction, list users, load one user back.

``save_import`` is all-or-nothing: it runs inside a single ``BEGIN IMMEDIATE`` transaction, so a
failure at any point (a constraint, a full disk, an interrupt) leaves the database exactly as it
was. Re-importing a user or filler pool id replaces the stored one completely (its sessions, turns,
preferences, queries and attributes go with it) and the summary says which ids were replaced.

Except for formats whose files each hold part of a user: when the format module defines
``merge_bundles(stored, new)`` (PrefEval, whose forms of a topic come in separate files) and the
stored user came from the same format, the stored bundle is merged with the new one and the merge
replaces it, inside the same transaction; a merge that fails leaves the database unchanged.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import NamedTuple

from sqlite_utils import Database

from core.formats import FORMATS, FormatError
from core.formats.base import ImportResult
from core.model import UserBundle
from storage import rows
from storage.sessions import BATCH, insert_sessions, load_sessions
from storage.transactions import transaction


class UnknownUser(LookupError):
    def __init__(self, user_id: str):
        super().__init__(f"no user {user_id!r} in the database (see `prefscope users`)")
        self.user_id = user_id


class DuplicateInImport(ValueError):
    """The same user or pool id appears twice in one import: which one should win is not ours to guess."""


class MergeConflict(ValueError):
    """A partial re-import does not fit the stored user (another question): nothing was stored."""


@dataclass
class ImportSummary:
    format: str
    users_added: list[str] = field(default_factory=list)
    users_replaced: list[str] = field(default_factory=list)
    #: Stored users a partial re-import was merged into (PrefEval: one form file at a time).
    users_merged: list[str] = field(default_factory=list)
    pools_added: list[str] = field(default_factory=list)
    pools_replaced: list[str] = field(default_factory=list)
    sessions: int = 0
    turns: int = 0
    preferences: int = 0
    queries: int = 0
    attributes: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def rows(self) -> int:
        """Rows written (users, pools, sessions, turns, preferences, queries, attributes)."""
        return (
            len(self.users_added)
            + len(self.users_replaced)
            + len(self.users_merged)
            + len(self.pools_added)
            + len(self.pools_replaced)
            + self.sessions
            + self.turns
            + self.preferences
            + self.queries
            + self.attributes
        )


@dataclass(frozen=True)
class UserSummary:
    id: str
    name: str
    source: str
    format: str
    imported_at: str
    sessions: int
    preferences: int
    queries: int
    attributes: int
    #: Total characters of the user's turns; real token counts come from core.history.tokens when needed.
    chars: int


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _check_unique(kind: str, ids: list[str]) -> None:
    seen: set[str] = set()
    for i in ids:
        if i in seen:
            raise DuplicateInImport(f"{kind} {i!r} appears more than once in this import; nothing was stored")
        seen.add(i)


def save_import(db: Database, result: ImportResult) -> ImportSummary:
    """Store every bundle and filler pool of ``result`` in ONE transaction (all or nothing)."""
    _check_unique("user", [b.user.id for b in result.bundles])
    _check_unique("filler pool", [p.id for p in result.fillers])
    summary = ImportSummary(format=result.format, notes=list(result.notes))
    now = _now()
    with transaction(db):
        for pool in result.fillers:
            replaced = _delete(db, "filler_pools", pool.id)
            (summary.pools_replaced if replaced else summary.pools_added).append(pool.id)
            db.table("filler_pools").insert(
                {"id": pool.id, "name": pool.name, "source": pool.source, "format": result.format, "imported_at": now}
            )
            n_sessions, n_turns = insert_sessions(db, "pool_id", pool.id, pool.sessions)
            summary.sessions += n_sessions
            summary.turns += n_turns
        entry = FORMATS.get(result.format)
        merge = getattr(entry.load(), "merge_bundles", None) if entry is not None else None
        for bundle in result.bundles:
            uid = bundle.user.id
            if merge is not None and _stored_format(db, uid) == result.format:
                try:
                    bundle = merge(load_user(db, uid), bundle)
                except FormatError as exc:
                    raise MergeConflict(f"{exc}; nothing was stored") from exc
                summary.users_merged.append(uid)
                _delete(db, "users", uid)
            elif _delete(db, "users", uid):
                summary.users_replaced.append(uid)
            else:
                summary.users_added.append(uid)
            _insert_bundle(db, bundle, result.format, now, summary)
    if summary.users_merged:
        n = len(summary.users_merged)
        summary.notes.append(
            f"{n} stored user{'s' * (n != 1)} merged with this import (forms not in it are kept): "
            + ", ".join(summary.users_merged[:5])
            + (f", … {n - 5} more" if n > 5 else "")
        )
    return summary


def _stored_format(db: Database, user_id: str) -> str | None:
    row = db.conn.execute("SELECT format FROM users WHERE id = ?", (user_id,)).fetchone()
    return row[0] if row else None


def _delete(db: Database, table: str, id_: str) -> bool:
    """Delete one user / pool row; ON DELETE CASCADE removes what it owns (FTS via triggers)."""
    return db.conn.execute(f"DELETE FROM {table} WHERE id = ?", (id_,)).rowcount > 0


def _insert_bundle(db: Database, bundle: UserBundle, format: str, now: str, summary: ImportSummary) -> None:
    uid = bundle.user.id
    db.table("users").insert(rows.user_row(bundle.user, format=format, imported_at=now))
    db.table("preferences").insert_all(
        (rows.preference_row(p, user_id=uid, position=i) for i, p in enumerate(bundle.preferences)), batch_size=BATCH
    )
    n_sessions, n_turns = insert_sessions(db, "user_id", uid, bundle.sessions)
    db.table("queries").insert_all(
        (rows.query_row(q, user_id=uid, position=i) for i, q in enumerate(bundle.queries)), batch_size=BATCH
    )
    db.table("attributes").insert_all(
        (rows.attribute_row(a, user_id=uid, position=i) for i, a in enumerate(bundle.attributes)), batch_size=BATCH
    )
    summary.sessions += n_sessions
    summary.turns += n_turns
    summary.preferences += len(bundle.preferences)
    summary.queries += len(bundle.queries)
    summary.attributes += len(bundle.attributes)


class UserChoice(NamedTuple):
    """What a user picker shows of a user (no counts: those cost a pass over every session)."""

    id: str
    name: str
    source: str


def user_ids(db: Database) -> list[str]:
    return [r[0] for r in db.conn.execute("SELECT id FROM users ORDER BY id")]


def has_users(db: Database) -> bool:
    return db.conn.execute("SELECT 1 FROM users LIMIT 1").fetchone() is not None


def user_choices(db: Database) -> list[UserChoice]:
    """Every stored user's id, name and source, ordered by id: one query, no counts."""
    return list(map(UserChoice._make, db.conn.execute("SELECT id, name, source FROM users ORDER BY id")))


def list_users(db: Database) -> list[UserSummary]:
    """One row per stored user with counts, ordered by id: one query whatever the number of users
    (each table is grouped once, not queried per user)."""
    sql = """
        SELECT u.id, u.name, u.source, u.format, u.imported_at,
               coalesce(s.n, 0), coalesce(p.n, 0), coalesce(q.n, 0), coalesce(a.n, 0), coalesce(s.chars, 0)
        FROM users u
        LEFT JOIN (SELECT user_id, count(*) n, sum(chars) chars FROM sessions
                   WHERE user_id IS NOT NULL GROUP BY user_id) s ON s.user_id = u.id
        LEFT JOIN (SELECT user_id, count(*) n FROM preferences GROUP BY user_id) p ON p.user_id = u.id
        LEFT JOIN (SELECT user_id, count(*) n FROM queries GROUP BY user_id) q ON q.user_id = u.id
        LEFT JOIN (SELECT user_id, count(*) n FROM attributes GROUP BY user_id) a ON a.user_id = u.id
        ORDER BY u.id
    """
    return [UserSummary(*r) for r in db.conn.execute(sql)]


def load_user(db: Database, user_id: str) -> UserBundle:
    """Rebuild the stored user exactly as imported (``==`` the imported bundle). Raises UnknownUser."""
    user_row = db.conn.execute(f"SELECT {rows.USER_COLUMNS} FROM users WHERE id = ?", (user_id,)).fetchone()
    if user_row is None:
        raise UnknownUser(user_id)

    def select(table: str, columns: str) -> list[tuple]:
        return db.conn.execute(
            f"SELECT {columns} FROM {table} WHERE user_id = ? ORDER BY position", (user_id,)
        ).fetchall()

    with rows.gc_paused():
        return UserBundle.model_construct(
            user=rows.user_from(user_row),
            sessions=load_sessions(db, "user_id", user_id),
            preferences=[rows.preference_from(r) for r in select("preferences", rows.PREFERENCE_COLUMNS)],
            queries=[rows.query_from(r) for r in select("queries", rows.QUERY_COLUMNS)],
            attributes=[rows.attribute_from(r) for r in select("attributes", rows.ATTRIBUTE_COLUMNS)],
        )


def delete_user(db: Database, user_id: str) -> bool:
    with transaction(db):
        return _delete(db, "users", user_id)
