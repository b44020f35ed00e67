"""The single writer: one thread that owns its own connection and applies writes in order.

Everything that writes while other work runs (the run engine checkpointing streaming text, judges
storing scores) hands the writer a job instead of touching a connection from its own thread::

    with Writer(db_path) as writer:
        writer.post(lambda db: db.table("responses").update(rid, {"text": partial}))   # fire and forget
        pk = writer.submit(lambda db: db.table("runs").insert(row).last_pk).result()   # wait for a value
        writer.flush()                                                                  # all done, errors raised

A job is a callable taking the writer's ``Database``, or a command object with ``apply(db)``.
Jobs run one at a time in submission order. The writer groups the jobs waiting in its queue into
one transaction (up to ``batch`` jobs), each inside its own savepoint: a failing job is rolled
back alone and the others still commit. A job's outcome is known only after the COMMIT, so
``submit()``'s future resolves then; if the COMMIT itself fails, every job of that batch fails.
An error that ends the whole transaction (a full disk, a ``RAISE(ROLLBACK)`` trigger) fails the
jobs run so far (:class:`RolledBack`), and their futures resolve before any later job runs, so
a later job that asks whether an earlier write was stored is told the truth.
While another connection holds the write lock, a batch is retried with backoff for up to
``deadline_s`` (far longer than anyone normally holds the lock); only then do its jobs fail.

Errors are never swallowed: ``submit()`` delivers a job's exception through its future;
``post()`` jobs have no future, so their exceptions are kept and raised (as :class:`WriterError`)
by the next ``flush()`` or ``close()``. ``close()`` runs every job queued before it, then stops.
Jobs run on the writer thread: they must not block on the caller (no ``.result()`` of another job
inside a job) and must not ``await``.
"""

from __future__ import annotations

import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from sqlite_utils import Database

from storage.db import BUSY_TIMEOUT_MS, open_db

if TYPE_CHECKING:
    from storage.page_check import PageCheck

T = TypeVar("T")

#: How long a batch of writes keeps retrying while the database is busy (``write_deadline_s``).
WRITE_DEADLINE_S = 60.0
_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}


