"""PersonaMem-v3's chatbot-response metrics, as ``evaluation/metrics.py`` (bowen-upenn/PersonaMem-v3 @
a24ea9ce; ../shared/reference/personamem-v3/PROTOCOL.md §4.2-4.3, §5) computes them. Pure: the
semantic similarity is a function handed in (:mod:`core.benchmarks.personamem_v3.semantic`).

* :func:`tokens`: lower-cased matches of ``[A-Za-z0-9#]+`` of length >= 3 — a ``#`` stays part of
  the token, so ``#hiking`` in a response is the token ``#hiking``, never ``hiking``;
* :func:`hashtag_overlap`: the share of non-empty hashtags whose forms (the tag without its leading
  ``#``, lower-cased, and its camelCase parts of length >= 3) meet the response's tokens;
* :func:`similarity`: ``max(hashtag_overlap, semantic(text, response))``, threshold :data:`THRESHOLD`;
* :func:`score_response_against_slice`: the chatbot task's TARGET / AVOID scores;
* :func:`distance_bin`: ``"n/a"`` below 0, else ``"[lo-hi)"`` 1,024 wide.

Readings where the notes leave a detail open (ours, marked in PROTOCOL.md): the camelCase split is
:data:`CAMEL_PARTS`; a hashtag is stripped of surrounding whitespace and of every leading ``#``; with
an empty TARGET the held-out score and hit are None (no held-out preference to score).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: ``similarity >= THRESHOLD`` is a match, for every metric of §4.
THRESHOLD = 0.5
TOKEN = re.compile(r"[A-Za-z0-9#]+")
MIN_TOKEN = 3
#: camelCase parts: an upper-case run not followed by lower case (``NYC``), a capitalised or
#: lower-case word (``Trail``, ``running``), a digit run. Ours (the notes say "camelCase parts").
CAMEL_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: ``distance_bin``'s width in "tokens".
BIN_WIDTH = 1024
#: ``distance_tokens`` counts events, each a fixed 200 "tokens" (§5).
TOKENS_PER_EVENT = 200
#: The action whose item is scored by ``carve_out_respect`` (§4.3).
CARVE_OUT_ACTION = "asked_not_to_personalize"

#: ``semantic(text, response) -> float``.
Semantic = Callable[[str, str], float]


def tokens(text: str) -> set[str]:
    return {m.lower() for m in TOKEN.findall(text or "") if len(m) >= MIN_TOKEN}


def hashtag_forms(tag: str) -> set[str]:
    """``{tag without leading '#', lower-cased} ∪ {its camelCase parts of length >= 3}``; empty for an empty tag."""
    bare = tag.strip().lstrip("#")
    if not bare:
        return set()
    parts = {p.lower() for p in CAMEL_PARTS.findall(bare) if len(p) >= MIN_TOKEN}
    return {bare.lower(), *parts}


def hashtag_overlap(response: str, hashtags: Sequence[str] | None) -> float:
    """Share of the non-empty hashtags one of whose forms is a token of the response (0 with none)."""
    words = tokens(response)
    forms = [f for f in (hashtag_forms(str(h)) for h in hashtags or ()) if f]
    if not forms:
        return 0.0
    return sum(1 for f in forms if f & words) / len(forms)


def jaccard(text: str, response: str) -> float:
    """The official fallback when sentence-transformers is not installed: token Jaccard."""
    a, b = tokens(text), tokens(response)
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def similarity(response: str, text: str, hashtags: Sequence[str] | None, semantic: Semantic) -> float:
    return max(hashtag_overlap(response, hashtags), semantic(text, response))


def item_text(item: dict[str, Any]) -> str:
    """``persona_item + " " + category``, stripped."""
    return f"{item.get('persona_item') or ''} {item.get('category') or ''}".strip()


@dataclass(frozen=True)
class SliceScores:
    """``score_response_against_slice``'s outputs (§4.3)."""

    held_out_score: float | None
    held_out_hit: int | None
    target_match_recall: float
    target_secondary_match: float
    avoid_leak_rate: float
    avoid_leak_flag: int
    avoid_leak_indices: tuple[int, ...]
    num_target: int
    num_avoid: int
    carve_out_respect: int
    target_scores: tuple[float, ...]
    avoid_scores: tuple[float, ...]

    def metrics(self) -> dict[str, Any]:
        """The keys the official code writes (the per-item scores are ours, for the rationale)."""
        return {
            "held_out_score": self.held_out_score,
            "held_out_hit": self.held_out_hit,
            "target_match_recall": self.target_match_recall,
            "target_secondary_match": self.target_secondary_match,
            "avoid_leak_rate": self.avoid_leak_rate,
            "avoid_leak_flag": self.avoid_leak_flag,
            "avoid_leak_indices": list(self.avoid_leak_indices),
            "num_target": self.num_target,
            "num_avoid": self.num_avoid,
            "carve_out_respect": self.carve_out_respect,
        }


def _share(hits: Sequence[bool]) -> float:
    return sum(hits) / len(hits) if hits else 0.0


def score_response_against_slice(
    response: str,
    target: Sequence[dict[str, Any]],
    avoid: Sequence[dict[str, Any]],
    semantic: Semantic,
    *,
    action: str | None = None,
    user_query: str = "",
    event_hashtags: Sequence[str] | None = None,
) -> SliceScores:
    """Each item scored ``similarity(response, item text, item hashtags)``; TARGET[0] is the held-out
    preference. ``carve_out_respect`` (action ``asked_not_to_personalize`` only) compares the
    response with the **user query text** and the event's hashtags; 1 for every other action."""

    def score(item: dict[str, Any]) -> float:
        return similarity(response, item_text(item), list(item.get("source_hashtags") or ()), semantic)

    t = [score(i) for i in target]
    a = [score(i) for i in avoid]
    t_hit = [s >= THRESHOLD for s in t]
    a_hit = [s >= THRESHOLD for s in a]
    carve = 1
    if action == CARVE_OUT_ACTION:
        carve = int(similarity(response, user_query, list(event_hashtags or ()), semantic) < THRESHOLD)
    return SliceScores(
        held_out_score=t[0] if t else None,
        held_out_hit=int(t_hit[0]) if t else None,
        target_match_recall=_share(t_hit),
        target_secondary_match=_share(t_hit[1:]),
        avoid_leak_rate=_share(a_hit),
        avoid_leak_flag=int(any(a_hit)),
        avoid_leak_indices=tuple(i for i, hit in enumerate(a_hit) if hit),
        num_target=len(t),
        num_avoid=len(a),
        carve_out_respect=carve,
        target_scores=tuple(t),
        avoid_scores=tuple(a),
    )


def distance_bin(tokens_: float | int | None) -> str:
    """``"n/a"`` for a negative (or absent) distance, else ``"[lo-hi)"``, lo = (t // 1024) * 1024."""
    if tokens_ is None or isinstance(tokens_, bool) or tokens_ < 0:
        return "n/a"
    lo = int(tokens_ // BIN_WIDTH) * BIN_WIDTH
    return f"[{lo}-{lo + BIN_WIDTH})"


def bin_order(label: str) -> tuple[int, float, str]:
    """Sort key: numeric bins by their lower bound, then other labels, ``n/a`` last."""
    m = re.match(r"^\[(\d+)-", label)
    if m:
        return (0, float(m.group(1)), label)
    return (2 if label == "n/a" else 1, 0.0, label)
