"""``core.run.batch.CellStore`` on the ``batch_cells`` table (migration 005).

Reads use the caller's connection; writes go through the run recorder's single writer, so a
cell's row is always written after the run rows the recorder queued before it.

A cell is claimed by one upsert whose ``WHERE`` admits only a claimable row (never tried, stopped,
interrupted, failed before this batch started when retrying, or ``running`` for a process that is
gone); the row count says whether this process got it. A running claim names its owner
(``claimed by pid N on HOST`` in ``error``, which is otherwise empty while running), so a claim
left by a killed process is taken over on resume. A cell whose answer could not be written is
set back to ``interrupted`` (or stays ``running`` for a dead owner) and runs again on resume.

A cell whose final answer was stored although another write of its run failed (its status, a
score, the run's end; or its process died before marking it) is settled instead of run again:
the cell becomes ``ok`` and so does its run row, which would otherwise say ``interrupted``
(:meth:`SqliteCellStore.settle`, when a batch opens, and at each claim).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import re
import socket
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from sqlite_utils import Database

from core.run.grid import Cell
from storage.writer import Writer


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


_OWNER = re.compile(r"^claimed by pid (\d+) on (.*)$")


def owner_note() -> str:
    return f"claimed by pid {os.getpid()} on {socket.gethostname()}"


def claim_is_dead(note: str | None) -> bool:
    """A running cell's owner is gone: a process of this host that no longer exists.

    Claims from other hosts are kept (their liveness cannot be checked from here); rows written
    before claims named their owner count as dead, as they always did.
    """
    m = _OWNER.match(note or "")
    if m is None:
        return True
    pid, host = int(m.group(1)), m.group(2)
    if host != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    return False


_CLAIM = """
INSERT INTO batch_cells (batch, cell_key, run_id, status, error, attempts, spec, updated_at)
VALUES (:batch, :key, :run_id, 'running', :owner, 1, :spec, :now)
ON CONFLICT (batch, cell_key) DO UPDATE SET run_id = excluded.run_id, status = 'running',
    error = excluded.error, attempts = attempts + 1, updated_at = excluded.updated_at
WHERE batch_cells.status IN ('pending', 'cancelled', 'interrupted')
   OR (batch_cells.status = 'running' AND prefscope_claim_dead(batch_cells.error))
   OR (:retry AND batch_cells.status IN ('error', 'partial') AND batch_cells.updated_at < :since)
"""

#: Cells whose final answer is stored though the cell is not marked done: its owner died before
#: marking it (``running`` under a dead claim), or another write of its run failed
#: (``interrupted``). Re-running them would store their answer twice.
_SETTLEABLE = """
batch_cells.batch = :batch AND (:key IS NULL OR batch_cells.cell_key = :key)
AND (batch_cells.status = 'interrupted'
     OR (batch_cells.status = 'running' AND prefscope_claim_dead(batch_cells.error)))
AND EXISTS (SELECT 1 FROM responses WHERE responses.run_id = batch_cells.run_id
            AND responses.is_final = 1 AND responses.status = 'ok')
"""
#: Their run rows say what is stored: the answer is, so the run is ``ok`` (a batch cell's run has
#: one model), not the ``running``/``interrupted`` its lost last write left.
_SETTLE_RUNS = f"""
UPDATE runs SET status = 'ok', finished_at = coalesce(finished_at, :now)
WHERE status IN ('running', 'interrupted') AND id IN (SELECT batch_cells.run_id FROM batch_cells WHERE {_SETTLEABLE})
"""
_SETTLE_CELLS = f"UPDATE batch_cells SET status = 'ok', error = NULL, updated_at = :now WHERE {_SETTLEABLE}"


def settle(db: Database, batch: str, key: str | None = None) -> int:
    """Mark the batch's settleable cells (one cell: ``key``) and their runs ``ok``; how many cells."""
    db.conn.create_function("prefscope_claim_dead", 1, claim_is_dead)
    params = {"batch": batch, "key": key, "now": _now()}
    db.conn.execute(_SETTLE_RUNS, params)
    return db.conn.execute(_SETTLE_CELLS, params).rowcount


