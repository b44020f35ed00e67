"""Evidence an answer gives as a quotation: "Since you mentioned "I work night shifts"…".

Distinctive words (:mod:`core.analysis.mentions`) miss an answer that quotes a session whose
words are common in the history, and the Evidence tab listed only gold and retrieved sessions, so a
session an answer quoted verbatim did not appear at all. Here each quoted span of an answer is
located in the history (whitespace- and case-insensitive; a trailing ``…`` of a shortened quote
is dropped) and the session holding it is marked as mentioned by that model, with the quote.

Pure functions over plain texts; no storage, no UI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from core.analysis.mentions import SessionMentions

#: "…", “…”, «…» and ‘…’ (not '…': apostrophes would pair across words).
QUOTED = re.compile(r'"([^"\n]+)"|“([^”\n]+)”|«([^»\n]+)»|‘([^’\n]+)’')
#: Shorter quotes ("yes", "the") match everywhere and locate nothing.
MIN_WORDS = 3
#: A quote is shown cut to this many characters in a mentions cell.
SHOWN = 40


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def quoted_spans(answer: str) -> list[str]:
    """The answer's quotations of at least :data:`MIN_WORDS` words, without a trailing ellipsis."""
    out = []
    for match in QUOTED.finditer(answer):
        span = next(g for g in match.groups() if g is not None).strip()
        span = re.sub(r"(…|\.\.\.)$", "", span).strip(" \t.,;:!?-–—")  # a quote cut or split mid-sentence
        if len(span.split()) >= MIN_WORDS:
            out.append(span)
    return list(dict.fromkeys(out))


def locate_quotes(sessions: Mapping[str, str], answer: str) -> dict[str, list[str]]:
    """Session id -> the answer's quotes found verbatim in that session's text."""
    texts = {sid: _norm(text) for sid, text in sessions.items()}
    found: dict[str, list[str]] = {}
    for span in quoted_spans(answer):
        needle = _norm(span)
        for sid, text in texts.items():
            if needle in text:
                found.setdefault(sid, []).append(span)
    return found


def with_quotes(
    rows: Sequence[SessionMentions],
    sessions: Mapping[str, str],
    answers: Mapping[str, str],
    tokens_to_query: Mapping[str, int] | None = None,
) -> list[SessionMentions]:
    """``rows`` with each model's quoted sessions marked (the quote first among its mentions), and
    a row added for a quoted session that is neither gold nor retrieved."""
    tokens_to_query = tokens_to_query or {}
    by_id = {r.session_id: r for r in rows}
    order = [r.session_id for r in rows]
    for model, answer in answers.items():
        for sid, spans in locate_quotes(sessions, answer).items():
            row = by_id.get(sid) or SessionMentions(sid, False, None, None, tokens_to_query.get(sid), ())
            if sid not in by_id:
                order.append(sid)
            quoted = tuple(f"“{s if len(s) <= SHOWN else s[: SHOWN - 1] + '…'}”" for s in spans)
            mentioned = {**row.mentioned, model: quoted + tuple(row.mentioned.get(model, ()))}
            by_id[sid] = replace(row, mentioned=mentioned)
    return [by_id[sid] for sid in order]


def tokens_after(context: Sequence[tuple[str, int]]) -> dict[str, int]:
    """Session id -> tokens between the end of that session and the question, for a built history
    given oldest first as (session id, tokens)."""
    out: dict[str, int] = {}
    after = 0
    for sid, tokens in reversed(context):
        out.setdefault(sid, after)
        after += tokens
    return out
