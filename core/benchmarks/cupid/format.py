"""CUPID instances (Kim et al., 2025; HuggingFace ``kixlab/CUPID``).

Input: a JSON array of instances, ``{"instances": [...]}``, one instance object (the generation
pipeline writes one file per instance), JSON Lines, Parquet (the released ``test.parquet``: one row
per instance, a column per field), or a folder of such files. An instance::

    {"persona_id", "instance_type": consistent|contrastive|changing, "current_request",
     "current_context_factor", "current_contextual_preference", "current_checklist": [str],
     "prior_interactions": [{"context_factor", "contextual_preference",
                             "dialogue": [{"role": "user"|"assistant", "content"}]}]}

Mapping: each instance -> one UserBundle ``cupid-<persona_id>-<instance_type>`` (or ``cupid-<id>``
when the record has an ``id``/``instance_id``): the prior interactions become ``task`` sessions in
their given (chronological) order, labelled with their context factor and contextual preference;
the current request becomes one open Query carrying the gold preference, checklist, context factor
and instance type. Its gold evidence (CUPID's *oracle* setting) is the prior sessions with the same
context factor AND the same preference; those sessions also point at one Preference holding the
current contextual preference (evidence key 0: CUPID has no expression types). Any other field is
kept verbatim in ``meta`` (instance-level in ``User.meta["extra"]``, session-level in
``Session.meta``).

Parquet rows go through the same mapping as JSON records (messages name them ``row N``, from 0).
Arrow has no "missing field": a struct field or column absent from some records is null in the
others, so a null inside an object is read as a missing key (an optional field takes its default, a
required one is reported missing, and no ``None`` lands in ``meta``). Dates and times become ISO
strings and decimals numbers; other non-JSON values are refused. pyarrow is imported only when a
``.parquet`` file is looked at.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from decimal import Decimal
from pathlib import Path

from pydantic import ValidationError

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, check_size, expect_type
from core.model import InstanceType, Preference, Query, Session, Turn, UserBundle

NAME = "cupid"
INSTANCE_TYPES: tuple[InstanceType, ...] = ("consistent", "contrastive", "changing")
#: The fields CUPID's own evaluation reads (``_bundle`` refuses a record without one); a Parquet
#: file must have these columns, checked before any data is read.
REQUIRED_COLUMNS = (
    "persona_id",
    "current_request",
    "current_contextual_preference",
    "current_checklist",
    "prior_interactions",
)
#: Read when present (the official code never reads them): without an instance type the user id is
#: ``cupid-<persona_id>``; without a context factor the oracle evidence matches on the preference.
OPTIONAL_COLUMNS = ("instance_type", "current_context_factor")
INSTANCE_KEYS = frozenset({"id", "instance_id", "persona", *REQUIRED_COLUMNS, *OPTIONAL_COLUMNS})
INTERACTION_KEYS = frozenset({"context_factor", "contextual_preference", "dialogue"})
_SUFFIXES = (".json", ".jsonl", ".parquet")
_PARQUET = ".parquet"
_MAGIC = b"PAR1"  # a Parquet file starts and ends with these bytes
_BATCH_ROWS = 64  # rows decoded at a time: a batch of CUPID rows is a few MB at most


def detect(path: Path) -> bool:
    try:
        files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.suffix.lower() in _SUFFIXES)[:5]
    except OSError:
        return False
    for f in files:
        if f.suffix.lower() == _PARQUET:
            columns = _parquet_columns(f)
            if "current_request" in columns and ("prior_interactions" in columns or "persona_id" in columns):
                return True
            continue
        head = shapes.head_text(f)
        if re.search(r'"current_request"\s*:', head) and re.search(r'"(prior_interactions|persona_id)"\s*:', head):
            return True
    return False


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    result = ImportResult(format=NAME)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _SUFFIXES and p.is_file())
        if not files:
            raise FormatError(path.name, "folder holds no .json, .jsonl or .parquet files")
    else:
        files = [path]
    seen: dict[str, str] = {}
    unmatched = 0
    for f in files:
        source = str(f.relative_to(path)) if path.is_dir() else f.name
        for label, instance in _instances(f, source, max_bytes):
            try:
                bundle = _bundle(source, label, instance, seen)
            except ValidationError as exc:  # a backstop: the shape checks should leave nothing to refuse
                raise from_validation(source, exc, record=label or None) from exc
            unmatched += not bundle.queries[0].evidence_sessions
            result.bundles.append(bundle)
    if unmatched:
        result.notes.append(
            f"{unmatched} instance(s) have no prior session with the current context factor and "
            "preference, so their query has no gold evidence session"
        )
    return result


def _instances(f: Path, source: str, max_bytes: int) -> Iterable[tuple[str | None, object]]:
    """(label for messages, raw instance) pairs from one file."""
    if f.suffix.lower() == _PARQUET:
        return _parquet_rows(f, source, max_bytes)
    try:
        records = shapes.load_records(f, max_bytes)
    except FormatError as exc:  # in a folder, name the file by its relative path
        raise shapes.renamed(exc, source) from exc
    label, data = records[0]
    if label is not None:  # JSON Lines
        return records
    if isinstance(data, dict) and "instances" in data:
        instances = shapes.get(source, data, "instances", list, "", None)
        return [(f"instances[{i}]", r) for i, r in enumerate(instances)]
    if isinstance(data, dict):
        return [("", data)]  # one instance per file, as CUPID's generation pipeline writes them
    return [(f"record {i}", r) for i, r in enumerate(expect_type(source, data, list, ""))]


def _parquet_columns(f: Path) -> list[str]:
    """The top-level column names from a Parquet file's footer (no data is read); [] if unreadable."""
    if not _has_parquet_magic(f):
        return []
    try:
        import pyarrow.parquet as pq

        return list(pq.read_schema(f).names)
    except Exception:  # detection never raises: pyarrow missing, a damaged footer, an unreadable file
        return []


