"""PersonaMem (Jiang et al., 2025, "Know Me, Respond to Me"; github bowen-upenn/PersonaMem, data MIT
on its dataset card): ``questions_<size>.csv`` + ``shared_contexts_<size>.jsonl`` (size 32k, 128k, 1M).

Input, as the official ``inference_standalone_openai.py`` reads it (../shared/reference/personamem):

* the questions CSV (``csv.DictReader``, every value a string) with the columns in :data:`COLUMNS`;
* the contexts JSON Lines file, one ``{"<shared_context_id>": [{"role", "content"}, …]}`` per line,
  roles ``system`` / ``user`` / ``assistant`` (consecutive same-role messages occur). A repeated id:
  the last line wins, as the official index does (and a note says so).

Given a questions CSV, the contexts file is ``shared_contexts_<size>.jsonl`` beside it (``<size>``
from ``questions_<size>.csv``), else the only ``shared_contexts*.jsonl`` there, else ``contexts=``
(``prefscope import --contexts FILE``). A folder imports every ``questions_*.csv`` in it.

Mapping (ours; PersonaMem has users of one context each, and no turn-level evidence labels):

* one shared context -> one UserBundle ``personamem-<size>-<context id>``, stored once however many
  questions share it; its first system message (the persona) is also ``User.persona``;
* the context is split into sessions at every question's end index and before every later system
  message, so each question's history is exactly a run of whole sessions; messages keep their role
  (system included) and text byte for byte; session ids ``<user>-m<first message index>``;
* each CSV row -> an ``mcq`` Query (id = ``question_id``) with its type and topic in ``meta``; the
  options are parsed from ``all_options`` (a JSON or Python list literal) with their ``(a)`` prefix
  removed for display and scoring, and the cell itself is kept verbatim in ``meta["all_options"]``:
  the ``personamem`` method sends that text, as the official script does;
* the question's cut: ``meta[HISTORY_END]`` = the last session before ``end_index_in_shared_context``
  (the context builder never shows a later one); the distance columns go to
  ``meta[EVIDENCE_DEPTH]`` as given. No gold evidence turns or sessions are set: the data has none.

Memory: the CSV is read first; the contexts file is then streamed line by line, a line is parsed
only when a question needs its context, and each context becomes model objects before the next is
read, so a 1M-token context is never held twice as raw Python objects.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, check_size, read_text
from core.model import EVIDENCE_DEPTH, HISTORY_END, MCQ_LETTERS, UserBundle

NAME = "personamem"
#: The columns ``run_evaluation`` reads; a row missing any of them fails there too.
COLUMNS = (
    "persona_id",
    "question_id",
    "question_type",
    "topic",
    "stereotypical",
    "context_length_in_tokens",
    "context_length_in_letters",
    "distance_to_ref_in_blocks",
    "distance_to_ref_in_tokens",
    "num_irrelevant_tokens",
    "distance_to_ref_proportion_in_context",
    "user_question_or_message",
    "correct_answer",
    "all_options",
    "shared_context_id",
    "end_index_in_shared_context",
)
ROLES = ("system", "user", "assistant")
_QUESTIONS = re.compile(r"^questions_(.+)\.csv$", re.IGNORECASE)
#: The key of a contexts line, read without parsing the (possibly megabytes long) rest.
_LINE_KEY = re.compile(rb'^\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:')
_OPTION_PREFIX = re.compile(r"^\s*\(([a-dA-D])\)\s*")


def detect(path: Path) -> bool:
    if path.is_dir():
        return any(_is_questions_csv(p) for p in sorted(path.glob("*.csv")))
    return _is_questions_csv(path)


def _is_questions_csv(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    header = shapes.head_text(path, 64 * 1024).splitlines()[:1]
    names = next(csv.reader(header), []) if header else []
    # Two columns only PersonaMem's questions have (its result CSVs lack the context id);
    # the others are checked by load, which names any that is missing.
    return {"shared_context_id", "user_question_or_message"} <= {n.strip() for n in names}


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES, *, contexts: str | Path | None = None) -> ImportResult:
    if path.is_dir():
        files = [p for p in sorted(path.glob("*.csv")) if _is_questions_csv(p)]
        if not files:
            raise FormatError(path.name, "folder holds no PersonaMem questions_<size>.csv file")
        if contexts is not None and len(files) > 1:
            raise FormatError(path.name, "--contexts names one contexts file: give one questions CSV with it")
        result = ImportResult(format=NAME)
        for f in files:
            result.extend(load(f, max_bytes, contexts=contexts))
        return result
    size = _size_of(path)
    questions = _read_questions(path, max_bytes)
    ctx_path = Path(contexts) if contexts is not None else _contexts_beside(path, size)
    result = ImportResult(format=NAME)
    asked: dict[str, list[_Question]] = {}
    for q in questions:
        asked.setdefault(q.context_id, []).append(q)
    built: dict[str, UserBundle] = {}
    for context_id, line, messages in _stream_contexts(ctx_path, set(asked), max_bytes, result.notes):
        rows = asked[context_id]
        # a later line of the same id replaces the earlier one (the official index keeps the last)
        built[context_id] = _Context(path.name, ctx_path.name, size, context_id, line, messages, rows).bundle(
            result.notes
        )
    missing = [q for q in questions if q.context_id not in built]
    if missing:
        q = missing[0]
        raise FormatError(
            path.name,
            f"shared context {q.context_id!r} is not in {ctx_path.name}"
            + (f" ({len(missing)} questions need a missing context)" if len(missing) > 1 else ""),
            record=q.record,
            path="shared_context_id",
        )
    # Users in the order their first question appears, as a researcher reads the CSV.
    result.bundles = [built[c] for c in dict.fromkeys(q.context_id for q in questions)]
    return result


def _size_of(path: Path) -> str:
    m = _QUESTIONS.match(path.name)
    return m.group(1) if m else path.stem


def _contexts_beside(path: Path, size: str) -> Path:
    named = path.with_name(f"shared_contexts_{size}.jsonl")
    if named.is_file():
        return named
    found = sorted(path.parent.glob("shared_contexts*.jsonl"))
    if len(found) == 1:
        return found[0]
    raise FormatError(
        path.name,
        f"needs its contexts file {named.name} beside it"
        + (f" (found {', '.join(p.name for p in found)}: say which with --contexts)" if found else "")
        + "; or name it with --contexts FILE",
    )


# -- questions ----------------------------------------------------------------------------------


@dataclass
class _Question:
    record: str
    row: dict[str, str]
    context_id: str
    end_index: int
    options: list[str]
    answer: str
    depth: dict = field(default_factory=dict)


def _read_questions(path: Path, max_bytes: int) -> list[_Question]:
    text = read_text(path, max_bytes)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [h.strip() for h in reader.fieldnames or []]
    absent = [c for c in COLUMNS if c not in header]
    if absent:
        raise FormatError(path.name, f"missing column(s) {', '.join(absent)} (PersonaMem's evaluation reads them)")
    out: list[_Question] = []
    seen: dict[tuple[str, str], str] = {}
    try:
        for raw in reader:
            record = f"line {reader.line_num}"
            row = {(k or "").strip(): v for k, v in raw.items()}
            q = _question(path.name, record, row)
            key = (q.context_id, row["question_id"])
            if key in seen:
                raise FormatError(
                    path.name,
                    f"duplicate question_id {row['question_id']!r}, also {seen[key]}",
                    record=record,
                    path="question_id",
                )
            seen[key] = record
            out.append(q)
    except csv.Error as exc:
        raise FormatError(path.name, f"not a readable CSV row ({exc})", record=f"line {reader.line_num}") from exc
    if not out:
        raise FormatError(path.name, "file has no questions")
    return out


def _question(source: str, record: str, row: dict[str, str]) -> _Question:
    def cell(name: str, *, non_empty: bool = True) -> str:
        value = row.get(name)
        if value is None:
            raise FormatError(source, "the row has too few cells", record=record, path=name)
        if non_empty and not value.strip():
            raise FormatError(source, "empty cell", record=record, path=name)
        return value

    end = cell("end_index_in_shared_context").strip()
    if not end.lstrip("-").isdigit():
        raise FormatError(
            source, f"expected a whole number, got {end!r}", record=record, path="end_index_in_shared_context"
        )
    correct = cell("correct_answer").lower().strip("() ")
    if correct not in "abcd" or len(correct) != 1:
        raise FormatError(
            source,
            f"expected an option letter such as (c), got {row['correct_answer']!r}",
            record=record,
            path="correct_answer",
        )
    options = parse_options(source, record, cell("all_options"))
    if MCQ_LETTERS.lower().index(correct) >= len(options):
        raise FormatError(
            source, f"answer ({correct}) but only {len(options)} options", record=record, path="correct_answer"
        )
    cell("user_question_or_message")
    cell("question_id")
    depth = {
        "tokens": _number(row.get("distance_to_ref_in_tokens")),
        "blocks": _number(row.get("distance_to_ref_in_blocks")),
        "proportion": _number(row.get("distance_to_ref_proportion_in_context")),
        "source": "PersonaMem distance_to_ref_* columns",
    }
    return _Question(record, row, cell("shared_context_id").strip(), int(end), options, correct.upper(), depth)


def parse_options(source: str, record: str, cell: str) -> list[str]:
    """``all_options`` as a list of option texts without their ``(a)`` prefix. Released files print
    the list as JSON or as a Python literal; both are read, nothing is evaluated."""
    value: object = None
    try:
        value = json.loads(cell)
    except ValueError:
        try:
            value = ast.literal_eval(cell.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
    if not (isinstance(value, list) and len(value) >= 2 and all(isinstance(v, str) for v in value)):
        raise FormatError(
            source,
            "expected a list of option strings (JSON or Python literal) such as ['(a) …', '(b) …']",
            record=record,
            path="all_options",
        )
    if len(value) > 4:
        raise FormatError(
            source, f"expected at most 4 options (a)-(d), got {len(value)}", record=record, path="all_options"
        )
    return [_OPTION_PREFIX.sub("", v, count=1) for v in value]


def sliced(end_index: int, n: int) -> int:
    """How many messages ``context[:end_index]`` keeps of ``n`` (Python slice rules, negatives included)."""
    return len(range(n)[:end_index])


def _number(value: str | None) -> int | float | None:
    text = (value or "").strip()
    if not text:
        return None
    try:
        n = float(text)
    except ValueError:
        return None
    return int(n) if n.is_integer() and "." not in text else n


# -- contexts -----------------------------------------------------------------------------------


def _stream_contexts(
    path: Path, needed: set[str], max_bytes: int, notes: list[str]
) -> Iterator[tuple[str, str, list[dict]]]:
    """(context id, line label, messages) for each line of a needed context, in one pass in file
    order; lines of other contexts are skipped unparsed. A repeated id is yielded again: the
    caller keeps the last, as the official index does."""
    if not path.is_file():
        raise FormatError(path.name, "no such contexts file")
    check_size(path, max_bytes)
    seen: set[str] = set()
    repeated: set[str] = set()
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            m = _LINE_KEY.match(raw)
            if m is None:
                if raw.strip():
                    raise FormatError(
                        path.name, "expected one {context id: [messages]} object", record=f"line {lineno}"
                    )
                continue
            record = f"line {lineno}"
            try:
                key = json.loads(b'"' + m.group(1) + b'"')
            except ValueError as exc:
                raise FormatError(path.name, f"invalid JSON in the context id ({exc})", record=record) from exc
            if key not in needed:
                continue
            if key in seen:
                repeated.add(key)
            seen.add(key)
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                raise FormatError(path.name, f"invalid JSON ({exc})", record=record) from exc
            if not isinstance(obj, dict) or len(obj) != 1:
                raise FormatError(path.name, "expected an object with exactly one key, the context id", record=record)
            messages = obj[key]
            del obj  # the messages list is the only copy from here on
            yield key, record, messages
    if repeated:
        notes.append(f"{path.name}: {len(repeated)} context id(s) appear on several lines; the last line was used")


class _Context:
    """One shared context and the questions asked of it, being translated into a UserBundle."""

    def __init__(
        self,
        source: str,
        ctx_source: str,
        size: str,
        context_id: str,
        record: str,
        messages: object,
        questions: list[_Question],
    ):
        self.source, self.ctx_source, self.record = source, ctx_source, record
        self.size, self.context_id, self.questions = size, context_id, questions
        if not isinstance(messages, list):
            raise FormatError(ctx_source, "expected an array of messages", record=record, path=context_id)
        self.messages = messages
        self.uid = f"{NAME}-{size}-{context_id}"

    def bundle(self, notes: list[str]) -> UserBundle:
        self._check_messages()
        sessions, end_of = self._sessions(notes)
        personas = sorted({q.row["persona_id"].strip() for q in self.questions})
        first = self.messages[0] if self.messages else None
        persona = first["content"] if isinstance(first, dict) and first.get("role") == "system" else ""
        raw = {
            "user": {
                "id": self.uid,
                "name": f"PersonaMem persona {', '.join(personas)}",
                "persona": persona,
                "source": NAME,
                "meta": {
                    "persona_id": personas[0] if len(personas) == 1 else personas,
                    "shared_context_id": self.context_id,
                    "size": self.size,
                    "context_messages": len(self.messages),
                    "files": [self.source, self.ctx_source],
                },
            },
            "sessions": sessions,
            "queries": [self._query(q, end_of) for q in self.questions],
        }
        try:
            return UserBundle.model_validate(raw)
        except ValidationError as exc:
            raise from_validation(self.source, exc, record=self.questions[0].record) from exc

    def _check_messages(self) -> None:
        for i, m in enumerate(self.messages):
            where = f"{self.context_id}[{i}]"
            if not isinstance(m, dict):
                raise FormatError(self.ctx_source, "expected a {role, content} object", record=self.record, path=where)
            if m.get("role") not in ROLES:
                raise FormatError(
                    self.ctx_source,
                    f"expected one of {', '.join(ROLES)}, got {m.get('role')!r}",
                    record=self.record,
                    path=f"{where}.role",
                )
            if not isinstance(m.get("content"), str):
                raise FormatError(self.ctx_source, "expected a string", record=self.record, path=f"{where}.content")

    def _sessions(self, notes: list[str]) -> tuple[list[dict], dict[int, str]]:
        """Sessions cut at every question's end index and before every later system message;
        returns them and end index -> id of the last session before it ("" for none)."""
        n = len(self.messages)
        over = [q for q in self.questions if not 0 <= q.end_index <= n]
        if over:
            notes.append(
                f"{self.source}: {len(over)} question(s) of context {self.context_id!r} have an end index outside "
                f"its {n} messages; cut as the official script's slice context[:end_index] cuts"
            )
        ends = {sliced(q.end_index, n) for q in self.questions}
        starts = {i for i, m in enumerate(self.messages) if m["role"] == "system"}
        cuts = sorted({0, n} | ends | starts)
        sessions: list[dict] = []
        end_of: dict[int, str] = {0: ""}
        for a, b in zip(cuts, cuts[1:], strict=False):
            if a >= b:
                continue
            sid = f"{self.uid}-m{a:06d}"
            sessions.append(
                {
                    "id": sid,
                    "kind": "task",
                    "title": f"messages {a}–{b - 1}",
                    "turns": [{"role": m["role"], "content": m["content"]} for m in self.messages[a:b]],
                    "meta": {"messages": [a, b], "shared_context_id": self.context_id},
                }
            )
            end_of[b] = sid
        return sessions, end_of

    def _query(self, q: _Question, end_of: dict[int, str]) -> dict:
        cut = sliced(q.end_index, len(self.messages))
        row = q.row
        meta = {
            "question_id": row["question_id"],
            "question_type": row["question_type"],
            "topic": row["topic"],
            "stereotypical": row["stereotypical"],
            "persona_id": row["persona_id"].strip(),
            "shared_context_id": q.context_id,
            "end_index_in_shared_context": q.end_index,
            "all_options": row["all_options"],
            "correct_answer": row["correct_answer"],
            "context_length_in_tokens": _number(row["context_length_in_tokens"]),
            "context_length_in_letters": _number(row["context_length_in_letters"]),
            "num_irrelevant_tokens": _number(row["num_irrelevant_tokens"]),
            "size": self.size,
            "source_record": f"{self.source}: {q.record}",
            HISTORY_END: end_of[cut],
            EVIDENCE_DEPTH: q.depth,
        }
        return {
            "id": row["question_id"],
            "kind": "mcq",
            "text": row["user_question_or_message"],
            "options": q.options,
            "answer": q.answer,
            "meta": meta,
        }
