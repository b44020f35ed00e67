"""Token counts kept between processes (implements ``core.ports.TokenCountCache``), so a command
that counts texts it counted before never loads the tokenizer (loading cl100k_base costs ~0.1 s of
every short command: `prompt`, `run`, the workbench's estimate line).

Counts are keyed by (encoding, digest of the text): a text's count never changes, so nothing is ever
invalidated. The file is a cache: any SQLite error (read-only folder, locked, damaged) turns it off
for the process and counting goes on as before.
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
from pathlib import Path

import platformdirs

#: Keys per ``IN (…)`` lookup: below SQLite's variable limit on every build.
_CHUNK = 500
#: A busy writer (another prefscope counting the same texts) is waited for this long, then skipped.
_BUSY_MS = 200
#: New counts are written in batches of this many (and at exit): a filler pool counted turn by turn
#: must not cost one transaction per turn.
_FLUSH_AT = 2_000


def store_path() -> Path:
    """``$PREFSCOPE_TOKEN_CACHE`` or ``token-counts.sqlite`` in the user's cache folder; the variable
    set to ``off`` keeps nothing on disk."""
    chosen = os.environ.get("PREFSCOPE_TOKEN_CACHE")
    if chosen:
        return Path(chosen)
    return Path(platformdirs.user_cache_dir("prefscope", appauthor=False)) / "token-counts.sqlite"


class TokenCountFile:
    """The counts in their own SQLite file beside the other caches (not in the database: a read-only
    command may keep counts too, and they never compete with the writer); one connection per
    process, shared by threads under a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._off = False
        self._path: Path | None = None
        self._pending: dict[tuple[str, bytes], int] = {}
        atexit.register(self.flush)

    def _connection(self) -> sqlite3.Connection | None:
        path = store_path()
        if self._path != path:  # the cache folder changed (tests give each test its own)
            self._close()
            self._pending.clear()
            self._off, self._path = str(path) == "off", path
        if self._off or self._db is not None:
            return self._db
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=_BUSY_MS / 1000, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a cache: no fsync per batch, still never damaged
            db.execute(
                "CREATE TABLE IF NOT EXISTS counts (encoding TEXT NOT NULL, digest BLOB NOT NULL, n INTEGER NOT NULL,"
                " PRIMARY KEY (encoding, digest)) WITHOUT ROWID"
            )
        except (OSError, sqlite3.Error):
            self._off = True
            return None
        self._db = db
        return db

    def lookup(self, encoding: str, digests: list[bytes]) -> dict[bytes, int]:
        """The stored counts of those digests that have one."""
        found: dict[bytes, int] = {}
        with self._lock:
            db = self._connection()
            if db is None:
                return found
            try:
                for i in range(0, len(digests), _CHUNK):
                    chunk = digests[i : i + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    sql = f"SELECT digest, n FROM counts WHERE encoding = ? AND digest IN ({marks})"
                    found.update(db.execute(sql, [encoding, *chunk]).fetchall())
            except sqlite3.Error:
                self._turn_off()
        return found

    def remember(self, encoding: str, counts: dict[bytes, int]) -> None:
        """Keeps new counts; they reach the file in batches (see :data:`_FLUSH_AT`) and at exit."""
        with self._lock:
            self._pending.update(((encoding, d), n) for d, n in counts.items())
            full = len(self._pending) >= _FLUSH_AT
        if full:
            self.flush()

    def flush(self) -> None:
        """Writes the kept counts in one transaction (dropped when the file is busy past the wait)."""
        with self._lock:
            pending, self._pending = self._pending, {}
            db = self._connection() if pending else None
            if db is None:
                return
            try:
                with db:
                    db.execute("BEGIN")
                    db.executemany(
                        "INSERT OR IGNORE INTO counts VALUES (?, ?, ?)", [(e, d, n) for (e, d), n in pending.items()]
                    )
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    self._turn_off()
            except sqlite3.Error:
                self._turn_off()

    def _turn_off(self) -> None:
        self._close()
        self._off = True

    def _close(self) -> None:
        if self._db is not None:
            self._db.close()
        self._db = None


#: One per process: every workbench opened in it keeps counts in the same file.
COUNT_FILE = TokenCountFile()
