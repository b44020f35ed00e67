"""Can this database take writes? Asked before a batch makes its first paid call.

The probe writes a small table through the writer (the connection that will store the answers),
with a blob big enough to need new pages, and drops it in the same transaction: a read-only file
or folder, a full disk (or a reached ``max_page_count``) or a lock held past the write deadline
fail here instead of after every model call was paid for.
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from storage.writer import Writer, is_busy

PROBE_BYTES = 64 * 1024


class NotWritable(RuntimeError):
    """The database refuses writes; the message says why, in the operator's terms."""


def _probe(db: Database) -> None:
    db.execute("CREATE TABLE prefscope_write_probe (b BLOB)")
    db.execute("INSERT INTO prefscope_write_probe VALUES (zeroblob(?))", (PROBE_BYTES,))
    db.execute("DROP TABLE prefscope_write_probe")


def reason(exc: BaseException) -> str:
    """Why a write failed, in words an operator can act on."""
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


def check_writable(writer: Writer, where: object = "the database") -> None:
    """Raise :class:`NotWritable` unless a real write through ``writer`` commits."""
    try:
        writer.call(_probe)
    except (sqlite3.Error, OSError) as exc:
        raise NotWritable(f"cannot write to {where}: {reason(exc)}") from exc
