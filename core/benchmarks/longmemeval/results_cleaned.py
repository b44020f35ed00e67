"""LongMemEval hypothesis files and judge logs of runs on the cleaned release
(``longmemeval_s_cleaned.json`` / ``_m_cleaned.json``): read as
:mod:`core.benchmarks.longmemeval.results` reads them, linked to the cleaned questions
(``longmemeval-cleaned-<question_id>``). Detected when the file's name contains ``cleaned`` (the
files hold no dataset name); ``import-results --format longmemeval-cleaned`` says it for any name.
"""

from __future__ import annotations

from pathlib import Path

from core.benchmarks.longmemeval import results
from core.benchmarks.longmemeval.format import CLEANED
from core.formats.reading import DEFAULT_MAX_BYTES
from core.results.model import ResultsImport

NAME = CLEANED


def detect(path: Path) -> bool:
    return "cleaned" in path.name.lower() and results.detect(path)


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    return results.load_as(path, NAME, max_bytes)
