"""The users the command palette searches, indexed once per user list.

With 20,000 users, scoring every "Switch user: …" title with the palette's fuzzy matcher on every
key press took seconds (and the palette then sorted and listed thousands of hits). The index keeps
each title lower-cased once; a search picks at most ``SHOWN`` users with plain string tests (the
query whole, then each of its words, then its characters in order, as the fuzzy matcher accepts
them) and only those are scored. Typing more of a name or id narrows the list.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.text.terminal_safe import terminal_safe

#: Users offered per search: more than a palette shows at once.
SHOWN = 40


class UserIndex:
    """``(label, user id)`` entries (as the run bar's user picker lists them) as palette titles."""

    def __init__(self, entries: Sequence[tuple[str, str]], prefix: str = "Switch user: "):
        self.titles = [terminal_safe(prefix + label) for label, _ in entries]
        self.ids = [user_id for _, user_id in entries]
        self._lowered = [title.lower() for title in self.titles]

    def __len__(self) -> int:
        return len(self.titles)

    def search(self, query: str, limit: int = SHOWN) -> list[int]:
        """Indices of up to ``limit`` titles holding ``query`` (case-insensitively), best first: the
        query as one piece, then all of its words, then its characters in order (the fuzzy
        matcher's own test); ties in user-id order."""
        query = query.lower()
        if not query:
            return []
        found = [i for i, title in enumerate(self._lowered) if query in title][:limit]
        if len(found) == limit:
            return found
        # Each character after the one before it, without backtracking: [^c]*c per character.
        in_order = re.compile("".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in query))
        words = query.split()
        if len(words) > 1:
            found += self._more(found, limit, lambda t: all(w in t for w in words) and in_order.match(t) is not None)
        if len(found) < limit:
            found += self._more(found, limit, lambda t: in_order.match(t) is not None)
        return found

    def _more(self, found: list[int], limit: int, test) -> list[int]:
        seen = set(found)
        more: list[int] = []
        for i, title in enumerate(self._lowered):
            if i not in seen and test(title):
                more.append(i)
                if len(found) + len(more) == limit:
                    break
        return more
