"""A LoCoMo session's own conventions: its ``date_time`` strings, its two speakers, and the image
caption the importer appends to a turn's text."""

from __future__ import annotations

import datetime as dt
import re

from core.model import Session

_DATE = re.compile(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}


def parse_date(raw: str) -> dt.date | None:
    """``4:04 pm on 20 January, 2023`` -> 2023-01-20 (time of day dropped: Session.date is a date)."""
    m = _DATE.search(raw)
    if not m or m.group(2).lower() not in _MONTHS:
        return None
    try:
        return dt.date(int(m.group(3)), _MONTHS[m.group(2).lower()], int(m.group(1)))
    except ValueError:
        return None


def turn_text(session: Session, index: int) -> tuple[str, str | None]:
    """A LoCoMo turn's own ``text`` and its image caption (None without one): the importer appends
    the caption to ``Turn.content`` for chat methods; LoCoMo's prompt shows it on a line of its own."""
    turn = session.turns[index]
    image = session.meta.get("images", {}).get(turn.source_id or "", {})
    caption = image.get("blip_caption") if isinstance(image, dict) else None
    if isinstance(caption, str) and caption.strip():
        return turn.content.removesuffix(f"\n[shares an image: {caption.strip()}]"), caption.strip()
    return turn.content, None


def speaker_names(session: Session) -> tuple[list[str], dict[str, str]] | None:
    """(``[speaker_a, speaker_b]``, role -> name) of an imported LoCoMo session; None otherwise."""
    pair, user = session.meta.get("speakers"), session.meta.get("user_speaker")
    if not (isinstance(pair, list) and len(pair) == 2 and user in pair):
        return None
    return list(pair), {"user": user, "assistant": pair[1] if pair[0] == user else pair[0]}
