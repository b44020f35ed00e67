"""PersonaMem-v2 (Jiang et al., 2025, arXiv 2512.06688; github bowen-upenn/PersonaMem-v2, no licence
file; dataset CC-BY-4.0): the released ``benchmark.csv`` (or ``train.csv`` / ``val.csv``) with the
chat-history JSON files its rows link to. Notes: ../shared/reference/personamem-v2/PROTOCOL.md §2.

Input:

* the CSV, one row per user query (columns in §2.1; :data:`rows.REQUIRED` must be there). Its
  ``user_query`` cell is the Python repr of a dict: read as JSON, else with ``ast.literal_eval``
  (literals only, nothing is evaluated), else the cell itself, as ``evaluate_row`` reads it;
* each ``chat_history_<size>_link`` (relative path) names a JSON file ``{"metadata", "chat_history":
  [messages]}``; the link is resolved against the CSV's folder and each folder above it (the
  official scripts run from the repository root with ``data/benchmark/...csv``), the current
  folder, or ``--histories DIR``. The messages are read as ``evaluate_row`` reads them: a list as
  is, a dict's ``conversations``, else its first value that is a list (``chat_history``).

Mapping (ours; the data has no question ids and no session marks):

* one history file -> one UserBundle ``personamem-v2-<size>[-mm]-<file stem>`` (``-mm``: the
  multimodal variant), with every row that links it; both sizes by default when the rows have 128k
  links (the official run scripts use ``--size both``), ``--history-size`` picks one;
* the history is cut into sessions before every system message after the first, each message a
  turn with its role (the persona system message included) and its text; a multimodal content list
  keeps its text parts joined by spaces (the Gemini client's reduction) and the images are counted
  in the session's ``meta["images_dropped"]``: prefscope sends text only;
* each row -> an ``mcq`` Query ``<key>-mcq`` (options = the correct answer and the distractors,
  shuffled with a stable seed, see :func:`shuffled`) and an ``open`` Query ``<key>-open`` (the
  generative mode; reference answer = ``correct_answer``), in one group ``<key>``; ``<key>`` is
  :func:`rows.row_key` of the persona, query cell and correct answer, which the result-CSV reader
  computes again. Text = the query's ``content`` (the recall sentence is the method's);
  ``gold_preference`` = ``preference`` (none for the literal ``sensitive_info``);
* ``distance_from_related_snippet_to_query_<size>`` -> ``meta[EVIDENCE_DEPTH]["tokens"]`` and its
  1,024-token bin ``meta["distance_bin"]`` (the report's factor); the evidence turn is the first
  history message found by the builder's own two-way substring test on the snippet's first message
  (§2.3; empty messages skipped), kept in ``evidence_turns``.

Memory: the CSV is read row by row keeping only the cells used; then one history file at a time
becomes model objects before the next is read.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from core.benchmarks.personamem_v2 import rows as R
from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, read_json, read_text
from core.model import EVIDENCE_DEPTH, MCQ_LETTERS, UserBundle, turn_ref

NAME = "personamem-v2"
ROLES = ("system", "user", "assistant")
#: Messages of the 32k history the earlier yes/no judge shows (PROTOCOL.md §4, a786f0e8).
VOTE_CONTEXT_MESSAGES = 5


def detect(path: Path) -> bool:
    if path.is_dir():
        return any(_is_benchmark_csv(p) for p in sorted(path.glob("*.csv")))
    return _is_benchmark_csv(path)


def _header(path: Path) -> set[str]:
    head = shapes.head_text(path, 64 * 1024).splitlines()[:1]
    return {n.strip() for n in next(csv.reader(head), [])} if head else set()


def _is_benchmark_csv(path: Path) -> bool:
    if not path.is_file() or path.suffix.lower() != ".csv":
        return False
    names = _header(path)
    return {"user_query", "chat_history_32k_link", "distance_from_related_snippet_to_query_32k"} <= names


def load(
    path: Path,
    max_bytes: int = DEFAULT_MAX_BYTES,
    *,
    histories: str | Path | None = None,
    history_size: str | None = None,
) -> ImportResult:
    if path.is_dir():
        files = [p for p in sorted(path.glob("*.csv")) if _is_benchmark_csv(p)]
        if not files:
            raise FormatError(path.name, "folder holds no PersonaMem-v2 benchmark CSV")
        result = ImportResult(format=NAME)
        for f in files:
            result.extend(load(f, max_bytes, histories=histories, history_size=history_size))
        return result
    if history_size is not None and history_size not in R.SIZES:
        raise FormatError(path.name, f"--history-size: expected one of {', '.join(R.SIZES)}, got {history_size!r}")
    rows = _read_rows(path, max_bytes)
    sizes = [history_size] if history_size else [s for s in R.SIZES if any(r.links.get(s) for r in rows)]
    result = ImportResult(format=NAME)
    roots = _roots(path, histories)
    groups: dict[tuple[str, str], list[_Row]] = {}
    for r in rows:
        for size in sizes:
            link = r.links.get(size, "")
            if link:
                groups.setdefault((size, link), []).append(r)
            elif size == history_size:
                raise FormatError(path.name, f"empty {R.link_column(size)}", record=r.record, path=R.link_column(size))
    vote_context: dict[str, str] = {}
    used_ids: set[str] = set()
    for (size, link), members in sorted(groups.items(), key=lambda kv: (R.SIZES.index(kv[0][0]), kv[0][1])):
        history = _History.read(path.name, link, roots, max_bytes, members[0].record)
        if size == "32k":
            vote_context[link] = history.last_lines(VOTE_CONTEXT_MESSAGES)
        else:
            for r in members:
                small = r.links.get("32k", "")
                if small and small not in vote_context:
                    try:
                        vote_context[small] = _History.read(path.name, small, roots, max_bytes, r.record).last_lines(
                            VOTE_CONTEXT_MESSAGES
                        )
                    except FormatError:
                        vote_context[small] = ""
        bundle = _bundle(path.name, size, history, members, vote_context, result.notes)
        if bundle.user.id in used_ids:
            raise FormatError(
                path.name, f"two history files map to user id {bundle.user.id!r}", record=members[0].record
            )
        used_ids.add(bundle.user.id)
        result.bundles.append(bundle)
    if not result.bundles:
        raise FormatError(path.name, "no row links a chat history")
    result.notes.append(
        f"{path.name}: {len(rows)} rows -> {len(result.bundles)} histories ({', '.join(sizes)}); MCQ options are "
        "shuffled with a stable seed (the official seed is Python's salted hash(), not reproducible)"
    )
    return result


# -- rows -----------------------------------------------------------------------------------------


@dataclass
class _Row:
    record: str
    key: str
    persona_id: str
    query_cell: str
    query: dict
    correct: str
    incorrect: list[str]
    links: dict[str, str]
    distances: dict[str, int | float | None]
    preference: str
    snippet_first: str
    labels: dict[str, str]
    short_persona: str


def _read_rows(path: Path, max_bytes: int) -> list[_Row]:
    out: list[_Row] = []
    seen: dict[str, int] = {}
    text = read_text(path, max_bytes)  # size, empty and UTF-8 checked as every importer does
    try:
        with R.wide_cells(max_bytes):
            reader = csv.DictReader(io.StringIO(text, newline=""))
            header = [h.strip() for h in reader.fieldnames or []]
            absent = [c for c in R.REQUIRED if c not in header]
            if absent:
                raise FormatError(
                    path.name, f"missing column(s) {', '.join(absent)} (the PersonaMem-v2 benchmark CSV has them)"
                )
            for raw in reader:
                record = f"line {reader.line_num}"
                row = {(k or "").strip(): (v or "") for k, v in raw.items() if k is not None}
                r = _row(path.name, record, row)
                seen[r.key] = seen.get(r.key, 0) + 1
                if seen[r.key] > 1:  # the same persona, query and answer twice: kept apart
                    r.key = f"{r.key}-{seen[r.key]}"
                out.append(r)
    except csv.Error as exc:
        raise FormatError(path.name, f"not a readable CSV row ({exc})") from exc
    if not out:
        raise FormatError(path.name, "file has no rows")
    return out


def _row(source: str, record: str, row: dict[str, str]) -> _Row:
    def cell(name: str) -> str:
        value = row.get(name, "")
        if not value.strip():
            raise FormatError(source, "empty cell", record=record, path=name)
        return value

    query = R.parse_user_query(cell("user_query"))
    content = R.content_text(query.get("content"))
    if not content.strip():
        raise FormatError(source, "the query has no text content", record=record, path="user_query")
    correct = cell("correct_answer")
    return _Row(
        record=record,
        key=R.row_key(cell("persona_id"), row["user_query"], correct),
        persona_id=row["persona_id"].strip(),
        query_cell=row["user_query"],
        query={"role": query.get("role", "user"), "content": content},
        correct=correct,
        incorrect=_distractors(row.get("incorrect_answers", "")),
        links={s: row.get(R.link_column(s), "").strip() for s in R.SIZES},
        distances={s: R.number(row.get(R.distance_column(s))) for s in R.SIZES},
        preference=row.get("preference", ""),
        snippet_first=_snippet_first(row.get("related_conversation_snippet", "")),
        labels={k: row[k] for k in R.LABELS if k in row},
        short_persona=row.get("short_persona", ""),
    )


def _distractors(cell: str) -> list[str]:
    """``json.loads`` of the cell; an empty cell or a decode error gives none (as ``evaluate_row``)."""
    if not cell.strip():
        return []
    try:
        value = json.loads(cell)
    except ValueError:
        return []
    return [v if isinstance(v, str) else str(v) for v in value] if isinstance(value, list) else []


def _snippet_first(cell: str) -> str:
    """The text of the evidence snippet's first message (JSON list; a Python literal also read)."""
    if not cell.strip():
        return ""
    value: object
    try:
        value = json.loads(cell)
    except ValueError:
        try:
            value = ast.literal_eval(cell.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return ""
    if isinstance(value, list) and value:
        first = value[0]
        return R.content_text(first.get("content") if isinstance(first, dict) else first)
    return ""


def shuffled(persona_id: str, content: str, options: list[str]) -> list[str]:
    """The options in the order the model sees them: ``random.shuffle`` as the official code, but
    seeded with a stable hash of ``f"{persona_id}_{content}"`` (the official seed is Python's
    ``hash()``, salted per process, so its order cannot be reproduced). Ours."""
    seed = int(hashlib.sha256(f"{persona_id}_{content}".encode()).hexdigest()[:16], 16) % 2**32
    out = list(options)
    random.Random(seed).shuffle(out)
    return out


# -- histories ------------------------------------------------------------------------------------


def _roots(path: Path, histories: str | Path | None) -> list[Path]:
    if histories is not None:
        return [Path(histories)]
    return [*(path.resolve().parent, *path.resolve().parents), Path.cwd()]


@dataclass
class _History:
    link: str
    path: Path
    messages: list[dict]
    metadata: dict

    @classmethod
    def read(cls, source: str, link: str, roots: list[Path], max_bytes: int, record: str) -> _History:
        found = next((root / link for root in roots if (root / link).is_file()), None)
        if found is None:
            raise FormatError(
                source,
                f"history file {link!r} not found beside the CSV or in a folder above it"
                " (name the folder the links are relative to with --histories DIR)",
                record=record,
            )
        data = read_json(found, max_bytes)
        messages = _messages_of(data)
        if messages is None:
            raise FormatError(found.name, "expected a list of messages or an object holding one (chat_history)")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ROLES:
                raise FormatError(
                    found.name,
                    f"expected a {{role, content}} message with role {'/'.join(ROLES)}",
                    path=f"chat_history[{i}]",
                )
        meta = data.get("metadata") if isinstance(data, dict) else None
        return cls(link, found, messages, meta if isinstance(meta, dict) else {})

    def last_lines(self, n: int) -> str:
        """``role: content`` lines of the last ``n`` messages (the earlier judge's context)."""
        return "\n".join(f"{m['role']}: {R.content_text(m.get('content'))}" for m in self.messages[-n:])


def _messages_of(data: object) -> list | None:
    """``evaluate_row``'s reading of a history file (PROTOCOL.md §3.3 step 3)."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return None
    if isinstance(data.get("conversations"), list):
        return data["conversations"]
    for value in data.values():
        if isinstance(value, dict) and isinstance(value.get("conversations"), list):
            return value["conversations"]
        if isinstance(value, list):
            return value
    return None


def _evidence_index(texts: list[str], snippet: str) -> int | None:
    """The builder's test (§2.3): the first message whose stripped text contains the stripped
    snippet or is contained in it. Empty messages are skipped (ours: "" is in every string)."""
    s = snippet.strip()
    if not s:
        return None
    for i, t in enumerate(texts):
        t = t.strip()
        if t and (s in t or t in s):
            return i
    return None


def _bundle(
    source: str, size: str, h: _History, members: list[_Row], vote_context: dict[str, str], notes: list[str]
) -> UserBundle:
    multimodal = "multimodal" in h.link
    uid = f"personamem-v2-{size}{'-mm' if multimodal else ''}-{Path(h.link).stem}"
    texts = [R.content_text(m.get("content")) for m in h.messages]
    starts = sorted({0, len(texts)} | {i for i, m in enumerate(h.messages) if m["role"] == "system" and i > 0})
    sessions: list[dict] = []
    where: dict[int, tuple[str, int]] = {}
    for a, b in zip(starts, starts[1:], strict=False):
        if a >= b:
            continue
        sid = f"{uid}-m{a:06d}"
        images = sum(R.image_count(m.get("content")) for m in h.messages[a:b])
        sessions.append(
            {
                "id": sid,
                "kind": "task",
                "title": f"messages {a}–{b - 1}",
                "turns": [{"role": m["role"], "content": texts[i]} for i, m in enumerate(h.messages[a:b], start=a)],
                "meta": {"messages": [a, b], **({"images_dropped": images} if images else {})},
            }
        )
        for i in range(a, b):
            where[i] = (sid, i - a)
    if not sessions:
        raise FormatError(h.path.name, "the chat history has no messages")
    images = sum(s["meta"].get("images_dropped", 0) for s in sessions)
    if images:
        notes.append(f"{h.path.name}: {images} image part(s) not imported (prefscope sends text; the texts are kept)")
    persona = next((r.short_persona for r in members if r.short_persona.strip()), "") or (
        texts[0] if h.messages[0]["role"] == "system" else ""
    )
    queries: list[dict] = []
    unfound = 0
    for r in members:
        idx = _evidence_index(texts, r.snippet_first)
        unfound += idx is None
        queries += _queries(source, size, r, where.get(idx) if idx is not None else None, vote_context, h.link)
    if unfound:
        notes.append(
            f"{h.path.name}: the evidence snippet of {unfound} row(s) was not found in the history: no evidence turn"
        )
    raw = {
        "user": {
            "id": uid,
            "name": f"persona {members[0].persona_id}",
            "persona": persona,
            "source": NAME,
            "meta": {
                "persona_id": members[0].persona_id,
                "size": size,
                "history_link": h.link,
                "multimodal": multimodal,
                "history_metadata": {k: v for k, v in h.metadata.items() if isinstance(v, (str, int, float))},
            },
        },
        "sessions": sessions,
        "queries": queries,
    }
    try:
        return UserBundle.model_validate(raw)
    except ValidationError as exc:
        raise from_validation(source, exc, record=members[0].record) from exc


def _queries(
    source: str, size: str, r: _Row, evidence: tuple[str, int] | None, vote_context: dict[str, str], link: str
) -> list[dict]:
    distance = r.distances.get(size)
    bin_label = R.distance_bin(distance)
    content = r.query["content"]
    gold = None if r.preference.strip() in ("", "sensitive_info") else r.preference
    meta = {
        "row_key": r.key,
        "persona_id": r.persona_id,
        "size": size,
        "history_link": link,
        "user_query": r.query_cell,
        "correct_answer": r.correct,
        "incorrect_answers": r.incorrect,
        "preference": r.preference,
        **r.labels,
        "distance": distance,
        "distance_bin": bin_label,
        "vote_context_32k": vote_context.get(r.links.get("32k", ""), ""),
        "source_record": f"{source}: {r.record}",
        EVIDENCE_DEPTH: {
            "tokens": distance,
            "bin": bin_label,
            "source": f"PersonaMem-v2 {R.distance_column(size)} column",
        },
    }
    ev = {
        "evidence_sessions": [evidence[0]] if evidence else [],
        "evidence_turns": [turn_ref(*evidence)] if evidence else [],
    }
    out: list[dict] = []
    options = shuffled(r.persona_id, content, [r.correct, *r.incorrect])
    if 2 <= len(options) <= len(MCQ_LETTERS):
        out.append(
            {
                "id": f"{r.key}-mcq",
                "kind": "mcq",
                "text": content,
                "group": r.key,
                "options": options,
                "answer": MCQ_LETTERS[options.index(r.correct)],
                "gold_preference": gold,
                **ev,
                "meta": {**meta, "mode": "mcq"},
            }
        )
    elif len(options) > len(MCQ_LETTERS):
        raise FormatError(
            source, f"{len(options)} options: prefscope stores at most {len(MCQ_LETTERS)}", record=r.record
        )
    out.append(
        {
            "id": f"{r.key}-open",
            "kind": "open",
            "text": content,
            "group": r.key,
            "answer": r.correct,
            "gold_preference": gold,
            **ev,
            "meta": {**meta, "mode": "open"},
        }
    )
    return out
