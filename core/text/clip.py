"""Long texts shown in part: the first part, then how much is left and how to see it all.

Laying out megabytes of text in a terminal takes tens of seconds; views show a prefix and say what
was left out. Stored text and exports are never clipped.
"""

from __future__ import annotations

#: Characters a view shows before clipping: far more than a screen, far less than a slow render.
VIEW_CHARS = 20_000


def clip(text: str, limit: int = VIEW_CHARS) -> tuple[str, int]:
    """The first ``limit`` characters of ``text`` (cut at a line end when one is near) and how
    many characters were left out (0 when the text is whole)."""
    if len(text) <= limit:
        return text, 0
    cut = text.rfind("\n", limit - limit // 10, limit)
    cut = cut if cut > 0 else limit
    return text[:cut], len(text) - cut


def clip_note(hidden: int, how: str) -> str:
    """The line a view puts after a clipped text, e.g. ``… 1,234,567 more characters (how)``."""
    return f"… {hidden:,} more characters ({how})"
