"""The TARGET / AVOID ground-truth slice of a test item and its evidence distance, as
``evaluation/inference_utils.py`` ``build_gt_slice`` (@ 00c8a9f0; PROTOCOL.md §4.1) and
``evaluation/tasks/chatbot_response.py`` (@ b8066320; §5) compute them.

Slice: the **raw** events (no time mask: ground truth may look past T) of :data:`events.APPS` with
``T - 86400 <= source_timestamp <= T + 86400``; every preference of a kept event is an item
``{persona_item, category, source_hashtags (the event's), polarity, source_app, source_timestamp,
source_interaction_type}``, polarity ``positive`` / ``negative`` when the interaction type contains
that word (neither: not in the slice). TARGET = the held-out preference first (``is_held_out``),
then the positive items, de-duplicated by ``persona_item``; AVOID = every negative item, not
de-duplicated. Events are read app by app in that order, each file in its own order.

Distance: ``support_ts`` = the latest time-masked event (``< T``, DMs excluded) of those apps sharing
a hashtag (case-insensitive, exact) with the instance's; ``200 x`` the number of time-masked events
after it; ``-1`` when no event shares a hashtag.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.benchmarks.personamem_v3 import events as E
from core.benchmarks.personamem_v3.metrics import TOKENS_PER_EVENT

WINDOW_SECONDS = 86400


def polarity(interaction_type: str) -> str | None:
    if "positive" in interaction_type:
        return "positive"
    if "negative" in interaction_type:
        return "negative"
    return None


def build_gt_slice(
    app_events: Mapping[str, Sequence[dict]],
    t: float,
    held_out: dict[str, Any] | None,
    window: float = WINDOW_SECONDS,
) -> dict[str, list[dict[str, Any]]]:
    items: list[dict[str, Any]] = []
    for app in E.APPS:
        for ev in app_events.get(app, ()):
            ts = E.timestamp(ev)
            if ts is None or not (t - window <= ts <= t + window):
                continue
            itype = str(ev.get("source_interaction_type") or "")
            pol = polarity(itype)
            for p in E.preference_items(ev):
                items.append(
                    {
                        "persona_item": p.get("persona_item"),
                        "category": p.get("category") or "",
                        "source_hashtags": E.hashtags(ev),
                        "polarity": pol,
                        "source_app": app,
                        "source_timestamp": ts,
                        "source_interaction_type": itype,
                    }
                )
    target: list[dict[str, Any]] = []
    seen: set[str] = set()
    if held_out is not None:
        target.append({**held_out, "is_held_out": True})
        seen.add(str(held_out.get("persona_item")))
    for item in items:
        if item["polarity"] == "positive" and str(item["persona_item"]) not in seen:
            seen.add(str(item["persona_item"]))
            target.append(item)
    avoid = [item for item in items if item["polarity"] == "negative"]
    return {"target": target, "avoid": avoid}


def frozen_slice(value: object) -> dict[str, list[dict[str, Any]]] | None:
    """An instance's frozen ``gt_slice``: ``{"target": [...], "avoid": [...]}`` (key case ignored;
    ``target_items`` / ``avoid_items`` read too); None when it holds neither list."""
    if not isinstance(value, dict):
        return None
    keys = {str(k).lower(): v for k, v in value.items()}
    target = next((keys[k] for k in ("target", "target_items") if isinstance(keys.get(k), list)), None)
    avoid = next((keys[k] for k in ("avoid", "avoid_items") if isinstance(keys.get(k), list)), None)
    if target is None and avoid is None:
        return None

    def items(raw: list | None) -> list[dict[str, Any]]:
        out = []
        for i in raw or []:
            if isinstance(i, dict):
                out.append({**i, "source_hashtags": E.hashtag_list(i.get("source_hashtags"))})
            elif isinstance(i, str):
                out.append({"persona_item": i, "category": "", "source_hashtags": []})
        return out

    return {"target": items(target), "avoid": items(avoid)}


def time_masked(app_events: Mapping[str, Sequence[dict]], t: float) -> list[tuple[float, str, dict]]:
    """The agent's view at T of the four apps: ``source_timestamp < T``, DMs excluded, time-ordered."""
    out = [
        (ts, app, ev)
        for app in E.APPS
        for ev in app_events.get(app, ())
        if (ts := E.timestamp(ev)) is not None and ts < t and not E.is_dm(ev)
    ]
    return sorted(out, key=lambda x: x[0])


def distance_tokens(app_events: Mapping[str, Sequence[dict]], t: float, source_hashtags: Sequence[str]) -> int:
    wanted = {h.lower() for h in source_hashtags if h}
    masked = time_masked(app_events, t)
    support = [ts for ts, _, ev in masked if wanted & {h.lower() for h in E.hashtags(ev)}]
    if not support:
        return -1
    latest = max(support)
    return TOKENS_PER_EVENT * sum(1 for ts, _, _ in masked if ts > latest)
