"""The single writer thread: order, results, error propagation, draining on close, visibility."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass

import pytest

from storage.db import open_db
from storage.writer import Writer, WriterClosed, WriterError


def _setup(path):
    db = open_db(path)
    db.execute("CREATE TABLE IF NOT EXISTS log (n INTEGER UNIQUE, thread INTEGER)")
    db.close()


def _insert(n: int):
    def job(db):
        db.execute("INSERT INTO log (n, thread) VALUES (?, ?)", (n, threading.get_ident()))
        return n

    return job


def _rows(path) -> list[int]:
    db = open_db(path)
    try:
        return [r[0] for r in db.execute("SELECT n FROM log ORDER BY rowid")]
    finally:
        db.close()


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "w.db"
    _setup(p)
    return p


def _held(writer: Writer) -> threading.Event:
    """Block the writer on a job until the returned event is set, so later jobs queue up
    and are applied together in one batch."""
    release = threading.Event()
    writer.submit(lambda db: release.wait(60))  # its future is not needed; 60 s bounds a hang
    return release


def test_jobs_run_in_submission_order_on_the_writer_thread(path):
    with Writer(path) as writer:
        for n in range(1_000):
            writer.post(_insert(n))
        writer.flush()
        threads = {r[0] for r in writer.call(lambda db: db.execute("SELECT DISTINCT thread FROM log").fetchall())}
    assert _rows(path) == list(range(1_000))
    assert threads == {writer._thread.ident} and threading.get_ident() not in threads


def test_submit_returns_the_value_once_committed_and_other_connections_see_it(path):
    reader = open_db(path)
    with Writer(path) as writer:
        assert writer.submit(_insert(7)).result(30) == 7
        # committed: a separate connection (another thread's view) reads it immediately
        assert reader.execute("SELECT n FROM log").fetchall() == [(7,)]
        assert writer.call(lambda db: db.execute("SELECT count(*) FROM log").fetchone()[0]) == 1
    reader.close()


def test_a_failing_job_fails_alone_and_its_caller_sees_why(path):
    def insert_then_fail(db):
        db.execute("INSERT INTO log (n) VALUES (100)")
        raise ValueError("job went wrong")

    with Writer(path) as writer:
        release = _held(writer)
        before = writer.submit(_insert(1))
        failing = writer.submit(insert_then_fail)
        duplicate = writer.submit(_insert(1))  # UNIQUE violation
        after = writer.submit(_insert(2))
        release.set()
        assert before.result(30) == 1 and after.result(30) == 2
        with pytest.raises(ValueError, match="job went wrong"):
            failing.result(30)
        with pytest.raises(sqlite3.IntegrityError):
            duplicate.result(30)
    assert _rows(path) == [1, 2]  # the failing job's own insert was rolled back with it


def test_posted_errors_are_raised_by_flush_once(path):
    writer = Writer(path)
    writer.post(_insert(1))
    writer.post(_insert(1))
    writer.post(lambda db: 1 / 0)
    with pytest.raises(WriterError) as info:
        writer.flush()
    assert [type(e) for e in info.value.errors] == [sqlite3.IntegrityError, ZeroDivisionError]
    assert "IntegrityError" in str(info.value) and "1 more" in str(info.value)
    writer.flush()  # reported once, not again
    writer.post(lambda db: 1 / 0)
    with pytest.raises(WriterError):
        writer.close()  # close reports what flush did not
    assert _rows(path) == [1]


def test_close_drains_the_queue_then_refuses_new_jobs(path):
    writer = Writer(path, batch=7)
    release = _held(writer)
    futures = [writer.submit(_insert(n)) for n in range(200)]
    release.set()
    writer.close()
    assert all(f.done() for f in futures)
    assert _rows(path) == list(range(200))
    with pytest.raises(WriterClosed):
        writer.post(_insert(999))
    writer.close()  # idempotent


def test_a_transaction_destroying_error_fails_the_whole_batch_truthfully(path):
    db = open_db(path)
    db.execute("CREATE TABLE guarded (x)")
    db.execute(
        "CREATE TRIGGER guard BEFORE INSERT ON guarded WHEN new.x < 0 BEGIN SELECT RAISE(ROLLBACK, 'negative'); END"
    )
    db.close()
    with Writer(path) as writer:
        release = _held(writer)
        earlier = writer.submit(_insert(1))
        killer = writer.submit(lambda db: db.execute("INSERT INTO guarded VALUES (-1)"))
        later = writer.submit(_insert(2))
        release.set()
        with pytest.raises(sqlite3.IntegrityError, match="negative"):
            killer.result(30)
        with pytest.raises(RuntimeError, match="rolled back together"):
            earlier.result(30)  # its insert really was undone, and it says so
        assert later.result(30) == 2
    assert _rows(path) == [2]


def test_typed_commands(path):
    @dataclass
    class Insert:
        n: int

        def apply(self, db):
            db.execute("INSERT INTO log (n) VALUES (?)", (self.n,))
            return f"inserted {self.n}"

    with Writer(path) as writer:
        assert writer.submit(Insert(5)).result(30) == "inserted 5"
        writer.post(Insert(6))
    assert _rows(path) == [5, 6]


def test_many_producer_threads(path):
    with Writer(path) as writer:

        def produce(base):
            for i in range(100):
                writer.post(_insert(base + i))

        threads = [threading.Thread(target=produce, args=(k * 1000,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        writer.flush()
    rows = _rows(path)
    assert sorted(rows) == sorted(k * 1000 + i for k in range(4) for i in range(100))
    for k in range(4):  # each producer's own order is kept
        mine = [n for n in rows if k * 1000 <= n < (k + 1) * 1000]
        assert mine == sorted(mine)


def test_an_unopenable_database_fails_the_constructor(tmp_path):
    with pytest.raises(sqlite3.OperationalError):
        Writer(tmp_path)  # a directory, not a file


def test_exiting_with_an_exception_keeps_the_callers_error(path):
    with pytest.raises(KeyError):
        with Writer(path) as writer:
            writer.post(lambda db: 1 / 0)
            raise KeyError("caller's own problem")