@dataclass(frozen=True)
class BatchSummary:
    batch: str
    cells: int
    by_status: dict[str, int]
    updated_at: str


class SqliteCellStore:
    """``lost(run_id)`` (the recorder's) says why a run's writes failed, or None if all were stored."""

    def __init__(self, db: Database, writer: Writer, lost: Callable[[str], str | None] = lambda run_id: None):
        self.db = db
        self.writer = writer
        self.lost = lost
        #: Run id -> outcome status, for cells whose answer or status could not be stored.
        self.unstored_runs: dict[str, str] = {}
        self._lock = threading.Lock()

    def settle(self, batch: str) -> int:
        """Settle the batch's cells whose answer is stored but which are not marked done (see
        :func:`settle`), before its cells are planned; how many were."""
        return self.writer.call(lambda db: settle(db, batch))

    def statuses(self, batch: str) -> dict[str, str]:
        return dict(self.db.execute("SELECT cell_key, status FROM batch_cells WHERE batch = ?", [batch]).fetchall())

    async def claim(self, batch: str, cell: Cell, run_id: str, *, retry_failed: bool, since: str) -> bool:
        params = {
            "batch": batch,
            "key": cell.key,
            "run_id": run_id,
            "owner": owner_note(),
            "spec": cell.spec.model_dump_json(),
            "now": _now(),
            "retry": int(retry_failed),
            "since": since,
        }

        def job(db: Database) -> bool:
            settle(db, batch, cell.key)  # stored meanwhile by a process that then died: done, not taken
            return db.conn.execute(_CLAIM, params).rowcount == 1

        # Awaited, not blocking: a busy database must not stall the runs already in flight. Shielded:
        # a cancelled caller still gets the claim written, and releases it with ``finished``.
        return await asyncio.shield(asyncio.wrap_future(self.writer.submit(job)))

    def finished(self, batch: str, cell: Cell, run_id: str, status: str, error: str | None) -> None:
        now = _now()

        def job(db: Database) -> bool:
            lost = self.lost(run_id)
            st, err = (
                (status, error)
                if lost is None
                else ("interrupted", f"its answer could not be stored ({lost}); it runs again on resume")
            )
            db.execute(
                "UPDATE batch_cells SET status = ?, error = ?, updated_at = ? WHERE batch = ? AND cell_key = ? AND run_id = ?",
                (st, err, now, batch, cell.key, run_id),
            )
            return lost is None

        def counted(f: Future) -> None:
            # A failed status write leaves the claim 'running' under this (soon gone) process: redone on resume.
            stored = f.exception() is None and f.result() and self.lost(run_id) is None
            if not stored and status not in ("cancelled", "pending"):
                with self._lock:
                    self.unstored_runs[run_id] = status

        self.writer.submit(job).add_done_callback(counted)

    def unstored(self) -> Counter[str]:
        """Outcome status -> cells whose answer is not in the database. A cell whose final answer
        was stored but whose status write was refused is not among them: resume settles it."""
        with self._lock:
            runs = dict(self.unstored_runs)
        if not runs:
            return Counter()
        marks = ",".join("?" * len(runs))
        stored = {
            run_id
            for (run_id,) in self.db.execute(
                f"SELECT run_id FROM responses WHERE is_final = 1 AND status = 'ok' AND run_id IN ({marks})",
                list(runs),
            )
        }
        return Counter(status for run_id, status in runs.items() if run_id not in stored)


def list_batches(db: Database) -> list[BatchSummary]:
    out: dict[str, BatchSummary] = {}
    for batch, status, n, updated in db.execute(
        "SELECT batch, status, count(*), max(updated_at) FROM batch_cells GROUP BY batch, status ORDER BY batch"
    ):
        s = out.setdefault(batch, BatchSummary(batch, 0, {}, ""))
        s.by_status[status] = n
        out[batch] = BatchSummary(batch, s.cells + n, s.by_status, max(s.updated_at, updated))
    return list(out.values())
