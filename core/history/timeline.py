"""A user's history as timeline rows: one row per session, consecutive fillers folded into one.

The one definition behind ``prefscope show`` and the TUI's timeline. Plain data (no rich, no
textual): each view decides how a row looks. A session's tokens mean one thing everywhere:
:func:`core.history.tokens.session_tokens` (what its turns cost as chat messages), or a
characters / 4 estimate, flagged, while the tokenizer is not loaded or not available offline.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.history.tokens import TokenizerUnavailable, count_many, session_tokens
from core.model import Session, UserBundle
from core.plan import PromptPlan


@dataclass(frozen=True, slots=True)
class TimelineRow:
    position: int  # index of the row's first session in the order shown
    session_ids: tuple[str, ...]  # one session, or every session of a folded filler run
    kind: str  # a session kind; "filler" for a folded run (pool fillers included)
    date: dt.date | None = None
    date_end: dt.date | None = None  # last date of a folded filler run
    expression_type: int | None = None
    preference_ids: tuple[str, ...] = ()
    context_factor: str | None = None
    #: The session's title (PersonaMem's message range, PersonaMem-v3's app and action).
    title: str = ""
    tokens: int = 0
    #: The tokens are a characters / 4 estimate, not a tokenizer count.
    estimated: bool = False
    evidence: bool = False  # gold evidence of the chosen query (any session of a filler run)
    retrieved_rank: int | None = None  # best rank among the session's retrieved turns
    retrieved_similarity: float | None = None
    attribute_evidence: bool = False  # an attribute about the user cites a turn of this session
    #: A preference session of another expression type than the one chosen (not in its history).
    dim: bool = False

    @property
    def count(self) -> int:
        return len(self.session_ids)

    @property
    def session_id(self) -> str | None:
        """The session the row opens; None for a filler run (fillers are not the user's)."""
        return None if self.kind == "filler" else self.session_ids[0]


def estimated_tokens(sessions: Iterable[Session]) -> dict[str, int]:
    """Characters / 4 per session: instant, for a first paint before the tokenizer is loaded."""
    return {s.id: sum(len(t.content) for t in s.turns) // 4 for s in sessions}


def tokens_by_session(sessions: Sequence[Session]) -> tuple[dict[str, int], bool]:
    """(tokens per session id, estimated): real counts by :func:`session_tokens`, or the
    characters / 4 estimate (``estimated`` True) when no tokenizer is available offline."""
    try:
        count_many(t.content for s in sessions for t in s.turns)  # one batch fills the count cache
        return {s.id: session_tokens(s) for s in sessions}, False
    except TokenizerUnavailable:
        return estimated_tokens(sessions), True


def other_expression_type(session: Session, expression_type: int | None) -> bool:
    """A preference session stated in another expression type than the chosen one (1–4)."""
    return (
        bool(expression_type)
        and session.kind == "preference"
        and session.expression_type not in (None, expression_type)
    )


def timeline_rows(
    bundle: UserBundle,
    *,
    expression_type: int | None,
    evidence: Iterable[str],
    tokens: dict[str, int],
    estimated: bool = False,
    plan: PromptPlan | None = None,
    attribute_sessions: Iterable[str] = (),
    hide_other_types: bool = False,
) -> list[TimelineRow]:
    """Rows for a user's history, or for the history a ``plan`` was built with (its order, pool
    fillers included, its token counts and its retrieved turns). Preference sessions of other
    expression types are dimmed, or left out with ``hide_other_types``."""
    evidence = set(evidence)
    attribute_sessions = set(attribute_sessions)
    by_id = {s.id: s for s in bundle.sessions}
    retrieved: dict[str, tuple[int, float]] = {}
    if plan is not None and plan.context:
        order = [c.session_id for c in plan.context]
        tokens = {**tokens, **{c.session_id: c.tokens for c in plan.context}}
        estimated = False
    else:
        order = [s.id for s in bundle.sessions if not (hide_other_types and other_expression_type(s, expression_type))]
    if plan is not None:
        for r in plan.retrieved:
            retrieved.setdefault(r.session_id, (r.rank, r.similarity))

    rows: list[TimelineRow] = []
    fillers: list[tuple[int, str]] = []  # (position, session id) of the filler run being folded

    def fold_fillers() -> None:
        if not fillers:
            return
        ids = tuple(sid for _, sid in fillers)
        dates = [by_id[sid].date for sid in ids if sid in by_id and by_id[sid].date is not None]
        rows.append(
            TimelineRow(
                position=fillers[0][0],
                session_ids=ids,
                kind="filler",
                date=dates[0] if dates else None,
                date_end=dates[-1] if dates else None,
                tokens=sum(tokens.get(sid, 0) for sid in ids),
                estimated=estimated,
                evidence=any(sid in evidence for sid in ids),
            )
        )
        fillers.clear()

    for position, sid in enumerate(order):
        session = by_id.get(sid)
        if session is None or session.kind == "filler":  # a pool filler is not in the bundle
            fillers.append((position, sid))
            continue
        fold_fillers()
        rank, similarity = retrieved.get(sid, (None, None))
        rows.append(
            TimelineRow(
                position=position,
                session_ids=(sid,),
                kind=session.kind,
                date=session.date,
                date_end=session.date,
                expression_type=session.expression_type,
                preference_ids=tuple(session.preference_ids),
                context_factor=session.context_factor,
                title=session.title,
                tokens=tokens.get(sid, 0),
                estimated=estimated,
                evidence=sid in evidence,
                retrieved_rank=rank,
                retrieved_similarity=similarity,
                attribute_evidence=sid in attribute_sessions,
                dim=other_expression_type(session, expression_type),
            )
        )
    fold_fillers()
    return rows
