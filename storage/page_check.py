"""The page check of a large database, on its own thread, for the workbench's first screen.

Every writer checks a database's pages before its first write (:func:`storage.db.check_intact`,
linear in the file: about 0.7 ms per MB). The TUI need not wait for it before its first paint: on
a file past :data:`INLINE_BYTES` the check runs here, on a read-only connection of its own (SQLite
leaves the GIL while it reads, so it takes the second core), while the workbench's connection
refuses writes (``PRAGMA query_only``) and the writer thread waits for the outcome
(:meth:`PageCheck.wait`) before it opens the file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from storage.db import DatabaseRefused, check_intact, open_db

#: Files up to this size are checked before the workbench opens (about 50 ms): the sample data,
#: an empty database, anything a first hour makes.
INLINE_BYTES = 64 * 2**20


def checked_inline(path: Path) -> bool:
    """Whether the pages of ``path`` are checked before the workbench opens (small or new files)."""
    try:
        return path.stat().st_size <= INLINE_BYTES
    except OSError:
        return True


class PageCheck:
    """The check of ``path``'s pages, started at once on its own thread."""

    def __init__(self, path: Path):
        self.path = path
        self.error: DatabaseRefused | None = None
        self._done = threading.Event()
        threading.Thread(target=self._run, name="prefscope-page-check", daemon=True).start()

    def _run(self) -> None:
        try:
            db = open_db(self.path, migrate=False, readonly=True, verify=False)
            try:
                check_intact(db, self.path)
            finally:
                db.close()
        except DatabaseRefused as exc:
            self.error = exc
        except Exception as exc:  # anything else that keeps the check from running is no pass either
            self.error = DatabaseRefused(f"cannot check the pages of {self.path}: {type(exc).__name__}: {exc}")
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the check has an outcome (False on ``timeout``); raises its refusal."""
        if not self._done.wait(timeout):
            return False
        if self.error is not None:
            raise self.error
        return True
