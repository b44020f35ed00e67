"""Writing a command's output file (export, report CSV/PNG) without ever clobbering an input.

A target that is the open database, one of its ``-wal``/``-shm``/``-journal`` files, or any SQLite
file is refused. Paths are compared resolved: a database reached through a symlink is protected
with the companions SQLite really writes (next to the resolved file) as well as the ones next to the
given name, and a target that is itself a symlink into any of them is refused. An existing file is
replaced only when the caller says so (``force``). The bytes go to a hidden temp file in the same
folder, which is renamed over the target only once complete, so a crash or an error mid-write
leaves the old file (or none), never half of a new one. CSV cells go through :func:`formula_safe`
in every command that writes one.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from storage.db import SQLITE_HEADER

#: A text cell starting with one of these is a formula (or its start) to a spreadsheet.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
FORMULA_CHARS = frozenset(FORMULA_START)

#: The files SQLite keeps beside a database, named after the resolved file (it follows symlinks).
COMPANIONS = ("-wal", "-shm", "-journal")


def formula_safe(value: object) -> object:
    """A CSV cell a spreadsheet will not run: text starting like a formula gets a leading ``'``
    (drop it to get the exact text back); numbers and every other value pass through unchanged.
    The one such function: ``export``, ``report --csv`` and ``compare --csv`` all use it."""
    if isinstance(value, str) and value and value[0] in FORMULA_CHARS:
        return "'" + value
    return value


class OutputRefused(ValueError):
    """The target may not be written; the message names it and says why."""


def check_target(
    path: str | Path,
    *,
    protect: Iterable[str | Path] = (),
    force: bool = False,
    hint: str = "add --force to replace it",
) -> Path:
    """The target as a Path, or :class:`OutputRefused`. ``protect``: the database(s) this command
    reads; ``hint``: how the caller's user allows replacing an existing file."""
    target = Path(path).expanduser()
    for db in protect:
        db = Path(db).expanduser()
        if str(db) == ":memory:":
            continue
        names = _names(db)
        if any(_same_file(target, name) for name in names):
            raise OutputRefused(f"refusing to write {target}: it is the database this command reads")
        for suffix in COMPANIONS:
            if any(_same_file(target, name.with_name(name.name + suffix)) for name in names):
                raise OutputRefused(f"refusing to write {target}: it belongs to the database {db}")
    if target.is_dir():
        raise OutputRefused(f"refusing to write {target}: it is a folder")
    if target.exists():
        if _is_sqlite(target):
            raise OutputRefused(f"refusing to write {target}: it is a SQLite database; choose another file name")
        if not force:
            raise OutputRefused(f"{target} already exists; {hint}")
    if not target.parent.is_dir():
        raise OutputRefused(f"cannot write {target}: the folder {target.parent} does not exist")
    return target


@contextmanager
def replace_atomically(
    path: str | Path,
    *,
    binary: bool = False,
    protect: Iterable[str | Path] = (),
    force: bool = False,
    hint: str = "add --force to replace it",
) -> Iterator[IO[Any]]:
    """An open file whose content becomes ``path`` when the block ends without an exception.

    Text mode is UTF-8 with ``newline=""`` (the csv module's convention). The target is checked
    before writing and again before the rename (it may have appeared meanwhile)."""
    protect = list(protect)
    target = check_target(path, protect=protect, force=force, hint=hint)
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    try:
        # "x": a fresh file with the usual permissions (umask), never someone else's.
        with temp.open("xb") if binary else temp.open("x", encoding="utf-8", newline="") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        check_target(target, protect=protect, force=force, hint=hint)
        os.replace(temp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            temp.unlink()
        raise


def _names(db: Path) -> list[Path]:
    """The database as given and, when that is a symlink (or under one), the file it resolves to:
    companions are looked for next to both."""
    names = [db]
    with suppress(OSError, RuntimeError):
        real = db.resolve()
        if real != db.absolute():
            names.append(real)
    return names


def _same_file(a: Path, b: Path) -> bool:
    """One file under two names (hard or symbolic links, a dangling link included), compared
    resolved, or one path if either does not exist yet."""
    try:
        if a.exists() and b.exists() and os.path.samefile(a, b):
            return True
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
        return False


def _is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
