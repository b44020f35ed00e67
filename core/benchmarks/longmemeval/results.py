"""LongMemEval hypothesis files (README "Testing Your System"): JSON Lines, one
``{"question_id", "hypothesis"}`` object per line; read as ``evaluate_qa.py`` reads them (JSON Lines,
else one JSON list). Each hypothesis answers the user and query the LongMemEval importer made from
that question (``longmemeval-<question_id>`` / ``<question_id>``): import the dataset first. A
question_id with no stored question fails the import naming its line (the official script skips it
with a warning; an all-or-nothing import says so instead).

The file names no model. ``run_generation.py`` writes to
``generation_logs/<retriever>/<model>/<reading method>/``: under such a path the model, retriever
(-> context) and reading method (``direct`` -> the ``longmemeval`` method, ``con`` ->
``longmemeval-cot``) come from it; otherwise the model is the file's stem. Other fields of a line
are kept in the run's ``meta``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from core.benchmarks.longmemeval.format import user_id
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, head_text, load_json, load_lines, text
from core.results.model import ImportedAnswer, ResultsImport

NAME = "longmemeval"
FIELDS = ("question_id", "hypothesis")
#: run_generation.sh reading methods -> prefscope's methods with the same reader prompt.
METHODS = {"direct": "longmemeval", "con": "longmemeval-cot"}


def detect(path: Path) -> bool:
    """The first line (JSON Lines, any file name) or the first item (one JSON list) has both fields."""
    if path.is_dir():
        return False
    line = next((ln for ln in head_text(path, 1024 * 1024).splitlines() if ln.strip()), "")
    try:
        rec = json.loads(line)
    except ValueError:
        rec = first_record(path)
    if isinstance(rec, list):
        rec = rec[0] if rec else None
    return isinstance(rec, dict) and all(k in rec for k in FIELDS)


def origin(path: Path) -> tuple[str, str, str]:
    """(model, method, context) as far as the file's path says."""
    parts = path.resolve().parts
    if "generation_logs" in parts:
        i = parts.index("generation_logs")
        tail = parts[i + 1 : -1]
        if len(tail) >= 3:
            retriever, model, reading = tail[:3]
            return model, METHODS.get(reading, reading), retriever
    return path.stem or "unknown", "unknown", "imported"


def _records(path: Path, max_bytes: int) -> list[tuple[str, object]]:
    try:
        lines = load_lines(path, max_bytes)
        if len(lines) == 1 and isinstance(lines[0][1], list):  # one JSON list on one line
            return [(f"record {i}", rec) for i, rec in enumerate(lines[0][1])]
        return lines
    except FormatError as as_lines:
        try:
            data = load_json(path, max_bytes)
        except FormatError:
            raise as_lines from None
        if not isinstance(data, list):
            raise as_lines from None
        return [(f"record {i}", rec) for i, rec in enumerate(data)]


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the longmemeval results format reads one hypothesis file, not a folder")
    src = path.name
    sha = hashlib.sha256(read_text(path, max_bytes).encode()).hexdigest()
    model, method, context = origin(path)
    result = ResultsImport(format=NAME)
    seen: dict[str, str] = {}
    for i, (label, rec) in enumerate(_records(path, max_bytes)):
        if not isinstance(rec, dict):
            raise FormatError(src, f"expected an object, got {type(rec).__name__}", record=label)
        qid = text(src, rec, "question_id", "", label, non_empty=True)
        hypothesis = text(src, rec, "hypothesis", "", label)
        if qid in seen:
            raise FormatError(src, f"duplicate question_id {qid!r}, also {seen[qid]}", record=label, path="question_id")
        seen[qid] = label
        result.answers.append(
            ImportedAnswer(
                format=NAME,
                source_file=src,
                source_sha256=sha,
                record=i,
                record_label=label,
                user_id=user_id(qid),
                query_id=qid,
                model=model,
                method=method,
                context=context,
                answer=hypothesis,
                prompt_notes=[
                    f"LongMemEval hypothesis of {model} imported from {src}, {label}; prefscope did not send it.",
                    "The file does not give the prompt the model was sent.",
                ],
                meta={k: v for k, v in rec.items() if k not in FIELDS},
            )
        )
    return result
