"""Generic JSON Lines results: one answer per line, for any pipeline to feed prefscope.

Each line is an object::

    {"user": "maya", "query": "p1-open", "model": "gpt-4o-mini", "answer": "…",
     "messages": [{"role": "user", "content": "…"}],      # optional: exactly what was sent
     "method": "zero-shot", "context": "long", "turns": 10, # optional: how it was produced
     "answer_format": "mcq-prefeval",                       # optional: how the reply is read
     "meta": {…}}                                           # optional: kept verbatim

``user`` and ``query`` are stored ids (import the users first); unknown fields are errors, so a
misspelt key is reported rather than dropped.

``answer_format`` names the parser the choice judge reads the reply with: ``mcq`` / ``tf`` (prefscope's
generic reading) or a benchmark's own (``prefscope`` lists them per benchmark: ``mcq-prefeval``,
``mcq-personamem`` …). With ``mcq-prefeval`` the messages decide the rest as PrefEval's code does:
a last assistant message ``<choice>`` is the prefill the reply continues, and the gold letter is
where the aligned option stood in the options the last user message showed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, get, load_lines, text
from core.plan import Message
from core.results.model import ImportedAnswer, ResultsImport

NAME = "jsonl"
FIELDS = frozenset(
    {"user", "query", "model", "answer", "messages", "method", "context", "turns", "answer_format", "meta"}
)
#: The readings every install has; benchmarks add their own (``Benchmark.answer_formats``).
GENERIC_ANSWER_FORMATS = ("open", "mcq", "tf")
_REQUIRED = ("user", "query", "model", "answer")


def detect(path: Path) -> bool:
    if path.is_dir() or path.suffix.lower() not in (".jsonl", ".json"):
        return False
    rec = first_record(path)
    return isinstance(rec, dict) and all(k in rec for k in _REQUIRED)


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    if path.is_dir():
        raise FormatError(path.name, "the jsonl results format reads one file, not a folder")
    sha = hashlib.sha256(read_text(path, max_bytes).encode()).hexdigest()
    result = ResultsImport(format=NAME)
    src = path.name
    for i, (label, rec) in enumerate(load_lines(path, max_bytes)):
        if not isinstance(rec, dict):
            raise FormatError(src, f"expected an object, got {type(rec).__name__}", record=label)
        unknown = sorted(set(rec) - FIELDS)
        if unknown:
            raise FormatError(
                src, f"unknown field (expected {', '.join(sorted(FIELDS))})", record=label, path=unknown[0]
            )
        user = text(src, rec, "user", "", label, non_empty=True)
        query = text(src, rec, "query", "", label, non_empty=True)
        model = text(src, rec, "model", "", label, non_empty=True)
        answer = text(src, rec, "answer", "", label)
        turns = get(src, rec, "turns", int, "", label, required=False)
        if turns is not None and turns < 0:
            raise FormatError(src, f"expected a count >= 0, got {turns}", record=label, path="turns")
        meta = get(src, rec, "meta", dict, "", label, required=False, default={})
        messages = _messages(src, rec, label)
        answer_format = _answer_format(src, rec, label)
        result.answers.append(
            ImportedAnswer(
                format=NAME,
                source_file=src,
                source_sha256=sha,
                record=i,
                record_label=label,
                user_id=user,
                query_id=query,
                model=model,
                method=text(src, rec, "method", "", label, required=False) or "unknown",
                context=text(src, rec, "context", "", label, required=False) or "imported",
                turns=turns,
                answer=answer,
                answer_format=answer_format,
                messages=messages,
                prompt_notes=[f"Recorded answer of {model} imported from {src}, {label}; prefscope did not send it."]
                + ([] if messages else ["The file does not give the messages the model was sent."]),
                meta=meta,
            )
        )
    return result


def _messages(src: str, rec: dict, label: str) -> list[Message] | None:
    raw = get(src, rec, "messages", list, "", label, required=False)
    if raw is None:
        return None
    out = []
    for j, m in enumerate(raw):
        try:
            out.append(Message.model_validate(m))
        except ValidationError as exc:
            raise from_validation(src, exc, record=label, prefix=f"messages[{j}]") from exc
    return out


def _answer_format(src: str, rec: dict, label: str) -> str | None:
    name = text(src, rec, "answer_format", "", label, required=False)
    if name is None:
        return None
    from core.benchmark import installed

    known = [*GENERIC_ANSWER_FORMATS, *(e.name for b in installed() for e in b.answer_formats)]
    if name not in known:
        raise FormatError(
            src, f"unknown answer format {name!r} (expected {', '.join(known)})", record=label, path="answer_format"
        )
    return name
