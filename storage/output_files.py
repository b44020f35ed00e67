"""Writing a command's output file (export, report CSV/PNG) without ever clobbering an input.

A target that is the open database, one of its ``-wal``/``-shm``/``-journal`` files, or any SQLite
file is refused. Paths are compared resolved: a database reached through a symlink is protected
with the companions SQLite really writes (next to the resolved file) as well as the ones next to the
given name, and a target that is itself a symlink into any of them is refused. An existing file is
replaced only when the caller says so (``force``). The bytes go to a file in the same folder that
takes the target's name only once complete, so a crash or an error mid-write leaves the old file
(or none), never half of a new one. On Linux that file has no name while it is written
(``O_TMPFILE``), so even SIGKILL leaves nothing behind; elsewhere it is a hidden
``.<name>.<hex>.part``, and the next write to the same target removes those a killed process left.
CSV cells go through :func:`formula_safe` in every command that writes one.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import time
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

#: The random part of a ``.<name>.<hex>.part`` temp file's name.
_PART_TAG = re.compile(r"[0-9a-f]{8}")
#: Part files older than this process were left by another one, killed mid-write.
_STARTED = time.time()


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
    _sweep_parts(target)
    fd = _unnamed_file(target.parent)
    if fd is None:
        with _named_part(target, binary) as fh:
            yield fh
            check_target(target, protect=protect, force=force, hint=hint)
        return
    # An error or a kill before _link closes the file, and a file without a name is gone.
    with _opened(fd, binary) as fh:
        yield fh
        _sync(fh)
        check_target(target, protect=protect, force=force, hint=hint)
        _link(fd, target)


def _opened(fd: int, binary: bool) -> IO[Any]:
    return os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")


def _sync(fh: IO[Any]) -> None:
    fh.flush()
    os.fsync(fh.fileno())


def _unnamed_file(folder: Path) -> int | None:
    """A writable file in ``folder`` without a name (Linux ``O_TMPFILE``, with the usual
    permissions after the umask), or None where the system or the file system has none, or where
    ``/proc`` is missing (the only way to give it a name)."""
    flag = getattr(os, "O_TMPFILE", 0)
    if not flag:
        return None
    try:
        fd = os.open(folder, flag | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        # EOPNOTSUPP: the file system has none; EISDIR, EINVAL: a kernel before 3.11.
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None
        raise
    if not os.path.exists(f"/proc/self/fd/{fd}"):
        os.close(fd)
        return None
    return fd


def _link(fd: int, target: Path) -> None:
    """Give the unnamed file ``fd`` the name ``target``: directly when there is none yet, else under
    a temp name renamed over it (a link cannot replace a file)."""
    folder = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if not os.path.lexists(target):
            with suppress(FileExistsError):  # it appeared meanwhile (checked just before): replaced below
                _link_at(fd, folder, target.name)
                return
        temp = _part_name(target)
        _link_at(fd, folder, temp.name)
        try:
            os.replace(temp.name, target.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(temp.name, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def _link_at(fd: int, folder: int, name: str) -> None:
    # With a dir fd CPython calls linkat(..., AT_SYMLINK_FOLLOW), which links the file behind
    # /proc's link; plain link() would try to link the /proc entry itself (EXDEV).
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=folder, follow_symlinks=True)


@contextmanager
def _named_part(target: Path, binary: bool) -> Iterator[IO[Any]]:
    """Without unnamed files: a hidden ``.<name>.<hex>.part`` renamed over ``target`` once the
    block ends (the caller checks the target again at its end), removed on an error."""
    temp = _part_name(target)
    try:
        # "x": a fresh file with the usual permissions (umask), never someone else's.
        with temp.open("xb") if binary else temp.open("x", encoding="utf-8", newline="") as fh:
            yield fh
            _sync(fh)
        os.replace(temp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            temp.unlink()
        raise


def _part_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")


def _sweep_parts(target: Path) -> None:
    """Remove the ``.<name>.<hex>.part`` files of ``target`` that a process killed mid-write left
    (older than this process: a newer one may be another writer's, still at work)."""
    prefix, suffix = f".{target.name}.", ".part"
    with suppress(OSError), os.scandir(target.parent) as entries:
        for entry in entries:
            name = entry.name
            if not (name.startswith(prefix) and name.endswith(suffix)):
                continue
            if not _PART_TAG.fullmatch(name[len(prefix) : -len(suffix)]):
                continue
            with suppress(OSError):
                if entry.is_file(follow_symlinks=False) and entry.stat(follow_symlinks=False).st_mtime < _STARTED:
                    os.unlink(entry.path)


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
