"""Reading raw input files safely: size limit, UTF-8, empty files, JSON parsing (JSON Lines: shapes.py)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TypeVar, overload

from core.formats.errors import FormatError

#: Files above this are refused unless the caller raises the limit (``--max-mb``).
DEFAULT_MAX_BYTES = 200 * 1024 * 1024

T = TypeVar("T")


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def refuse_special(path: Path, source: str | None = None) -> None:
    """A FormatError when ``path`` is a FIFO, device or socket: checked with ``os.stat`` before any
    open, since opening a FIFO for reading blocks until a writer comes and /dev/zero never ends."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: the caller's open or stat says so
    for test, what in _SPECIAL:
        if test(mode):
            raise FormatError(source or str(path), f"not a regular file but {what}; pass a file or a folder")


def check_size(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, source: str | None = None) -> int:
    """The file's size in bytes; a FormatError (named ``source`` or the file name) when it cannot be
    read, is not a regular file (a FIFO, device or socket) or is above the import limit."""
    name = source or path.name
    try:
        st = os.stat(path)
    except OSError as exc:
        raise FormatError(name, f"cannot read file: {exc.strerror or exc}") from exc
    if not stat.S_ISREG(st.st_mode):
        refuse_special(path, source or str(path))
    size = st.st_size
    if size > max_bytes:
        raise FormatError(
            name,
            f"file is {size / 1e6:.1f} MB, above the {max_bytes / 1e6:.0f} MB import limit "
            "(raise it with --max-mb if this is intended)",
        )
    return size


def read_text(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    name = path.name
    check_size(path, max_bytes)
    raw = path.read_bytes()
    if not raw.strip():
        raise FormatError(name, "file is empty")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FormatError(
            name, f"line {line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from exc


def read_json(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> object:
    text = read_text(path, max_bytes)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path.name, f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})") from exc
    except RecursionError as exc:
        raise FormatError(path.name, "JSON is nested too deeply to read") from exc


@overload
def expect_type(source: str, value: object, kind: type[T], where: str, record: str | None = None) -> T: ...
@overload
def expect_type(
    source: str, value: object, kind: tuple[type, ...], where: str, record: str | None = None
) -> object: ...
def expect_type(
    source: str, value: object, kind: type | tuple[type, ...], where: str, record: str | None = None
) -> object:
    """``value`` itself, typed as ``kind``; a FormatError naming the place when it is not of that JSON type."""
    if not isinstance(value, kind):
        names = " or ".join(_json_name(k) for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise FormatError(source, f"expected {names}, got {_json_name(type(value))}", record=record, path=where or None)
    return value


def _json_name(t: type) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "true/false",
        type(None): "null",
    }.get(t, t.__name__)
