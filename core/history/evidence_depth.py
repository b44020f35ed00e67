"""A dataset's own figure for how far the gold reference sits from the question, when it gives
distances but no evidence turns (PersonaMem's ``distance_to_ref_*`` columns), as one line of text."""

from __future__ import annotations

from core.model import EVIDENCE_DEPTH, Query


def evidence_depth(query: Query) -> dict | None:
    """The query's ``EVIDENCE_DEPTH`` figures, or None."""
    depth = query.meta.get(EVIDENCE_DEPTH)
    return depth if isinstance(depth, dict) else None


def depth_detail(depth: dict) -> str:
    """ "3 blocks, 0.42 of the context" (what is known besides the tokens)."""
    parts = []
    if isinstance(depth.get("blocks"), (int, float)):
        parts.append(f"{depth['blocks']:g} blocks")
    if isinstance(depth.get("proportion"), (int, float)):
        parts.append(f"{depth['proportion']:.2f} of the context")
    return ", ".join(parts)


def evidence_depth_line(query: Query) -> str | None:
    """E.g. "reference 12,345 tokens (3 blocks, 0.42 of the context) before the question, as
    PersonaMem gives it; no turn-level evidence labels". None when the query has no such figure."""
    depth = evidence_depth(query)
    if depth is None:
        return None
    tokens = depth.get("tokens")
    head = f"reference {tokens:,} tokens" if isinstance(tokens, (int, float)) else "reference depth"
    detail = f" ({depth_detail(depth)})" if depth_detail(depth) else ""
    source = str(depth.get("source") or "the dataset").split(" ")[0]
    return f"{head}{detail} before the question, as {source} gives it; no turn-level evidence labels"
