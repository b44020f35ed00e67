"""Filler pools: user-independent sessions stored beside user sessions (``sessions.pool_id``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from core.history.filler import UnknownFillerPool, default_pool_ids
from core.model import FillerPool
from storage.rows import gc_paused
from storage.sessions import load_sessions


class UnknownPool(LookupError):
    def __init__(self, pool_id: str):
        super().__init__(f"no filler pool {pool_id!r} in the database")
        self.pool_id = pool_id


@dataclass(frozen=True)
class PoolSummary:
    id: str
    name: str
    source: str
    sessions: int
    chars: int


def list_filler_pools(db: Database) -> list[PoolSummary]:
    sql = """
        SELECT f.id, f.name, f.source, count(s.pk), coalesce(sum(s.chars), 0)
        FROM filler_pools f LEFT JOIN sessions s ON s.pool_id = f.id
        GROUP BY f.id ORDER BY f.id
    """
    return [PoolSummary(*r) for r in db.conn.execute(sql)]


def check_pool_ids(db: Database, pool_ids: list[str] | None) -> None:
    """Raise ``UnknownFillerPool`` (naming the known pools) when an id is not stored."""
    known = [r[0] for r in db.conn.execute("SELECT id FROM filler_pools ORDER BY id")]
    missing = [i for i in pool_ids or [] if i not in known]
    if missing:
        raise UnknownFillerPool(missing, known)


@dataclass(frozen=True)
class PoolChoices:
    """What a pool picker offers: every stored pool, and the ones a user draws from by default."""

    pools: list[PoolSummary]
    default: list[str]


def pool_choices(db: Database, user_source: str, context: str = "normal") -> PoolChoices:
    pools = list_filler_pools(db)
    return PoolChoices(pools, default_pool_ids(user_source, pools, context))


def load_filler_pool(db: Database, pool_id: str) -> FillerPool:
    row = db.conn.execute("SELECT id, name, source FROM filler_pools WHERE id = ?", (pool_id,)).fetchone()
    if row is None:
        raise UnknownPool(pool_id)
    with gc_paused():
        sessions = load_sessions(db, "pool_id", pool_id)
    return FillerPool.model_construct(id=row[0], name=row[1], source=row[2], sessions=sessions)


def load_filler_pools(db: Database) -> list[FillerPool]:
    """Every stored pool, ordered by id."""
    return [load_filler_pool(db, r[0]) for r in db.conn.execute("SELECT id FROM filler_pools ORDER BY id").fetchall()]
