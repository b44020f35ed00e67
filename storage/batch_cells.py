"""``core.run.batch.CellStore`` on the ``batch_cells`` table (migration 005).

Reads use the caller's connection; writes go through the run recorder's single writer, so a
cell's row is always written after the run rows the recorder queued before it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlite_utils import Database

from core.run.grid import Cell
from storage.writer import Writer


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class BatchSummary:
    batch: str
    cells: int
    by_status: dict[str, int]
    updated_at: str


class SqliteCellStore:
    def __init__(self, db: Database, writer: Writer):
        self.db = db
        self.writer = writer

    def statuses(self, batch: str) -> dict[str, str]:
        return dict(self.db.execute("SELECT cell_key, status FROM batch_cells WHERE batch = ?", [batch]).fetchall())

    def started(self, batch: str, cell: Cell, run_id: str) -> None:
        spec, now = cell.spec.model_dump_json(), _now()

        def job(db: Database) -> None:
            db.execute(
                "INSERT INTO batch_cells (batch, cell_key, run_id, status, error, attempts, spec, updated_at) "
                "VALUES (?, ?, ?, 'running', NULL, 1, ?, ?) "
                "ON CONFLICT (batch, cell_key) DO UPDATE SET run_id = excluded.run_id, status = 'running', "
                "error = NULL, attempts = attempts + 1, updated_at = excluded.updated_at",
                (batch, cell.key, run_id, spec, now),
            )

        self.writer.post(job)

    def finished(self, batch: str, cell: Cell, run_id: str, status: str, error: str | None) -> None:
        now = _now()
        self.writer.post(
            lambda db: db.execute(
                "UPDATE batch_cells SET status = ?, error = ?, updated_at = ? WHERE batch = ? AND cell_key = ? AND run_id = ?",
                (status, error, now, batch, cell.key, run_id),
            )
        )


def list_batches(db: Database) -> list[BatchSummary]:
    out: dict[str, BatchSummary] = {}
    for batch, status, n, updated in db.execute(
        "SELECT batch, status, count(*), max(updated_at) FROM batch_cells GROUP BY batch, status ORDER BY batch"
    ):
        s = out.setdefault(batch, BatchSummary(batch, 0, {}, ""))
        s.by_status[status] = n
        out[batch] = BatchSummary(batch, s.cells + n, s.by_status, max(s.updated_at, updated))
    return list(out.values())
