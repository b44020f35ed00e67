"""Can this database take writes? Asked before a command makes its first paid call.

First the free space: the disk holding the database must have room for the rows the command
will write (:func:`bytes_needed`, a generous estimate), or it is refused without writing
anything. Then the probe writes a small table through the writer (the connection that will store
the answers), with a blob big enough to need new pages, and drops it in the same transaction: a
read-only file or folder, a full disk (or a reached ``max_page_count``) or a lock held past the
write deadline fail here instead of after every model call was paid for.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from storage.writer import RolledBack, Writer, WriterError, is_busy

PROBE_BYTES = 64 * 1024

#: What one stored answer may take on disk, generously: its response row and response-cache
#: record (the text twice, with the timed chunks), its judgments, the run's row and prompt rows,
#: and the whole 4 KiB pages SQLite appends to the write-ahead log for every commit touching them.
#: (A stored demo run measures about 7 KiB; new prompt messages are stored once per text.)
BYTES_PER_ANSWER = 64 * 1024
#: Room any write needs before the first answer: the probe's own pages and the write-ahead log
#: growing between checkpoints.
BASE_BYTES = 1024 * 1024


class NotWritable(RuntimeError):
    """The database refuses writes; the message says why, in the operator's terms."""


def _probe(db: Database) -> None:
    db.execute("CREATE TABLE prefscope_write_probe (b BLOB)")
    db.execute("INSERT INTO prefscope_write_probe VALUES (zeroblob(?))", (PROBE_BYTES,))
    db.execute("DROP TABLE prefscope_write_probe")


def reason(exc: BaseException) -> str:
    """Why a write failed, in words an operator can act on."""
    exc = _cause(exc)
    code = getattr(exc, "sqlite_errorcode", None)
    base = code & 0xFF if code is not None else None
    if base == sqlite3.SQLITE_READONLY or "readonly" in str(exc):
        return "the database file or its folder is read-only"
    if base == sqlite3.SQLITE_FULL:
        return "the disk is full (or the database reached its size limit)"
    if base == sqlite3.SQLITE_IOERR:  # a write past a file-size limit (EFBIG) or a failing disk
        return f"the disk refused the write ({exc}: full, a file-size limit reached, or failing)"
    if is_busy(exc):
        return "another process kept the database locked past the write deadline (write_deadline_s)"
    return f"{type(exc).__name__}: {exc}"


def _cause(exc: BaseException) -> BaseException:
    """The error that failed a write: what undid a rolled-back one, the first of a WriterError's."""
    while True:
        if isinstance(exc, RolledBack) and exc.__cause__ is not None:
            exc = exc.__cause__
        elif isinstance(exc, WriterError) and exc.errors:
            exc = exc.errors[0]
        else:
            return exc


def bytes_needed(answers: int) -> int:
    """Free bytes a command storing ``answers`` answers asks for (see :data:`BYTES_PER_ANSWER`)."""
    return BASE_BYTES + max(0, answers) * BYTES_PER_ANSWER


def free_bytes(db_path: str | Path) -> int | None:
    """Bytes an unprivileged writer may still use on the disk holding ``db_path`` (None: unknown)."""
    if str(db_path) == ":memory:":
        return None
    folder = Path(db_path).expanduser().resolve().parent  # the disk of the real file, not of a link to it
    try:
        st = os.statvfs(folder)
    except (OSError, AttributeError):  # no such folder yet (it is created at open), or no statvfs
        return None
    return st.f_bavail * st.f_frsize


def _size(n: int) -> str:
    if n < 1024 * 1024:
        return f"{n / 1024:,.0f} KiB"
    if n < 1024**3:
        return f"{n / 1024**2:,.1f} MiB"
    return f"{n / 1024**3:,.1f} GiB"


def check_space(db_path: str | Path, answers: int, where: object = "the database") -> None:
    """Raise :class:`NotWritable` when the database's disk has less room than ``answers`` need."""
    free = free_bytes(db_path)
    needed = bytes_needed(answers)
    if free is not None and free < needed:
        what = f"{answers} answer{'s' * (answers != 1)}"
        raise NotWritable(
            f"cannot write to {where}: its disk has {_size(free)} free, less than the {_size(needed)} "
            f"kept for storing {what} (1 MiB plus 64 KiB per answer); free some space"
        )


def check_writable(writer: Writer, where: object = "the database", *, answers: int = 1) -> None:
    """Raise :class:`NotWritable` unless the disk has room for ``answers`` answers and a real
    write through ``writer`` commits. ``where`` is the database's path (it names it, and its
    folder's disk is the one measured)."""
    if isinstance(where, (str, Path)):
        check_space(where, answers, where)
    try:
        writer.call(_probe)
    except (sqlite3.Error, OSError) as exc:
        raise NotWritable(f"cannot write to {where}: {reason(exc)}") from exc