def _has_parquet_magic(f: Path) -> bool:
    try:
        with f.open("rb") as fh:
            head = fh.read(4)
            fh.seek(0, 2)
            if fh.tell() < 12:  # magic, footer length, magic: the smallest possible Parquet file
                return False
            fh.seek(-4, 2)
            return head == _MAGIC and fh.read(4) == _MAGIC
    except OSError:
        return False


def _parquet_rows(f: Path, source: str, max_bytes: int) -> Iterator[tuple[str | None, object]]:
    """One ``("row N", record)`` pair per row, decoded a batch at a time, each record as json.load gives it.

    The size limit applies to the file and to the data it holds once decompressed (the footer says).
    """
    size = check_size(f, max_bytes, source)
    if size == 0:
        raise FormatError(source, "file is empty")
    if not _has_parquet_magic(f):
        raise FormatError(source, "not a Parquet file, or a truncated one (no PAR1 marker at its start and end)")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise FormatError(source, "reading Parquet needs pyarrow (pip install pyarrow)") from exc
    try:
        pf = pq.ParquetFile(f)
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(source, f"cannot read the Parquet footer ({_first_line(exc)})") from exc
    with pf:
        meta = pf.metadata
        missing = [c for c in REQUIRED_COLUMNS if c not in pf.schema_arrow.names]
        if missing:
            raise FormatError(
                source, f"not CUPID instances: missing column{'s' * (len(missing) > 1)} {', '.join(missing)}"
            )
        data_bytes = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        if data_bytes > max_bytes:
            raise FormatError(
                source,
                f"file holds {data_bytes / 1e6:.1f} MB of data once decompressed, above the "
                f"{max_bytes / 1e6:.0f} MB import limit (raise it with --max-mb if this is intended)",
            )
        if meta.num_rows == 0:
            raise FormatError(source, "file has no records")
        row = 0
        try:
            for batch in pf.iter_batches(batch_size=_BATCH_ROWS):
                for rec in batch.to_pylist():
                    label = f"row {row}"
                    yield label, _plain(rec, source, label, "")
                    row += 1
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(source, f"row {row}: cannot read the Parquet data ({_first_line(exc)})") from exc


