"""005: batch cells — one row per (batch, cell key), so a grid can be resumed.

A cell key is the sha256 of a run's spec without its run id or label (``core.run.batch.cell_key``).
``run_id`` is the latest run made for the cell; earlier attempts stay in ``runs`` (their
``label`` is the batch name) and ``attempts`` counts them. No foreign key to ``runs``: deleting a
run must not make the batch forget that the cell was tried.
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE batch_cells (
    batch       TEXT NOT NULL,
    cell_key    TEXT NOT NULL,
    run_id      TEXT,
    status      TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending','running','ok','partial','error','cancelled','interrupted')),
    error       TEXT,
    attempts    INTEGER NOT NULL DEFAULT 0,
    spec        TEXT NOT NULL,               -- JSON RunSpec of the cell (label = batch name)
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (batch, cell_key)
);
CREATE INDEX batch_cells_by_run ON batch_cells(run_id);
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
