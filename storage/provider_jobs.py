"""``core.run.provider_batch.JobStore`` on the ``provider_jobs`` tables (migration 010).

Writes go through the run recorder's single writer, each as one job (one savepoint): a job is
recorded together with its runs and cells, and its results together with the mark that it was
collected. The check of that mark runs inside the same write, under SQLite's write lock, so two
processes collecting one job store its answers once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Sequence
from typing import TypeVar

from sqlite_utils import Database

from core.providers.base import ModelSpec
from core.providers.batch_api import JobState, Via
from core.run.grid import Cell
from core.run.provider_batch import Collected, OpenJob, Submitted
from core.run.spec import ResponseStarted, RunStarted
from storage.recorder import finish_response, insert_response, insert_run
from storage.writer import Writer

T = TypeVar("T")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


class SqliteJobStore:
    def __init__(self, db: Database, writer: Writer):
        self.db = db
        self.writer = writer

    async def _write(self, job: Callable[[Database], T]) -> T:
        return await asyncio.shield(asyncio.wrap_future(self.writer.submit(job)))

    def open_jobs(self, batch: str) -> list[OpenJob]:
        jobs = self.db.execute(
            "SELECT id, via, model FROM provider_jobs WHERE batch = ? AND collected_at IS NULL ORDER BY submitted_at",
            [batch],
        ).fetchall()
        out = []
        for job_id, via, model in jobs:
            rows = self.db.execute(
                "SELECT run_id, cell_key, response_id, step, request_hash, model FROM provider_job_requests "
                "WHERE job_id = ? ORDER BY rowid",
                [job_id],
            ).fetchall()
            requests = [Submitted(r[0], r[1], r[2], r[3], r[4], ModelSpec.model_validate_json(r[5])) for r in rows]
            out.append(OpenJob(job_id, via, ModelSpec.model_validate_json(model), requests))
        return out

    async def submitted(
        self, batch: str, via: Via, job_id: str, model: ModelSpec, runs: Sequence[tuple[Cell, RunStarted, Submitted]]
    ) -> None:
        now = _now()

        def job(db: Database) -> None:
            db.table("provider_jobs").insert(
                {
                    "id": job_id,
                    "batch": batch,
                    "via": via,
                    "model": model.model_dump_json(),
                    "requests": len(runs),
                    "status": "submitted",
                    "submitted_at": now,
                }
            )
            for cell, started, request in runs:
                insert_run(db, started)
                db.execute("UPDATE runs SET status = 'submitted' WHERE id = ?", [started.run_id])
                db.table("provider_job_requests").insert(
                    {
                        "job_id": job_id,
                        "run_id": request.run_id,
                        "cell_key": request.cell_key,
                        "response_id": request.response_id,
                        "step": request.step,
                        "request_hash": request.request_hash,
                        "model": request.model.model_dump_json(),
                    }
                )
                db.execute(
                    "UPDATE batch_cells SET status = 'submitted', error = ?, updated_at = ? "
                    "WHERE batch = ? AND cell_key = ? AND run_id = ?",
                    [f"waiting in {via} job {job_id}", now, batch, cell.key, started.run_id],
                )

        await self._write(job)

    async def checked(self, job_id: str, state: JobState) -> None:
        def job(db: Database) -> None:
            db.execute(
                "UPDATE provider_jobs SET status = ?, counts = ?, error = ?, checked_at = ? WHERE id = ?",
                [state.status, state.counts, state.error, _now(), job_id],
            )

        await self._write(job)

    async def collected(self, job: OpenJob, outcomes: Sequence[Collected]) -> list[str]:
        def write(db: Database) -> list[str]:
            (done,) = db.execute("SELECT collected_at FROM provider_jobs WHERE id = ?", [job.id]).fetchone()
            if done is not None:
                return []  # another process stored them first
            now = _now()
            stored = []
            for o in outcomes:
                r, req = o.response, o.request
                started = ResponseStarted(r.run_id, r.response_id, req.model, 0, req.step, True, req.request_hash)
                insert_response(db, started)
                finish_response(db, r)
                db.execute("UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", [o.run_status, now, r.run_id])
                db.execute(
                    "UPDATE batch_cells SET status = ?, error = ?, updated_at = ? WHERE cell_key = ? AND run_id = ?",
                    [o.cell_status, r.error, now, req.cell_key, r.run_id],
                )
                stored.append(r.run_id)
            db.execute("UPDATE provider_jobs SET collected_at = ? WHERE id = ?", [now, job.id])
            return stored

        return await self._write(write)


def jobs_of(db: Database, batch: str) -> list[dict]:
    """Every provider job of a batch, newest last: id, via, status, counts, requests, collected_at."""
    rows = db.execute(
        "SELECT id, via, status, counts, requests, error, submitted_at, checked_at, collected_at "
        "FROM provider_jobs WHERE batch = ? ORDER BY submitted_at",
        [batch],
    ).fetchall()
    keys = ("id", "via", "status", "counts", "requests", "error", "submitted_at", "checked_at", "collected_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]
