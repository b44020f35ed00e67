"""PersonaMem-v3's app events (``backend/{uid}/<app>.json``: a list of events) and test instances,
read tolerantly: only the fields the harness uses (PROTOCOL.md §1), each looked up by the names
below and nothing else, so a missing one is named in the error.

Event fields read: ``source_object_id``, ``source_timestamp`` (unix s; a numeric string is read
too), ``formatted_timestamp``, ``source_hashtags`` (a list; a string is split on whitespace and
commas), ``source_interaction_type``, ``interaction_format`` (``action``, ``action_label``,
``user_message``), ``content_type``, ``content`` (``title``, ``caption``, ``overall_description``,
``audio_transcript``, ``text``), ``conversation``, ``is_dm``, ``preferences`` (a list of
``{persona_item, category, ...}``; a plain string is an item without category).

Instance fields read (top level first, then inside ``instance_full``): :data:`INSTANCE_FIELDS`.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

#: The apps ``build_gt_slice`` and ``distance_tokens`` read (§4.1, §5), in that order.
APPS = ("instagram", "facebook", "threads", "chatbot")
#: The other app files of a persona folder (not read into the history: the agent prompt names the four above).
OTHER_APPS = ("ai_studio", "calendar")

#: The instance fields this benchmark reads, by purpose (names tried in order).
INSTANCE_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("query_id", "instance_id"),
    "task": ("task_type",),
    "time": ("ts", "ts_iso"),
    "query": ("user_query",),
    "prior": ("prior_conversation",),
    "held_out": ("groundtruth_preference_obj", "groundtruth_preference"),
    "hashtags": ("source_hashtags",),
    "slice": ("gt_slice",),
    "action": ("action",),
    "arm": ("arm",),
    "polarity": ("polarity",),
    "golden": ("golden_response",),
}


def lookup(instance: dict, purpose: str) -> Any:
    """The first present, non-empty value of the purpose's names, at the top level or in ``instance_full``."""
    full = instance.get("instance_full")
    places = [instance, *([full] if isinstance(full, dict) else [])]
    for place in places:
        for name in INSTANCE_FIELDS[purpose]:
            value = place.get(name)
            if value not in (None, "", [], {}):
                return value
    return None


def number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def instance_time(instance: dict) -> float | None:
    """``ts`` (unix s), else ``ts_iso`` parsed (a naive time read as UTC)."""
    full = instance.get("instance_full")
    for place in (instance, full if isinstance(full, dict) else {}):
        t = number(place.get("ts"))
        if t is not None:
            return t
        iso = place.get("ts_iso")
        if isinstance(iso, str) and iso.strip():
            try:
                when = dt.datetime.fromisoformat(iso.strip().replace("Z", "+00:00"))
            except ValueError:
                continue
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
            return when.timestamp()
    return None


def timestamp(event: dict) -> float | None:
    return number(event.get("source_timestamp"))


def hashtag_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [h for h in re.split(r"[\s,]+", value) if h]
    if isinstance(value, list):
        return [str(h) for h in value if isinstance(h, (str, int, float)) and str(h).strip()]
    return []


def hashtags(event: dict) -> list[str]:
    return hashtag_list(event.get("source_hashtags"))


def is_dm(event: dict) -> bool:
    return event.get("is_dm") is True or str(event.get("is_dm")).lower() == "true"


def preference_items(event: dict) -> list[dict[str, Any]]:
    """The event's preferences as ``{persona_item, category}`` dicts (others' fields kept)."""
    out: list[dict[str, Any]] = []
    for p in event.get("preferences") or ():
        if isinstance(p, dict) and str(p.get("persona_item") or "").strip():
            out.append(p)
        elif isinstance(p, str) and p.strip():
            out.append({"persona_item": p, "category": ""})
    return out


def interaction(event: dict) -> dict:
    value = event.get("interaction_format")
    return value if isinstance(value, dict) else {}


def action(event: dict) -> str:
    return str(interaction(event).get("action") or "")


def compact(event: dict, app: str) -> dict[str, Any]:
    """The event as the history shows it (ours): time, app, what the user did, the content's text
    fields and the hashtags; preferences and ground-truth fields are never shown."""
    fmt = interaction(event)
    raw_content = event.get("content")
    content: dict = raw_content if isinstance(raw_content, dict) else {}
    out: dict[str, Any] = {"time": event.get("formatted_timestamp") or _utc(timestamp(event)), "app": app}
    for key, value in (
        ("action", fmt.get("action_label") or fmt.get("action")),
        ("user_message", fmt.get("user_message")),
        ("content_type", event.get("content_type")),
        *((k, content.get(k)) for k in ("title", "caption", "overall_description", "audio_transcript", "text")),
    ):
        if isinstance(value, str) and value.strip():
            out[key] = value.strip()
    conversation = event.get("conversation")
    if isinstance(conversation, list) and conversation:
        out["conversation"] = [
            {"role": str(m.get("role", "")), "content": str(m.get("content", ""))}
            for m in conversation
            if isinstance(m, dict)
        ]
    tags = hashtags(event)
    if tags:
        out["hashtags"] = tags
    return out


def _utc(t: float | None) -> str:
    return "" if t is None else dt.datetime.fromtimestamp(t, dt.UTC).strftime("%H:%M, %m/%d/%Y")
