"""LongMemEval's cleaned release (2025-09; Hugging Face ``xiaowu0162/longmemeval-cleaned``):
``longmemeval_s_cleaned.json`` and ``longmemeval_m_cleaned.json``.

The same fields as the first release (the README's "Dataset Format" and the evaluation code are
unchanged; ``../shared/reference/longmemeval-cleaned/PROTOCOL.md`` §1–2): a data revision, not a
format change, so :mod:`core.benchmarks.longmemeval.format` reads it. What differs is the source
name: users ``longmemeval-cleaned-<question_id>`` of source ``longmemeval-cleaned``, so the cleaned
and the original haystacks of one question are two users and a report never pools them.

Detected by its file name (``cleaned`` in the stem of a LongMemEval question file); ``import
--format longmemeval-cleaned`` reads any LongMemEval question file as the cleaned release.
"""

from __future__ import annotations

from pathlib import Path

from core.benchmarks.longmemeval import format as original
from core.formats.base import ImportResult
from core.formats.reading import DEFAULT_MAX_BYTES

NAME = original.CLEANED


def detect(path: Path) -> bool:
    return "cleaned" in path.stem.lower() and original.detect(path)


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    return original.load_as(path, NAME, max_bytes)
