"""LongMemEval hypothesis files (README "Testing Your System") and the judge logs
``evaluate_qa.py`` writes from them (``<hyp_file>.eval-results-<judge>``).

A hypothesis file is JSON Lines, one ``{"question_id", "hypothesis"}`` object per line, read as
``evaluate_qa.py`` reads it (JSON Lines, else one JSON list). A judge log is the same lines, each
with ``"autoeval_label": {"model": <full judge id>, "label": <true|false>}`` set last
(``../shared/reference/longmemeval-cleaned/PROTOCOL.md`` §3): the label becomes a recorded score
(:class:`core.results.model.RecordedScore`, kind ``longmemeval``, dimension ``accuracy``, 1.0 / 0.0,
judge = the file's full judge id), stored as a judgment of ``recorded:<judge>`` and never pooled
with a judge run here. A label that is not a JSON boolean is kept as a score-less recorded
judgment (a parse failure); a line without ``autoeval_label`` is a plain hypothesis.

Each line answers the user and query the LongMemEval importer made from that question
(``longmemeval-<question_id>`` / ``<question_id>``; ``longmemeval-cleaned-<question_id>`` under the
``longmemeval-cleaned`` results format, which auto-detection picks when the file's name contains
``cleaned``). When that question is not stored the answer goes on a placeholder
user and query of the same ids (source ``longmemeval``, ``meta.placeholder``, no question type):
importing the dataset later replaces the placeholder and the runs, which survive a user's
re-import, sit on the real question (its type, gold answer and haystack).

A judge log whose answers were imported before from its hypothesis file (the same question, model,
method, context and answer text) adds its labels to those runs (``storage.imported_runs``).

The file names no model. ``run_generation.py`` writes to
``generation_logs/<retriever>/<model>/<reading method>/``: under such a path the model, retriever
(-> context) and reading method (``direct`` -> the ``longmemeval`` method, ``con`` ->
``longmemeval-cot``) come from it; otherwise the model is the file's stem (of the hypothesis file a
log names: ``hyp.jsonl.eval-results-gpt-4o`` -> ``hyp``). Other fields of a line are kept in the
run's ``meta``.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from core.benchmarks.longmemeval.format import is_abstention, user_id
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, read_text
from core.formats.shapes import first_record, head_text, load_json, load_lines, text
from core.model import UserBundle
from core.results.model import ImportedAnswer, RecordedScore, ResultsImport

NAME = "longmemeval"
FIELDS = ("question_id", "hypothesis")
#: The key evaluate_qa.py sets on each judged line.
LABEL = "autoeval_label"
#: ``<hyp_file>.eval-results-<judge short name>`` (evaluate_qa.py's output name).
_LOG_NAME = re.compile(r"^(?P<hyp>.+)\.eval-results-(?P<judge>[^/\\]+)$")
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


def judge_log(name: str) -> tuple[str, str] | None:
    """(hypothesis file name, judge short name) of an ``evaluate_qa.py`` log name, else None."""
    m = _LOG_NAME.match(name)
    return (m["hyp"], m["judge"]) if m else None


def origin(path: Path) -> tuple[str, str, str]:
    """(model, method, context) as far as the file's path says (a judge log: as its hypothesis file's)."""
    parts = path.resolve().parts
    if "generation_logs" in parts:
        i = parts.index("generation_logs")
        tail = parts[i + 1 : -1]
        if len(tail) >= 3:
            retriever, model, reading = tail[:3]
            return model, METHODS.get(reading, reading), retriever
    log = judge_log(path.name)
    name = Path(log[0]) if log else path
    return name.stem or "unknown", "unknown", "imported"


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
    return load_as(path, NAME, max_bytes)


def load_as(path: Path, source: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ResultsImport:
    """Read one hypothesis file or judge log whose questions are the ``source`` release's."""
    if path.is_dir():
        raise FormatError(path.name, f"the {source} results format reads one hypothesis file, not a folder")
    src = path.name
    sha = hashlib.sha256(read_text(path, max_bytes).encode()).hexdigest()
    model, method, context = origin(path)
    log = judge_log(src)
    result = ResultsImport(format=source)
    seen: dict[str, str] = {}
    labelled = 0
    for i, (label, rec) in enumerate(_records(path, max_bytes)):
        if not isinstance(rec, dict):
            raise FormatError(src, f"expected an object, got {type(rec).__name__}", record=label)
        qid = text(src, rec, "question_id", "", label, non_empty=True)
        hypothesis = text(src, rec, "hypothesis", "", label)
        if qid in seen:
            raise FormatError(src, f"duplicate question_id {qid!r}, also {seen[qid]}", record=label, path="question_id")
        seen[qid] = label
        recorded = _recorded(src, label, rec, qid, log[1] if log else None)
        labelled += bool(recorded)
        uid = user_id(qid, source)
        notes = [
            f"LongMemEval hypothesis of {model} imported from {src}, {label}; prefscope did not send it.",
            "The file does not give the prompt the model was sent.",
        ]
        if recorded:
            notes.append(f"Its label was recorded by {recorded[0].judge} (evaluate_qa.py), not judged here.")
        result.answers.append(
            ImportedAnswer(
                format=source,
                source_file=src,
                source_sha256=sha,
                record=i,
                record_label=label,
                user_id=uid,
                query_id=qid,
                fallback=placeholder(qid, source, src),
                fallback_query_id=qid,
                model=model,
                method=method,
                context=context,
                answer=hypothesis,
                prompt_notes=notes,
                recorded=recorded,
                meta={k: v for k, v in rec.items() if k not in (*FIELDS, LABEL)},
            )
        )
    if log and labelled < len(result.answers):
        result.notes.append(
            f"{src}: {len(result.answers) - labelled} of {len(result.answers)} lines have no {LABEL} "
            "(imported as hypotheses only)"
        )
    return result


def _recorded(src: str, label: str, rec: dict, qid: str, short: str | None) -> list[RecordedScore]:
    """The line's ``autoeval_label`` as a recorded 0/1 score of its judge (none without the key)."""
    if LABEL not in rec:
        return []
    value = rec[LABEL]
    if not isinstance(value, dict):
        raise FormatError(src, f"expected an object, got {type(value).__name__}", record=label, path=LABEL)
    judge = text(src, value, "model", LABEL, label, non_empty=True)
    yes = value.get("label")
    score = (1.0 if yes else 0.0) if isinstance(yes, bool) else None
    meta: dict = {"question_id": qid, "abstention": is_abstention(qid)}
    if short:
        meta["judge_short_name"] = short
    return [
        RecordedScore(
            kind="longmemeval",
            dimension="accuracy",
            score=score,
            scale_min=0.0,
            scale_max=1.0,
            judge=judge,
            raw=json.dumps(yes),
            rationale=f"{'yes' if yes is True else 'no' if yes is False else 'no label'} (recorded by {judge})",
            meta=meta,
        )
    ]


def placeholder(qid: str, source: str, src: str) -> UserBundle:
    """The user and query a line goes on while its question is not imported: the importer's ids, no
    haystack, no type, no gold answer (importing the dataset replaces it, the runs stay)."""
    return UserBundle.model_validate(
        {
            "user": {
                "id": user_id(qid, source),
                "name": qid,
                "source": source,
                "meta": {"question_id": qid, "placeholder": True, "from": src},
            },
            "queries": [
                {
                    "id": qid,
                    "kind": "open",
                    "text": f"(LongMemEval question {qid}: its dataset is not imported)",
                    "meta": {"question_id": qid, "abstention": is_abstention(qid), "placeholder": True},
                }
            ],
        }
    )