def is_busy(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED (any extended code): another connection holds the lock."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.OperationalError) and code is not None and code & 0xFF in _BUSY_CODES


@runtime_checkable
class Command(Protocol):
    """A typed write: a dataclass with the data and an ``apply`` that writes it."""

    def apply(self, db: Database) -> Any: ...


Job = Callable[[Database], Any] | Command


class WriterError(RuntimeError):
    """One or more posted (fire-and-forget) jobs failed; ``errors`` holds their exceptions."""

    def __init__(self, errors: list[BaseException], message: str | None = None):
        self.errors = errors
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(message or f"a queued database write failed: {type(first).__name__}: {first}{more}")


class WriterClosed(RuntimeError):
    pass


class RolledBack(RuntimeError):
    """A job that succeeded but was undone with its transaction by a later job's error (its
    ``__cause__``: a full disk, a ``RAISE(ROLLBACK)`` trigger)."""

    def __init__(self, cause: BaseException):
        super().__init__(f"rolled back together with a failing job: {type(cause).__name__}: {cause}")
        self.__cause__ = cause


_STOP = object()


class Writer:
    """A dedicated writer thread with its own connection to ``path`` (default: the configured DB)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        batch: int = 200,
        name: str = "prefscope-writer",
        deadline_s: float = WRITE_DEADLINE_S,
        after: PageCheck | None = None,
    ):
        """``after``: a page check still running (``storage.page_check``); the writer thread waits
        for it to pass before it opens the file, and a failed check is raised here."""
        self._queue: queue.Queue = queue.Queue()
        self._batch = batch
        #: Read by the writer thread before each batch, so it may be changed after start.
        self.deadline_s = deadline_s
        self._errors: list[BaseException] = []
        self._errors_lock = threading.Lock()
        self._closed = False
        self._close_lock = threading.Lock()
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._run, args=(path, ready, after), name=name, daemon=True)
        self._thread.start()
        ready.result()  # re-raises if the database could not be opened

    # -- caller side -------------------------------------------------------------------
    def submit(self, job: Job) -> Future:
        """Queue a job; the future gives its return value (or exception) once committed."""
        future: Future = Future()
        self._put((job, future))
        return future

    def post(self, job: Job) -> None:
        """Queue a job without waiting; a failure is raised by the next ``flush()`` / ``close()``."""
        self._put((job, None))

    def call(self, job: Callable[[Database], T]) -> T:
        """Run a job on the writer and wait for its result."""
        return self.submit(job).result()

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every job queued so far is committed; raise WriterError for failed posts."""
        # The marker's own outcome is moot: if its batch failed, the jobs in it report that.
        self.submit(lambda db: None).exception(timeout)
        self._raise_posted_errors()

    def close(self, timeout: float | None = None) -> None:
        """Run what is queued, stop the thread, close its connection; raise failed posts' errors."""
        with self._close_lock:
            if not self._closed:
                self._closed = True
                self._queue.put(_STOP)
        self._thread.join(timeout)
        self._raise_posted_errors()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> Writer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            # Do not mask the caller's exception with a queued write's.
            with self._close_lock:
                if not self._closed:
                    self._closed = True
                    self._queue.put(_STOP)
            self._thread.join()

    def _put(self, item: tuple) -> None:
        with self._close_lock:
            if self._closed:
                raise WriterClosed("the writer is closed; no more jobs are accepted")
            self._queue.put(item)

    def _raise_posted_errors(self) -> None:
        with self._errors_lock:
            errors, self._errors = self._errors, []
        if errors:
            raise WriterError(errors)

    # -- writer thread -----------------------------------------------------------------
    def _run(self, path: str | Path | None, ready: Future, after: PageCheck | None) -> None:
        try:
            if after is not None:
                after.wait()
            db = open_db(path, verify=False)  # the workbench that made this writer checked the pages
        except BaseException as exc:  # reported to the constructor, which re-raises it
            ready.set_exception(exc)
            return
        ready.set_result(None)
        try:
            stop = False
            while not stop:
                items = [self._queue.get()]
                while len(items) < self._batch:
                    try:
                        items.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                if items[-1] is _STOP:  # close() is always the last thing queued
                    items.pop()
                    stop = True
                if items:
                    self._apply_batch(db, items)
        finally:
            db.close()

    def _apply_batch(self, db: Database, items: list[tuple]) -> None:
        while items:
            outcomes = self._attempt_until_deadline(db, items)
            # An error that ended the transaction ends the attempt: its jobs' outcomes are
            # delivered before the rest of the batch runs in a transaction of its own.
            self._deliver(items[: len(outcomes)], outcomes)
            items = items[len(outcomes) :]

    def _attempt_until_deadline(self, db: Database, items: list[tuple]) -> list[tuple[bool, Any]]:
        deadline = time.monotonic() + self.deadline_s
        pause = 0.05
        while True:
            # Each attempt waits at most what is left of the deadline inside SQLite's busy handler.
            left_ms = max(1, int((deadline - time.monotonic()) * 1000))
            db.conn.execute(f"PRAGMA busy_timeout = {min(BUSY_TIMEOUT_MS, left_ms)}")
            outcomes = self._attempt(db, items)
            busy = [v for ok, v in outcomes if not ok and is_busy(v)]
            if len(busy) < len(outcomes) or time.monotonic() + pause > deadline:
                return outcomes
            time.sleep(pause)  # BEGIN or COMMIT was refused: nothing of this batch is stored, try again
            pause = min(pause * 2, 1.0)

    def _deliver(self, items: list[tuple], outcomes: list[tuple[bool, Any]]) -> None:
        for (_, future), (ok, value) in zip(items, outcomes):
            if future is None:
                if not ok:
                    with self._errors_lock:
                        self._errors.append(value)
            elif future.cancelled():
                pass  # the caller gave up waiting; the job ran anyway and its outcome is moot
            elif ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def _attempt(self, db: Database, items: list[tuple]) -> list[tuple[bool, Any]]:
        """Run ``items`` in one transaction; their outcomes, or those of a prefix of them when a
        job's error ended the transaction (that job last)."""
        outcomes: list[tuple[bool, Any]] = []
        try:
            db.conn.execute("BEGIN IMMEDIATE")
            for n, (job, _) in enumerate(items):
                savepoint = f"job{n}"
                db.conn.execute(f"SAVEPOINT {savepoint}")
                try:
                    value = job.apply(db) if isinstance(job, Command) else job(db)
                except BaseException as exc:  # the job's failure is its caller's to see
                    if not db.conn.in_transaction:
                        # The error ended the whole transaction (a full disk, a RAISE(ROLLBACK)
                        # trigger): the earlier jobs of this batch were rolled back with it.
                        return [(False, RolledBack(exc)) if ok else (ok, v) for ok, v in outcomes] + [(False, exc)]
                    db.conn.execute(f"ROLLBACK TO {savepoint}")
                    db.conn.execute(f"RELEASE {savepoint}")
                    outcomes.append((False, exc))
                else:
                    db.conn.execute(f"RELEASE {savepoint}")
                    outcomes.append((True, value))
            db.conn.execute("COMMIT")
        except BaseException as exc:  # BEGIN/COMMIT failed: nothing of this batch is stored
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            outcomes = [(False, exc)] * len(items)
        return outcomes
