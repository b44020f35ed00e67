"""Model objects <-> table rows, one pair of functions per table, kept next to each other.

Writing takes validated model objects (importers validate); reading rebuilds them with
``model_construct`` (no re-validation) because what is read was validated on the way in, and
loading a long history must be fast. :data:`STORED_FIELDS` lists every model field these functions
carry, and a test compares it with ``core.model``: a new field there fails that test until a
migration adds its column here.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import json
from collections.abc import Iterator
from itertools import starmap
from typing import TypeVar

from pydantic import BaseModel

from core.model import Attribute, LifeEvent, Preference, Query, Session, Turn, User

M = TypeVar("M", bound=BaseModel)

STORED_FIELDS: dict[type, frozenset[str]] = {
    User: frozenset({"id", "name", "demographics", "persona", "extended_persona", "life_events", "source", "meta"}),
    Session: frozenset(
        {
            "id",
            "date",
            "kind",
            "expression_type",
            "preference_ids",
            "title",
            "context_factor",
            "contextual_preference",
            "turns",
            "meta",
        }
    ),
    Turn: frozenset({"role", "content", "source_id"}),
    LifeEvent: frozenset({"date", "event"}),
    Preference: frozenset(
        {"id", "text", "topic", "type", "origin", "derived_from", "infer_reason", "formed", "evidence"}
    ),
    Query: frozenset(
        {
            "id",
            "kind",
            "text",
            "preference_id",
            "group",
            "options",
            "answer",
            "explanation",
            "evidence_sessions",
            "evidence_turns",
            "gold_preference",
            "checklist",
            "context_factor",
            "instance_type",
            "meta",
        }
    ),
    Attribute: frozenset({"id", "text", "reasoning", "confidence", "evidence_turns", "source"}),
}


def dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _date(value: dt.date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _undate(text: str | None) -> dt.date | None:
    return dt.date.fromisoformat(text) if text is not None else None


def _event_out(e: LifeEvent) -> dict:
    return {"date": _date(e.date), "event": e.event}


def _event_in(d: dict) -> LifeEvent:
    return LifeEvent.model_construct(date=_undate(d["date"]), event=d["event"])


# -- users -------------------------------------------------------------------------------
def user_row(u: User, *, format: str, imported_at: str) -> dict:
    return {
        "id": u.id,
        "name": u.name,
        "source": u.source,
        "persona": u.persona,
        "extended_persona": u.extended_persona,
        "demographics": dumps(u.demographics),
        "life_events": dumps([_event_out(e) for e in u.life_events]),
        "meta": dumps(u.meta),
        "format": format,
        "imported_at": imported_at,
    }


USER_COLUMNS = "id, name, source, persona, extended_persona, demographics, life_events, meta"


def user_from(row: tuple) -> User:
    id_, name, source, persona, extended, demographics, life_events, meta = row
    return User.model_construct(
        id=id_,
        name=name,
        demographics=json.loads(demographics),
        persona=persona,
        extended_persona=extended,
        life_events=[_event_in(e) for e in json.loads(life_events)],
        source=source,
        meta=json.loads(meta),
    )


# -- sessions and turns --------------------------------------------------------------------
def session_row(s: Session, *, position: int, user_id: str | None = None, pool_id: str | None = None) -> dict:
    return {
        "user_id": user_id,
        "pool_id": pool_id,
        "id": s.id,
        "position": position,
        "date": _date(s.date),
        "kind": s.kind,
        "expression_type": s.expression_type,
        "preference_ids": dumps(s.preference_ids),
        "title": s.title,
        "context_factor": s.context_factor,
        "contextual_preference": s.contextual_preference,
        "meta": dumps(s.meta),
        "n_turns": len(s.turns),
        "chars": sum(len(t.content) for t in s.turns),
    }


def turn_rows(s: Session, session_pk: int) -> list[dict]:
    return [
        {"session_pk": session_pk, "idx": i, "role": t.role, "content": t.content, "source_id": t.source_id}
        for i, t in enumerate(s.turns)
    ]


SESSION_COLUMNS = (
    "id, date, kind, expression_type, preference_ids, title, context_factor, contextual_preference, meta, n_turns"
)
#: Turns are selected in history order (session position, then index) and cut by ``n_turns``.
TURN_COLUMNS = "role, content, source_id"

_EMPTY_LIST = "[]"
_EMPTY_DICT = "{}"
# pydantic models keep their state in four slots of BaseModel; their descriptors' ``__set__`` is the
# fastest way to fill them (no Python-level __setattr__). These are exactly the slots that
# pydantic's own ``model_construct`` fills; ``tests/storage/test_rows.py`` pins the behaviour.
_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def assemble(cls: type[M], values: dict) -> M:
    """``cls.model_construct(**values)`` without its per-field default handling: ``values`` must
    hold every field (:data:`STORED_FIELDS`). Used for the thousands of objects of a long history.
    """
    obj: M = _new(cls)
    _set_dict(obj, values)
    _set_fields(obj, set(values))
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def _turn(role: str, content: str, source_id: str | None, _cls: type[Turn] = Turn) -> Turn:
    obj: Turn = _new(_cls)
    _set_dict(obj, {"role": role, "content": content, "source_id": source_id})
    _set_fields(obj, {"role", "content", "source_id"})
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a history's objects.

    The objects are acyclic (plain data), so nothing is lost; without the pause CPython re-scans
    the growing young generation dozens of times while a long history is built (~15% of load time).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class CorruptHistory(RuntimeError):
    """Stored turn counts and turn rows disagree (the database was edited outside prefscope)."""


def sessions_from(session_rows: list[tuple], turn_rows_: list[tuple]) -> list[Session]:
    """Sessions (rows in history order) with their turns (rows in the same order, each session's
    ``n_turns`` in a row)."""
    turns = list(starmap(_turn, turn_rows_))
    loads = json.loads
    fromiso = dt.date.fromisoformat
    out = []
    offset = 0
    for id_, date, kind, expr, pref_ids, title, factor, contextual, meta, n_turns in session_rows:
        end = offset + n_turns
        out.append(
            assemble(
                Session,
                {
                    "id": id_,
                    "date": fromiso(date) if date is not None else None,
                    "kind": kind,
                    "expression_type": expr,
                    "preference_ids": [] if pref_ids == _EMPTY_LIST else loads(pref_ids),
                    "title": title,
                    "context_factor": factor,
                    "contextual_preference": contextual,
                    "turns": turns[offset:end],
                    "meta": {} if meta == _EMPTY_DICT else loads(meta),
                },
            )
        )
        offset = end
    if offset != len(turns):
        raise CorruptHistory(f"sessions list {offset} turns but {len(turns)} turn rows were found")
    return out


# -- preferences ---------------------------------------------------------------------------
def preference_row(p: Preference, *, user_id: str, position: int) -> dict:
    return {
        "user_id": user_id,
        "id": p.id,
        "position": position,
        "text": p.text,
        "topic": p.topic,
        "type": p.type,
        "origin": p.origin,
        "derived_from": dumps(p.derived_from),
        "infer_reason": p.infer_reason,
        "formed": dumps(_event_out(p.formed)) if p.formed is not None else None,
        "evidence": dumps({str(k): v for k, v in p.evidence.items()}),
    }


PREFERENCE_COLUMNS = "id, text, topic, type, origin, derived_from, infer_reason, formed, evidence"


def preference_from(row: tuple) -> Preference:
    id_, text, topic, type_, origin, derived_from, infer_reason, formed, evidence = row
    return Preference.model_construct(
        id=id_,
        text=text,
        topic=topic,
        type=type_,
        origin=origin,
        derived_from=json.loads(derived_from),
        infer_reason=infer_reason,
        formed=_event_in(json.loads(formed)) if formed is not None else None,
        evidence={int(k): v for k, v in json.loads(evidence).items()},
    )


# -- queries -------------------------------------------------------------------------------
def query_row(q: Query, *, user_id: str, position: int) -> dict:
    return {
        "user_id": user_id,
        "id": q.id,
        "position": position,
        "kind": q.kind,
        "text": q.text,
        "preference_id": q.preference_id,
        "query_group": q.group,
        "options": dumps(q.options),
        "answer": q.answer,
        "explanation": q.explanation,
        "evidence_sessions": dumps(q.evidence_sessions),
        "evidence_turns": dumps(q.evidence_turns),
        "gold_preference": q.gold_preference,
        "checklist": dumps(q.checklist),
        "context_factor": q.context_factor,
        "instance_type": q.instance_type,
        "meta": dumps(q.meta),
    }


QUERY_COLUMNS = (
    "id, kind, text, preference_id, query_group, options, answer, explanation, evidence_sessions, "
    "evidence_turns, gold_preference, checklist, context_factor, instance_type, meta"
)


def query_from(row: tuple) -> Query:
    (
        id_,
        kind,
        text,
        preference_id,
        group,
        options,
        answer,
        explanation,
        evidence_sessions,
        evidence_turns,
        gold_preference,
        checklist,
        context_factor,
        instance_type,
        meta,
    ) = row
    return Query.model_construct(
        id=id_,
        kind=kind,
        text=text,
        preference_id=preference_id,
        group=group,
        options=json.loads(options),
        answer=answer,
        explanation=explanation,
        evidence_sessions=json.loads(evidence_sessions),
        evidence_turns=json.loads(evidence_turns),
        gold_preference=gold_preference,
        checklist=json.loads(checklist),
        context_factor=context_factor,
        instance_type=instance_type,
        meta=json.loads(meta),
    )


# -- attributes ----------------------------------------------------------------------------
def attribute_row(a: Attribute, *, user_id: str, position: int) -> dict:
    return {
        "user_id": user_id,
        "id": a.id,
        "position": position,
        "text": a.text,
        "reasoning": a.reasoning,
        "confidence": a.confidence,
        "evidence_turns": dumps(a.evidence_turns),
        "source": a.source,
    }


ATTRIBUTE_COLUMNS = "id, text, reasoning, confidence, evidence_turns, source"


def attribute_from(row: tuple) -> Attribute:
    id_, text, reasoning, confidence, evidence_turns, source = row
    return Attribute.model_construct(
        id=id_,
        text=text,
        reasoning=reasoning,
        confidence=confidence,
        evidence_turns=json.loads(evidence_turns),
        source=source,
    )
