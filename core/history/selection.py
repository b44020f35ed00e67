"""Which of a user's sessions a configuration shows, in chronological order."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from core.history.configs import ContextError
from core.model import Query, Session, UserBundle


def chronological(sessions: Sequence[Session]) -> list[Session]:
    """Sort by date; undated sessions inherit the previous dated session's date; ties keep order."""
    keyed = []
    last = dt.date.min
    for i, s in enumerate(sessions):
        if s.date is not None:
            last = s.date
        keyed.append((last, i, s))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [s for _, _, s in keyed]


def user_specific_sessions(bundle: UserBundle, expression_type: int | None) -> list[Session]:
    """Life-event and task sessions, plus the chosen expression type's preference sessions."""
    typed = bundle.expression_types() != [0]
    out = []
    for s in bundle.sessions:
        if s.kind in ("life_event", "task"):
            out.append(s)
        elif s.kind == "preference":
            if not typed or s.expression_type is None or s.expression_type == expression_type:
                out.append(s)
    return chronological(out)


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def oracle_sessions(
    bundle: UserBundle, query: Query | None, expression_type: int | None, notes: list[str]
) -> list[Session]:
    if query is None:
        raise ContextError("the oracle context needs a query (it keeps only the sessions relevant to it)")
    if query.context_factor:
        factor = _norm(query.context_factor)
        pref = _norm(query.gold_preference)
        picked = [
            s
            for s in bundle.sessions
            if _norm(s.context_factor) == factor and (not pref or _norm(s.contextual_preference) == pref)
        ]
        if not query.gold_preference:
            notes.append("oracle: the query has no gold preference; matched on the context factor only")
        if not picked:
            notes.append(f"oracle: no session shares the context factor {query.context_factor!r} and its preference")
        return chronological(picked)
    ids = set(bundle.gold_evidence(query, expression_type))
    notes.append("oracle: the query has no context factor (not CUPID-style); using its gold evidence sessions")
    return chronological([s for s in bundle.sessions if s.id in ids])
