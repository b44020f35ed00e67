"""The native bundle format v1: one JSON file per user (or a filler pool), or a folder of them.

    {"format": "prefscope.user", "version": 1, "user": {...}, "sessions": [...],
     "preferences": [...], "queries": [...], "attributes": [...]}
    {"format": "prefscope.filler", "version": 1, "id": "...", "name": "...", "sessions": [...]}

The fields are those of ``core.model`` (``prefscope schema`` prints the JSON Schema).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type, read_json
from core.model import FillerPool, UserBundle

NAME = "native"
USER_TAG = "prefscope.user"
FILLER_TAG = "prefscope.filler"
VERSION = 1


def detect(path: Path) -> bool:
    files = [path] if path.is_file() else sorted(path.rglob("*.json"))
    for f in files[:3]:
        try:
            with f.open("rb") as fh:
                head = fh.read(400).decode("utf-8", "ignore")
        except OSError:
            continue
        if USER_TAG in head or FILLER_TAG in head:
            return True
    return False


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    result = ImportResult(format=NAME)
    files = [path] if path.is_file() else sorted(path.rglob("*.json"))
    if not files:
        raise FormatError(path.name, "folder holds no .json files")
    for f in files:
        result.extend(load_file(f, max_bytes))
    return result


def load_file(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    data = read_json(path, max_bytes)
    return parse(path.name, data)


def parse(source: str, data: object) -> ImportResult:
    expect_type(source, data, dict, "")
    assert isinstance(data, dict)
    tag = data.get("format")
    version = data.get("version")
    if tag not in (USER_TAG, FILLER_TAG):
        raise FormatError(source, f"expected {USER_TAG!r} or {FILLER_TAG!r}, got {tag!r}", path="format")
    if version != VERSION:
        raise FormatError(source, f"expected version {VERSION}, got {version!r}", path="version")
    body = {k: v for k, v in data.items() if k not in ("format", "version")}
    result = ImportResult(format=NAME)
    try:
        if tag == USER_TAG:
            result.bundles.append(UserBundle.model_validate(body))
        else:
            result.fillers.append(FillerPool.model_validate(body))
    except ValidationError as exc:
        record = body.get("user", {}).get("id") if isinstance(body.get("user"), dict) else body.get("id")
        raise from_validation(source, exc, record=f"user {record!r}" if tag == USER_TAG and record else None) from exc
    return result


def dump_bundle(bundle: UserBundle) -> str:
    """A bundle as native JSON text (the inverse of :func:`parse`)."""
    body = bundle.model_dump(mode="json", exclude_defaults=True)
    return json.dumps({"format": USER_TAG, "version": VERSION, **body}, ensure_ascii=False, indent=1)


def dump_filler(pool: FillerPool) -> str:
    body = pool.model_dump(mode="json", exclude_defaults=True)
    return json.dumps({"format": FILLER_TAG, "version": VERSION, **body}, ensure_ascii=False, indent=1)
