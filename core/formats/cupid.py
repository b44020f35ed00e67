"""CUPID instances (Kim et al., 2025; HuggingFace ``kixlab/CUPID``).

Input: a JSON array of instances, ``{"instances": [...]}``, one instance object (the generation
pipeline writes one file per instance), JSON Lines, or a folder of such files. An instance::

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
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from core.formats import shapes
from core.formats.base import ImportResult
from core.formats.errors import FormatError, from_validation
from core.formats.reading import DEFAULT_MAX_BYTES, expect_type
from core.model import InstanceType, Preference, Query, Session, Turn, UserBundle

NAME = "cupid"
INSTANCE_TYPES: tuple[InstanceType, ...] = ("consistent", "contrastive", "changing")
INSTANCE_KEYS = frozenset(
    {
        "id",
        "instance_id",
        "persona_id",
        "persona",
        "instance_type",
        "current_request",
        "current_context_factor",
        "current_contextual_preference",
        "current_checklist",
        "prior_interactions",
    }
)
INTERACTION_KEYS = frozenset({"context_factor", "contextual_preference", "dialogue"})
_SUFFIXES = (".json", ".jsonl")


def detect(path: Path) -> bool:
    try:
        files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.suffix.lower() in _SUFFIXES)[:5]
    except OSError:
        return False
    for f in files:
        head = shapes.head_text(f)
        if re.search(r'"current_request"\s*:', head) and re.search(r'"(prior_interactions|persona_id)"\s*:', head):
            return True
    return False


def load(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ImportResult:
    result = ImportResult(format=NAME)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _SUFFIXES and p.is_file())
        if not files:
            raise FormatError(path.name, "folder holds no .json or .jsonl files")
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


def _instances(f: Path, source: str, max_bytes: int) -> Sequence[tuple[str | None, object]]:
    """(label for messages, raw instance) pairs from one file."""
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
    given = shapes.text(source, rec, "instance_type", "", record)
    kind = next((t for t in INSTANCE_TYPES if t == given.strip().lower()), None)
    if kind is None:
        raise FormatError(
            source,
            f"expected 'consistent', 'contrastive' or 'changing', got {given!r}",
            record=record,
            path="instance_type",
        )
    request = shapes.text(source, rec, "current_request", "", record, non_empty=True)
    factor = shapes.text(source, rec, "current_context_factor", "", record)
    preference = shapes.text(source, rec, "current_contextual_preference", "", record, non_empty=True)
    checklist = shapes.string_list(source, rec, "current_checklist", "", record)
    interactions = shapes.get(source, rec, "prior_interactions", list, "", record)
    own_id = shapes.get(source, rec, "id", (str, int), "", record, required=False)
    if own_id is None:
        own_id = shapes.get(source, rec, "instance_id", (str, int), "", record, required=False)

    uid = f"cupid-{own_id}" if own_id not in (None, "") else f"cupid-{persona_id}-{kind}"
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
        if _norm(session.context_factor) == _norm(factor) and _norm(session.contextual_preference) == _norm(preference):
            session.preference_ids.append(pid)
            evidence.append(session.id)
        sessions.append(session)
    raw = {
        "user": {
            "id": uid,
            "name": f"CUPID {persona_id} ({kind})",
            "source": NAME,
            "persona": persona,
            "meta": {
                "persona_id": persona_id,
                "instance_type": kind,
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
