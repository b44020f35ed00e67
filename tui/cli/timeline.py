"""A user's history as timeline rows: one row per session, consecutive fillers folded into one.

Pure functions over ``core.model`` objects (no I/O, no rich), so the TUI timeline can reuse them.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from core.model import Session, UserBundle


@dataclass
class TimelineRow:
    position: int  # index of the first session in the history
    session_ids: list[str]
    kind: str
    date: dt.date | None = None
    date_end: dt.date | None = None  # last date of a folded filler run
    expression_type: int | None = None
    preference_ids: list[str] = field(default_factory=list)
    tokens: int = 0
    evidence: bool = False

    @property
    def count(self) -> int:
        return len(self.session_ids)


def build_timeline(bundle: UserBundle, *, tokens: dict[str, int], evidence: set[str]) -> list[TimelineRow]:
    rows: list[TimelineRow] = []
    for position, s in enumerate(bundle.sessions):
        n = tokens.get(s.id, 0)
        last = rows[-1] if rows else None
        if s.kind == "filler" and last is not None and last.kind == "filler":
            last.session_ids.append(s.id)
            last.tokens += n
            last.evidence = last.evidence or s.id in evidence
            if s.date is not None:
                last.date = last.date or s.date
                last.date_end = s.date
            continue
        rows.append(
            TimelineRow(
                position=position,
                session_ids=[s.id],
                kind=s.kind,
                date=s.date,
                date_end=s.date,
                expression_type=s.expression_type,
                preference_ids=list(s.preference_ids),
                tokens=n,
                evidence=s.id in evidence,
            )
        )
    return rows


def session_tokens(sessions: list[Session]) -> tuple[dict[str, int], str]:
    """Tokens per session and the unit label: real counts ("t") from ``core.history.tokens`` when its
    tokenizer is available offline, else a characters/4 estimate ("~t")."""
    texts = [t.content for s in sessions for t in s.turns]
    try:
        from core.history.tokens import TokenizerUnavailable, count_many
    except ImportError:
        return _estimate(sessions), "~t"
    try:
        counts = count_many(texts)
    except TokenizerUnavailable:
        return _estimate(sessions), "~t"
    out: dict[str, int] = {}
    i = 0
    for s in sessions:
        out[s.id] = sum(counts[i : i + len(s.turns)])
        i += len(s.turns)
    return out, "t"


def _estimate(sessions: list[Session]) -> dict[str, int]:
    return {s.id: sum(len(t.content) for t in s.turns) // 4 for s in sessions}
