"""Provider batch jobs in SQLite: :class:`SqliteJobStore` records a job with its runs, gives open
jobs back as they were submitted, and stores a job's results exactly once; migration 010 upgrades
a database made before it without losing rows."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3

import pytest

from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import ModelParams, ModelSpec
from core.providers.batch_api import JobState
from core.run.grid import Cell, cell_key
from core.run.provider_batch import Collected, OpenJob, Submitted
from core.run.spec import ResponseFinished, RunSpec, RunStarted
from storage.batch_cells import SqliteCellStore
from storage.db import open_db
from storage.migrations import discover, migrate
from storage.provider_jobs import SqliteJobStore, jobs_of
from storage.writer import Writer

BATCH = "b1"
VIA = "anthropic-batch"
#: The cell's model, and the model as its one step called it (the step's own token limit).
MODEL = ModelSpec(id="anthropic:claude-haiku-4-5", params=ModelParams(temperature=0.7, seed=3))
STEP_MODEL = MODEL.model_copy(update={"params": ModelParams(temperature=0.7, seed=3, max_tokens=300)})


def rows(path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def cell(i: int) -> Cell:
    spec = RunSpec(user_id="maya", query_id=f"q{i}", models=[MODEL], label=BATCH)
    return Cell(cell_key(spec), spec)


def started(c: Cell, run_id: str) -> RunStarted:
    step = PromptStep(name="answer", messages=[Message(role="user", content=f"question {c.spec.query_id}")])
    return RunStarted(run_id, c.spec, PromptPlan(method="zero_shot", steps=[step]))


class Stores:
    """A database file with its writer, cell store and job store (what one process holds)."""

    def __init__(self, path):
        self.db = open_db(path)
        self.writer = Writer(path)
        self.cells = SqliteCellStore(self.db, self.writer)
        self.jobs = SqliteJobStore(self.db, self.writer)

    def close(self) -> None:
        self.writer.close()
        self.db.close()


@pytest.fixture
def path(tmp_path):
    return tmp_path / "jobs.db"


@pytest.fixture
def stores(path):
    s = Stores(path)
    yield s
    s.close()


async def submit(stores: Stores, n: int, job_id: str = "msgbatch_1") -> list[Submitted]:
    now = dt.datetime.now(dt.UTC).isoformat()
    runs = []
    for i in range(n):
        c, run_id = cell(i), f"run{i}"
        assert await stores.cells.claim(BATCH, c, run_id, retry_failed=False, since=now)
        submitted = Submitted(run_id, c.key, f"resp{i}", "answer", f"hash{i}", STEP_MODEL)
        runs.append((c, started(c, run_id), submitted))
    await stores.jobs.submitted(BATCH, VIA, job_id, MODEL, runs)
    return [s for _, _, s in runs]


def outcome(request: Submitted, ok: bool) -> Collected:
    response = ResponseFinished(
        run_id=request.run_id,
        response_id=request.response_id,
        slot=0,
        step=request.step,
        is_final_step=True,
        status="ok" if ok else "error",
        text=f"answer of {request.run_id}" if ok else "",
        error=None if ok else "invalid_request_error: refused",
        ttft_ms=None,
        duration_ms=None,
        input_tokens=1000,
        output_tokens=20,
        cost_usd=0.001,
        cache_hit=False,
        cache_read_tokens=800,
        cache_write_tokens=100,
        via=VIA,
    )
    return Collected(request, response, "ok" if ok else "error", "ok" if ok else "error")


async def test_open_jobs_give_back_each_request_with_the_model_it_called(stores, path):
    requests = await submit(stores, 3)
    assert stores.jobs.open_jobs(BATCH) == [OpenJob("msgbatch_1", VIA, MODEL, requests)]
    (job,) = stores.jobs.open_jobs(BATCH)
    assert job.model == MODEL and all(r.model == STEP_MODEL for r in job.requests)
    assert stores.jobs.open_jobs("another-batch") == []

    assert rows(path, "SELECT id, status FROM runs ORDER BY id") == [(f"run{i}", "submitted") for i in range(3)]
    assert rows(path, "SELECT DISTINCT status, error FROM batch_cells") == [
        ("submitted", f"waiting in {VIA} job msgbatch_1")
    ]
    assert rows(path, "SELECT count(*) FROM prompts") == [(3,)], "each run's prompt is stored with the job"
    assert rows(path, "SELECT count(*) FROM responses") == [(0,)]


async def test_checked_keeps_the_last_state_seen(stores):
    await submit(stores, 1)
    await stores.jobs.checked("msgbatch_1", JobState("msgbatch_1", "in_progress", False, "1 processing"))
    (job,) = jobs_of(stores.db, BATCH)
    assert (job["status"], job["counts"], job["requests"], job["collected_at"]) == (
        "in_progress",
        "1 processing",
        1,
        None,
    )
    assert job["checked_at"] is not None


async def test_collected_stores_a_jobs_results_once_even_when_called_twice(stores, path):
    requests = await submit(stores, 3)
    (job,) = stores.jobs.open_jobs(BATCH)
    outcomes = [outcome(requests[0], True), outcome(requests[1], False), outcome(requests[2], True)]

    assert await stores.jobs.collected(job, outcomes) == ["run0", "run1", "run2"]
    assert await stores.jobs.collected(job, outcomes) == [], "a second collection stores nothing"

    assert stores.jobs.open_jobs(BATCH) == []
    assert rows(path, "SELECT count(*) FROM responses") == [(3,)]
    assert rows(
        path,
        "SELECT run_id, status, via, cache_read_tokens, cache_write_tokens, model, params FROM responses ORDER BY run_id",
    ) == [
        (f"run{i}", st, VIA, 800, 100, MODEL.id, STEP_MODEL.params.model_dump_json())
        for i, st in enumerate(["ok", "error", "ok"])
    ]
    assert rows(path, "SELECT id, status FROM runs ORDER BY id") == [("run0", "ok"), ("run1", "error"), ("run2", "ok")]
    statuses = rows(path, "SELECT run_id, status, error FROM batch_cells ORDER BY run_id")
    assert statuses == [("run0", "ok", None), ("run1", "error", "invalid_request_error: refused"), ("run2", "ok", None)]


async def test_two_processes_collecting_one_job_store_its_results_once(path, stores):
    requests = await submit(stores, 4)
    other = Stores(path)  # a second process: its own connection and writer
    try:
        (job,) = stores.jobs.open_jobs(BATCH)
        (same,) = other.jobs.open_jobs(BATCH)
        outcomes = [outcome(r, True) for r in requests]
        first, second = await asyncio.gather(stores.jobs.collected(job, outcomes), other.jobs.collected(same, outcomes))
    finally:
        other.close()
    assert sorted([first, second], key=len) == [[], [r.run_id for r in requests]]
    assert rows(path, "SELECT count(*), count(DISTINCT run_id) FROM responses") == [(4, 4)]


async def test_jobs_are_listed_oldest_first_and_only_the_uncollected_are_open(stores):
    first = await submit(stores, 1, "msgbatch_a")
    (job_a,) = stores.jobs.open_jobs(BATCH)
    await stores.jobs.collected(job_a, [outcome(first[0], True)])
    now = dt.datetime.now(dt.UTC).isoformat()
    c = cell(7)
    assert await stores.cells.claim(BATCH, c, "run7", retry_failed=False, since=now)
    later = Submitted("run7", c.key, "resp7", "answer", "hash7", STEP_MODEL)
    await stores.jobs.submitted(BATCH, VIA, "msgbatch_b", MODEL, [(c, started(c, "run7"), later)])
    assert [j["id"] for j in jobs_of(stores.db, BATCH)] == ["msgbatch_a", "msgbatch_b"]
    assert [j.id for j in stores.jobs.open_jobs(BATCH)] == ["msgbatch_b"]


def test_migration_010_upgrades_a_database_made_before_it_keeping_its_rows(tmp_path):
    path = tmp_path / "old.db"
    before = [m for m in discover() if m.version < 10]
    assert [m.name for m in discover() if m.version == 10] == ["m010_provider_batches"]
    old = open_db(path, migrate=False)
    migrate(old, before)
    old.conn.executescript(
        """
        INSERT INTO runs (id, created_at, user_id, query_id, context, seed, method, spec, plan, status)
        VALUES ('run_old', '2025-01-01', 'maya', 'q1', 'simple', 0, 'zero_shot', '{}', '{}', 'ok');
        INSERT INTO prompts (run_id, step_index, step, messages, tokens, sha256)
        VALUES ('run_old', 0, 'answer', '[]', 3, 'x');
        INSERT INTO responses (id, run_id, slot, model, provider, is_demo, params, step, is_final, request_hash,
                               text, status, input_tokens, output_tokens, started_at, updated_at)
        VALUES ('resp_old', 'run_old', 0, 'openai:gpt-4o', 'openai', 0, '{}', 'answer', 1, 'h', 'an answer', 'ok',
                10, 2, '2025-01-01', '2025-01-01');
        INSERT INTO judgments (run_id, response_id, kind, dimension, score, parse_ok, judge_model, created_at)
        VALUES ('run_old', 'resp_old', 'rubric', 'alignment', 4, 1, 'demo:heuristic', '2025-01-01');
        INSERT INTO batch_cells (batch, cell_key, run_id, status, spec, updated_at)
        VALUES ('b_old', 'k1', 'run_old', 'ok', '{}', '2025-01-01');
        """
    )
    old.conn.commit()
    with pytest.raises(sqlite3.IntegrityError):
        old.execute("UPDATE runs SET status = 'submitted' WHERE id = 'run_old'")
    old.close()

    db = open_db(path)  # applies 010
    assert [r[0] for r in db.execute("SELECT version FROM migrations")][-1] == discover()[-1].version
    db.close()
    assert rows(path, "SELECT id, status FROM runs") == [("run_old", "ok")]
    assert rows(path, "SELECT count(*) FROM prompts") == [(1,)]
    assert rows(path, "SELECT count(*) FROM judgments") == [(1,)], "widening the checks must not cascade deletes"
    assert rows(path, "SELECT id, text, via, cache_read_tokens, cache_write_tokens FROM responses") == [
        ("resp_old", "an answer", "stream", None, None)
    ]
    assert rows(path, "SELECT batch, status FROM batch_cells") == [("b_old", "ok")]
    assert rows(path, "SELECT count(*) FROM provider_jobs") == [(0,)]
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]

    conn = sqlite3.connect(path)  # a fresh connection takes the widened checks, and still the old limits
    try:
        conn.execute("UPDATE runs SET status = 'submitted' WHERE id = 'run_old'")
        conn.execute("UPDATE batch_cells SET status = 'submitted' WHERE batch = 'b_old'")
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("UPDATE runs SET status = 'bogus' WHERE id = 'run_old'")
        conn.commit()
    finally:
        conn.close()
    assert rows(path, "SELECT status FROM runs") == [("submitted",)]
