"""Shape checks shared by the dataset importers (PrefEval, CUPID, LoCoMo, chat logs).

Importers translate a foreign layout into ``core.model``. Errors must point at the place in
the *input* file (``prior_interactions[2].dialogue[1].role``), not at the model field it would
have become, so the raw shape is checked here before anything is built, and pydantic errors
are re-based onto the input path with ``prefix``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypeVar, overload

from pydantic import BaseModel, ValidationError

from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, _json_name, expect_type, read_json, read_text

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
_MISSING = object()


def load_json(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> object:
    """``reading.read_json`` plus a guard against absurd nesting (json raises RecursionError)."""
    try:
        return read_json(path, max_bytes)
    except RecursionError as exc:
        raise FormatError(path.name, "JSON is nested too deeply to read") from exc


def object_lines(text: str, shown: str) -> list[tuple[int, str, dict]]:
    """JSON Lines text whose every record is an object: ``(line number, "line N", record)``, blank
    lines skipped; an invalid or non-object line is an error naming ``shown`` and the line."""
    out: list[tuple[int, str, dict]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        label = f"line {lineno}"
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(shown, f"invalid JSON ({exc.msg})", record=label) from None
        if not isinstance(rec, dict):
            raise FormatError(shown, f"expected an object, got {type(rec).__name__}", record=label)
        out.append((lineno, label, rec))
    return out


def load_lines(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> list[tuple[str, object]]:
    """JSON Lines, each record labelled ``line N`` with its real line number (blank lines count)."""
    text = read_text(path, max_bytes)
    out: list[tuple[str, object]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((f"line {lineno}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise FormatError(path.name, f"line {lineno}: invalid JSON ({exc.msg})") from exc
        except RecursionError as exc:
            raise FormatError(path.name, f"line {lineno}: JSON is nested too deeply to read") from exc
    if not out:
        raise FormatError(path.name, "file has no records")
    return out


def renamed(err: FormatError, source: str) -> FormatError:
    """The same error under another file name (``mcq_options/x.json`` rather than ``x.json``)."""
    return FormatError(source, err.detail, record=err.record, path=err.path)


def load_records(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> Sequence[tuple[str | None, object]]:
    """A .jsonl file's lines (labelled ``line N``), or a .json file's whole value (label None).

    A ``.json`` file that is really JSON Lines (one object per line) is read as JSONL.
    """
    if path.suffix.lower() == ".jsonl":
        return load_lines(path, max_bytes)
    try:
        return [(None, load_json(path, max_bytes))]
    except FormatError as original:
        body = read_text(path, max_bytes).strip()
        if "\n" in body and body.startswith("{"):
            try:
                return load_lines(path, max_bytes)
            except FormatError:
                pass
        raise original


# A required field has the type asked for; an optional one may also be its default (None unless given).
@overload
def get(
    source: str,
    obj: dict,
    key: str,
    kind: type[T],
    where: str,
    record: str | None,
    *,
    required: Literal[True] = True,
) -> T: ...
@overload
def get(
    source: str, obj: dict, key: str, kind: type[T], where: str, record: str | None, *, required: bool, default: T
) -> T: ...
@overload
def get(
    source: str,
    obj: dict,
    key: str,
    kind: type[T],
    where: str,
    record: str | None,
    *,
    required: bool,
    default: None = None,
) -> T | None: ...
@overload
def get(
    source: str,
    obj: dict,
    key: str,
    kind: tuple[type, ...],
    where: str,
    record: str | None,
    *,
    required: bool = True,
    default: object = None,
) -> object: ...
def get(
    source: str,
    obj: dict,
    key: str,
    kind: type | tuple[type, ...],
    where: str,
    record: str | None,
    *,
    required: bool = True,
    default: object = None,
) -> object:
    """``obj[key]`` checked against a JSON type; a missing key is an error unless ``required=False``.

    ``where`` is the path of ``obj`` itself; the key is appended to it in messages.
    """
    path = f"{where}.{key}" if where else key
    value = obj.get(key, _MISSING)
    if value is _MISSING or (value is None and not required):
        if required:
            raise FormatError(source, "required field is missing", record=record, path=path)
        return default
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        # JSON true/false is not a number here, although Python's bool is an int.
        raise FormatError(source, f"expected {_names(kind)}, got true/false", record=record, path=path)
    expect_type(source, value, kind, path, record)
    return value


@overload
def text(
    source: str,
    obj: dict,
    key: str,
    where: str,
    record: str | None,
    *,
    required: Literal[True] = True,
    non_empty: bool = False,
) -> str: ...
@overload
def text(
    source: str, obj: dict, key: str, where: str, record: str | None, *, required: bool, non_empty: bool = False
) -> str | None: ...
def text(
    source: str, obj: dict, key: str, where: str, record: str | None, *, required: bool = True, non_empty: bool = False
) -> str | None:
    value = get(source, obj, key, str, where, record, required=required)
    if non_empty and isinstance(value, str) and not value.strip():
        raise FormatError(
            source, "expected a non-empty string, got ''", record=record, path=f"{where}.{key}" if where else key
        )
    return value


def string_list(
    source: str, obj: dict, key: str, where: str, record: str | None, *, required: bool = True
) -> list[str]:
    value = get(source, obj, key, list, where, record, required=required, default=[])
    path = f"{where}.{key}" if where else key
    for i, item in enumerate(value):
        expect_type(source, item, str, f"{path}[{i}]", record)
    return list(value)


def build(model: type[M], raw: dict, source: str, record: str | None, prefix: str = "") -> M:
    """``model.model_validate(raw)`` with errors reported as FormatError at ``prefix``."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(source, exc, record=record, prefix=prefix) from exc


def extras(obj: dict, known: set[str] | frozenset[str]) -> dict:
    """Fields we do not map, kept verbatim (in ``meta``) so nothing the dataset says is lost."""
    return {k: v for k, v in obj.items() if k not in known}


def head_text(path: Path, limit: int = 256 * 1024) -> str:
    """The first bytes of a file as text, for cheap format detection. Never raises."""
    try:
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", "ignore")
    except OSError:
        return ""


def first_record(path: Path, limit: int = 4 * 1024 * 1024) -> object:
    """The first JSONL line (or a whole small .json file) parsed, or None. Never raises."""
    raw = head_text(path, limit)
    try:
        if path.suffix.lower() == ".jsonl":
            line = next((ln for ln in raw.splitlines() if ln.strip()), "")
            return json.loads(line) if line else None
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(_json_name(k) for k in (kind if isinstance(kind, tuple) else (kind,)))
