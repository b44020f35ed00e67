"""LongMemEval (Wu et al., 2025; github.com/xiaowu0162/LongMemEval @ 9e0b455, MIT).

Input: ``longmemeval_s.json`` / ``_m`` / ``_oracle`` (README "Dataset Format"): a JSON list of
question instances::

    {"question_id", "question_type", "question", "answer", "question_date",
     "haystack_session_ids": [str], "haystack_dates": [str],
     "haystack_sessions": [[{"role": "user"|"assistant", "content", "has_answer"?: true}]],
     "answer_session_ids": [str]}

Mapping (ours; every question has its own haystack, so the unit is the question):

* one instance -> one UserBundle ``longmemeval-<question_id>``, one open Query whose id is the
  ``question_id`` itself (so a hypothesis file's ``question_id`` names the user and query). The
  cleaned release (``longmemeval_s_cleaned.json`` / ``_m_cleaned.json``, 2025-09: the same fields,
  filler sessions swept) is read by the same code under its own source name
  (:mod:`core.benchmarks.longmemeval.format_cleaned`): users ``longmemeval-cleaned-<question_id>``
  of source ``longmemeval-cleaned``, so a report never pools cleaned and original haystacks;
* each haystack session -> a ``life_event`` Session with the haystack id, in file order.
  ``Session.date`` is the calendar date of ``2023/05/20 (Sat) 02:21``; the raw string is kept in
  ``Session.meta["haystack_date"]`` (the longmemeval method renders and sorts by it, as the
  official code does). A session id repeated within one haystack gets ``~2``, ``~3`` … (noted);
  an empty session is skipped (noted: a Session needs a turn);
* the gold ``answer`` -> ``Query.answer`` (``str()`` of a number, as the judge prints it; for
  ``single-session-preference`` it is the rubric); turns with ``has_answer: true`` ->
  ``Query.evidence_turns``; ``answer_session_ids`` found in the haystack -> ``evidence_sessions``
  (ids absent from the haystack are listed in the notes and kept in ``meta``);
* ``Query.meta``: ``question_id``, ``question_type``, ``question_date``, ``abstention`` (``_abs``
  occurs in the id: the official code tests containment, the README says "ends with"),
  ``answer_session_ids``; any field we do not map is kept in ``User.meta["extra"]``.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import UserBundle, turn_ref

NAME = "longmemeval"
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
)
ABSTENTION_MARK = "_abs"
KEYS = frozenset(
    {
        "question_id",
        "question_type",
        "question",
        "answer",
        "question_date",
        "haystack_session_ids",
        "haystack_dates",
        "haystack_sessions",
        "answer_session_ids",
    }
)
TURN_KEYS = frozenset({"role", "content", "has_answer"})
_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})")


def is_abstention(question_id: str) -> bool:
    """``evaluate_qa.py`` / ``print_qa_metrics.py``: ``'_abs' in question_id``."""
    return ABSTENTION_MARK in question_id


#: The cleaned release's source name (and user id prefix); see ``format_cleaned``.
CLEANED = "longmemeval-cleaned"


def user_id(question_id: str, source: str = NAME) -> str:
    """``longmemeval-<question_id>`` (``longmemeval-cleaned-<question_id>`` for the cleaned release)."""
    return f"{source}-{question_id}"


def parse_date(raw: str) -> dt.date | None:
    """``2023/05/20 (Sat) 02:21`` -> 2023-05-20 (the time stays in the raw string)."""
    m = _DATE.match(raw)
    if not m:
        return None
    try:
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def detect(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".json":
        return False
    head = shapes.head_text(path)
    return head.lstrip("\ufeff \t\r\n").startswith("[") and all(
        re.search(rf'"{k}"\s*:', head) for k in ("question_id", "haystack_sessions")
    )


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    return load_as(path, NAME, max_bytes)


def load_as(path: Path, source: str, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    """Read one question file; its users carry ``source`` (``longmemeval`` or ``longmemeval-cleaned``)
    in their source and id."""
    if path.is_dir():
        raise FormatError(path.name, f"the {source} format reads one .json file, not a folder")
    src = path.name
    data = shapes.load_json(path, max_bytes)
    expect_type(src, data, list, "")
    assert isinstance(data, list)
    if not data:
        raise FormatError(src, "file holds no questions")
    result = ImportResult(format=source)
    seen: dict[str, int] = {}
    for i, raw in enumerate(data):
        record = f"record {i}"
        bundle = _instance(src, record, raw, result.notes, source)
        qid = bundle.queries[0].id
        if qid in seen:
            raise FormatError(
                src,
                f"duplicate question_id {qid!r}, also record {seen[qid]}",
                record=f"{record} ({qid})",
                path="question_id",
            )
        seen[qid] = i
        result.bundles.append(bundle)
    return result


def _instance(src: str, record: str, raw: object, notes: list[str], source: str = NAME) -> UserBundle:
    expect_type(src, raw, dict, "", record)
    assert isinstance(raw, dict)
    qid = shapes.text(src, raw, "question_id", "", record, non_empty=True)
    record = f"{record} ({qid})"
    qtype = shapes.text(src, raw, "question_type", "", record)
    if qtype not in QUESTION_TYPES:
        raise FormatError(
            src, f"expected one of {', '.join(QUESTION_TYPES)}, got {qtype!r}", record=record, path="question_type"
        )
    question = shapes.text(src, raw, "question", "", record, non_empty=True)
    answer = shapes.get(src, raw, "answer", (str, int, float), "", record, required=False, default=None)
    if answer is None:  # (str, int, float) would read "a string or a number or a number"
        raise FormatError(src, "expected a string or a number, got null or nothing", record=record, path="answer")
    question_date = shapes.text(src, raw, "question_date", "", record)
    ids = shapes.string_list(src, raw, "haystack_session_ids", "", record)
    dates = shapes.string_list(src, raw, "haystack_dates", "", record)
    sessions_raw = shapes.get(src, raw, "haystack_sessions", list, "", record)
    answer_ids = shapes.string_list(src, raw, "answer_session_ids", "", record)
    if not (len(ids) == len(dates) == len(sessions_raw)):
        raise FormatError(
            src,
            f"haystack_session_ids ({len(ids)}), haystack_dates ({len(dates)}) and haystack_sessions "
            f"({len(sessions_raw)}) must have the same length",
            record=record,
            path="haystack_sessions",
        )
    where_note = f"{src}: {record}"
    sessions: list[dict] = []
    evidence_turns: list[str] = []
    first_id: dict[str, str] = {}  # haystack id -> stored session id (its first occurrence)
    used: set[str] = set()
    for s, (hid, date, turns_raw) in enumerate(zip(ids, dates, sessions_raw, strict=True)):
        where = f"haystack_sessions[{s}]"
        expect_type(src, turns_raw, list, where, record)
        if not turns_raw:
            notes.append(f"{where_note}: skipped empty session {hid!r} ({where})")
            continue
        sid = hid or f"session-{s}"
        n = 2
        while sid in used:
            sid, n = f"{hid}~{n}", n + 1
        if sid != hid:
            notes.append(f"{where_note}: session id {hid!r} repeats; stored as {sid!r}")
        used.add(sid)
        first_id.setdefault(hid, sid)
        turns: list[dict] = []
        extras: dict[str, dict] = {}
        for t, turn in enumerate(turns_raw):
            tw = f"{where}[{t}]"
            expect_type(src, turn, dict, tw, record)
            role = shapes.text(src, turn, "role", tw, record)
            if role not in ("user", "assistant"):
                raise FormatError(
                    src, f"expected 'user' or 'assistant', got {role!r}", record=record, path=f"{tw}.role"
                )
            content = shapes.text(src, turn, "content", tw, record)
            has_answer = shapes.get(src, turn, "has_answer", bool, tw, record, required=False, default=False)
            if has_answer:
                evidence_turns.append(turn_ref(sid, t))
            extra = shapes.extras(turn, TURN_KEYS)
            if extra:
                extras[str(t)] = extra
            turns.append({"role": role, "content": content})
        meta: dict = {"haystack_date": date, "haystack_index": s}
        if extras:
            meta["turn_extras"] = extras
        sessions.append({"id": sid, "date": parse_date(date), "kind": "life_event", "turns": turns, "meta": meta})
    if not sessions:
        raise FormatError(src, "expected at least one non-empty session", record=record, path="haystack_sessions")
    unknown = [a for a in answer_ids if a not in first_id]
    if unknown:
        notes.append(f"{where_note}: answer_session_ids not in the haystack: {', '.join(unknown)}")
    undated = sum(1 for x in sessions if x["date"] is None)
    if undated:
        notes.append(f"{where_note}: {undated} haystack date(s) are not YYYY/MM/DD …; sessions left undated")
    query = {
        "id": qid,
        "kind": "open",
        "text": question,
        "answer": str(answer),
        "evidence_sessions": list(dict.fromkeys(first_id[a] for a in answer_ids if a in first_id)),
        "evidence_turns": evidence_turns,
        "meta": {
            "question_id": qid,
            "question_type": qtype,
            "question_date": question_date,
            "abstention": is_abstention(qid),
            "answer_session_ids": answer_ids,
        },
    }
    extra = shapes.extras(raw, KEYS)
    user = {
        "id": user_id(qid, source),
        "name": qid,
        "source": source,
        "meta": {"question_id": qid, **({"extra": extra} if extra else {})},
    }
    return shapes.build(UserBundle, {"user": user, "sessions": sessions, "queries": [query]}, src, record)