def _plain(value: object, source: str, record: str, where: str) -> object:
    """An Arrow value (from ``to_pylist``) as json.load would give it; a null inside an object is a missing key."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {
            k: _plain(v, source, record, f"{where}.{k}" if where else str(k)) for k, v in value.items() if v is not None
        }
    if isinstance(value, list):
        return [_plain(v, source, record, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, (dt.date, dt.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(
                source, "expected text, got binary data that is not UTF-8", record=record, path=where or None
            ) from None
    raise FormatError(
        source, f"expected a JSON value, got a Parquet {type(value).__name__}", record=record, path=where or None
    )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def _bundle(source: str, label: str | None, rec: object, seen: dict[str, str]) -> UserBundle:
    record = label or None
    expect_type(source, rec, dict, "", record)
    assert isinstance(rec, dict)
    persona_id = str(shapes.get(source, rec, "persona_id", (str, int), "", record)).strip()
    if not persona_id:
        raise FormatError(source, "expected a non-empty id, got ''", record=record, path="persona_id")
    persona = shapes.text(source, rec, "persona", "", record, required=False) or ""
    given = shapes.text(source, rec, "instance_type", "", record, required=False)
    kind = next((t for t in INSTANCE_TYPES if t == (given or "").strip().lower()), None)
    if kind is None and given is not None:
        raise FormatError(
            source,
            f"expected 'consistent', 'contrastive' or 'changing', got {given!r}",
            record=record,
            path="instance_type",
        )
    request = shapes.text(source, rec, "current_request", "", record, non_empty=True)
    factor = shapes.text(source, rec, "current_context_factor", "", record, required=False)
    preference = shapes.text(source, rec, "current_contextual_preference", "", record, non_empty=True)
    checklist = shapes.string_list(source, rec, "current_checklist", "", record)
    interactions = shapes.get(source, rec, "prior_interactions", list, "", record)
    own_id = shapes.get(source, rec, "id", (str, int), "", record, required=False)
    if own_id is None:
        own_id = shapes.get(source, rec, "instance_id", (str, int), "", record, required=False)

    uid = f"cupid-{own_id}" if own_id not in (None, "") else f"cupid-{persona_id}" + (f"-{kind}" if kind else "")
    where_seen = f"{source}: {label}" if label else source
    if uid in seen:
        hint = "" if own_id else " (give each instance an 'id' to keep both)"
        raise FormatError(
            source,
            f"duplicate instance {uid!r}, also at {seen[uid]}{hint}",
            record=record,
            path="id" if own_id else "persona_id",
        )
    seen[uid] = where_seen

    pid = f"{uid}-current"
    sessions, evidence = [], []
    for k, inter in enumerate(interactions):
        session = _session(source, record, f"prior_interactions[{k}]", f"{uid}-s{k + 1:02d}", inter)
        same_factor = factor is None or _norm(session.context_factor) == _norm(factor)
        if same_factor and _norm(session.contextual_preference) == _norm(preference):
            session.preference_ids.append(pid)
            evidence.append(session.id)
        sessions.append(session)
    raw = {
        "user": {
            "id": uid,
            "name": f"CUPID {persona_id}" + (f" ({kind})" if kind else ""),
            "source": NAME,
            "persona": persona,
            "meta": {
                "persona_id": persona_id,
                **({"instance_type": kind} if kind else {}),
                **({"extra": shapes.extras(rec, INSTANCE_KEYS)} if shapes.extras(rec, INSTANCE_KEYS) else {}),
            },
        },
        "sessions": sessions,
        "preferences": [Preference(id=pid, text=preference, evidence={0: evidence} if evidence else {})],
        "queries": [
            Query(
                id=f"{uid}-q",
                kind="open",
                text=request,
                preference_id=pid,
                gold_preference=preference,
                checklist=checklist,
                context_factor=factor,
                instance_type=kind,
                evidence_sessions=evidence,
            )
        ],
    }
    return UserBundle.model_validate(raw)


def _session(source: str, record: str | None, where: str, sid: str, inter: object) -> Session:
    expect_type(source, inter, dict, where, record)
    assert isinstance(inter, dict)
    factor = shapes.text(source, inter, "context_factor", where, record, required=False)
    pref = shapes.text(source, inter, "contextual_preference", where, record, required=False)
    dialogue = shapes.get(source, inter, "dialogue", list, where, record)
    if not dialogue:
        raise FormatError(
            source, "expected at least one message, got an empty array", record=record, path=f"{where}.dialogue"
        )
    turns = []
    for t, msg in enumerate(dialogue):
        at = f"{where}.dialogue[{t}]"
        expect_type(source, msg, dict, at, record)
        shapes.text(source, msg, "content", at, record)  # the role is checked (and worded) by the model
        # Only role and content are read; other message keys (scores, ids) are not part of a Turn.
        raw = {k: msg[k] for k in ("role", "content") if k in msg}
        turns.append(shapes.build(Turn, raw, source, record, at))
    return Session(
        id=sid,
        kind="task",
        context_factor=factor,
        contextual_preference=pref,
        title=factor or "",
        turns=turns,
        meta=shapes.extras(inter, INTERACTION_KEYS),
    )
