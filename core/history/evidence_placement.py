"""Position sweeps: the gold evidence sessions moved to a chosen depth of the built history.

Needle-in-a-haystack style (RealPref Figs 5–6 vary the distance by configuration; here it is a
free axis). ``depth`` is a fraction of the history's tokens other than the evidence: 0 puts the
evidence first (the whole history between it and the question), 1 puts it last (just before the
question, 0 tokens away). The evidence sessions move together, in the order the context had them,
to the session boundary whose share of the other tokens before it is nearest to ``depth`` (ties:
the earlier boundary). Everything else keeps its order, so the filler the seed drew and its
placement stay as they were: the depth is the only thing that changes between cells of a sweep.
Sessions are never split, so the depth reached is the nearest one a whole-session boundary allows;
the note gives both.
"""

from __future__ import annotations

from collections.abc import Collection

from core.history.types import ContextSession


def place_evidence(
    ordered: list[ContextSession], gold: Collection[str], depth: float, notes: list[str]
) -> list[ContextSession]:
    """``ordered`` with the gold sessions (user sessions whose id is in ``gold``) at ``depth``."""
    evidence = [cs for cs in ordered if cs.pool_id is None and cs.id in gold]
    if not evidence:
        notes.append(f"evidence depth {depth:g}: no gold evidence session in this context; nothing moved")
        return ordered
    rest = [cs for cs in ordered if not (cs.pool_id is None and cs.id in gold)]
    total = sum(cs.tokens for cs in rest)
    if not total:
        notes.append(f"evidence depth {depth:g}: the history holds nothing but the evidence; nothing moved")
        return ordered
    target = depth * total
    before = [0]
    for cs in rest:
        before.append(before[-1] + cs.tokens)
    at = min(range(len(before)), key=lambda i: (abs(before[i] - target), i))
    reached = before[at] / total
    notes.append(
        f"evidence depth {depth:g} (reached {reached:.3f}): {', '.join(cs.id for cs in evidence)} placed after "
        f"{before[at]:,} of the other {total:,} history tokens, {total - before[at]:,} before the question "
        "(moved out of date order on purpose)"
    )
    return rest[:at] + evidence + rest[at:]
