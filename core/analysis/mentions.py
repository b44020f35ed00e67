"""Which history sessions each answer draws on: gold evidence vs retrieved vs mentioned.

A session's *distinctive words* are its content words that are rare in the rest of the history
(they occur in at most ``max_share`` of the other sessions) and absent from the question, ranked
by frequency in the session × rarity. An answer *mentions* a session when it contains some of
those words. It is a lexical signal, deterministic and free (no model): good for spotting that a
model used the retrieved turn about night shifts rather than the gold one about breakfast, not a
judgment of correctness.

Pure functions over plain texts; no storage, no UI.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core.text.words import content_stems, tokens


@dataclass(frozen=True)
class SessionMentions:
    session_id: str
    gold: bool
    #: Best (lowest) retrieval rank of any turn of this session, None when not retrieved.
    retrieved_rank: int | None
    similarity: float | None
    tokens_to_query: int | None
    #: The session's distinctive words (surface forms), most distinctive first.
    distinctive: tuple[str, ...]
    #: model -> distinctive words of this session found in that model's answer.
    mentioned: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def mentioned_by(self, model: str) -> bool:
        return bool(self.mentioned.get(model))


def _surfaces(text: str) -> tuple[Counter, dict[str, str]]:
    counts: Counter = Counter()
    surface: dict[str, str] = {}
    for tok in tokens(text):
        counts[tok.stem] += 1
        surface.setdefault(tok.stem, tok.surface)
    return counts, surface


def distinctive_words(
    sessions: Mapping[str, str], focus: Sequence[str], *, exclude: str = "", top: int = 12, max_share: float = 0.2
) -> dict[str, list[tuple[str, str]]]:
    """For each session id in ``focus``: up to ``top`` (stem, surface) pairs, most distinctive first.

    ``sessions`` is the whole history (id -> text) used to judge rarity; words of ``exclude``
    (the question) never count.
    """
    parsed = {sid: _surfaces(text) for sid, text in sessions.items()}
    df: Counter = Counter()
    for counts, _ in parsed.values():
        df.update(counts.keys())
    n = max(1, len(parsed))
    limit = max(1, math.floor(max_share * n))
    banned = content_stems(exclude) if exclude else set()
    out: dict[str, list[tuple[str, str]]] = {}
    for sid in focus:
        if sid not in parsed:
            out[sid] = []
            continue
        counts, surface = parsed[sid]
        ranked = []
        for stem, tf in counts.items():
            if stem in banned or len(stem) < 4 or df[stem] > limit:
                continue
            idf = math.log((n + 1) / df[stem])
            ranked.append((-tf * idf, stem))
        ranked.sort()
        out[sid] = [(stem, surface[stem]) for _, stem in ranked[:top]]
    return out


def evidence_mentions(
    sessions: Mapping[str, str],
    *,
    question: str,
    gold: Sequence[str],
    retrieved: Sequence[tuple[str, int, float]] = (),
    tokens_to_query: Mapping[str, int] | None = None,
    answers: Mapping[str, str] | None = None,
    top: int = 20,
) -> list[SessionMentions]:
    """Gold sessions first (in the order given), then retrieved-only sessions by rank.

    ``retrieved`` holds (session id, rank, similarity) per retrieved turn; ``answers`` maps a
    model id to its answer text.
    """
    tokens_to_query = tokens_to_query or {}
    answers = answers or {}
    best: dict[str, tuple[int, float]] = {}
    for sid, rank, sim in retrieved:
        if sid not in best or rank < best[sid][0]:
            best[sid] = (rank, sim)
    order = list(dict.fromkeys(gold))
    order += [sid for sid, _ in sorted(best.items(), key=lambda kv: kv[1][0]) if sid not in order]
    words = distinctive_words(sessions, order, exclude=question, top=top)
    answer_stems = {model: content_stems(text) for model, text in answers.items()}
    rows = []
    gold_set = set(gold)
    for sid in order:
        pairs = words.get(sid, [])
        mentioned = {
            model: tuple(surf for stem, surf in pairs if stem in stems) for model, stems in answer_stems.items()
        }
        seen = best.get(sid)
        rows.append(
            SessionMentions(
                sid,
                sid in gold_set,
                seen[0] if seen else None,
                seen[1] if seen else None,
                tokens_to_query.get(sid),
                tuple(surf for _, surf in pairs),
                mentioned,
            )
        )
    return rows
