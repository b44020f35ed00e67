"""Long ids shown in a narrow column: cut from the middle, never from the end.

Stored ids share long starts (``prefeval-travel_restaurant-000``, ``…-001``): a cut at the end
shows the same text on every row. :func:`short_forms` keeps the id's first part and as much of
its end as fits (``prefeval-…restaurant-000``), and gives distinct ids distinct forms. The CLI's
tables and the TUI's results grid both show ids through it; filters and sorts keep the full id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

ELLIPSIS = "…"
#: Where an id's first part ends (``prefeval-``, ``imported:``, ``run-``).
SEPARATORS = "-_:/. "
#: Narrower than this, a cut id says too little: ids are shown whole.
MIN_WIDTH = 6
#: :func:`fitted` never cuts a column narrower than this.
MIN_COLUMN = 10


def short_forms(values: Iterable[str], width: int) -> dict[str, str]:
    """Each distinct value in at most ``width`` characters: whole when it fits, else its first
    part, ``…`` and its end. Two values never get the same form: a value whose form would
    coincide with another's keeps less of its start and more of its end, then more of its start,
    and is shown whole when no cut tells it apart."""
    distinct = set(values)
    forms = {v: v for v in distinct if len(v) <= width or width < MIN_WIDTH}
    cuts = {v: _cuts(v, width) for v in distinct if v not in forms}
    tried = dict.fromkeys(cuts, 0)
    while True:
        current = forms | {v: _form(v, width, cuts[v][i]) if i < len(cuts[v]) else v for v, i in tried.items()}
        counts = Counter(current.values())
        clashing = [v for v, i in tried.items() if counts[current[v]] > 1 and i < len(cuts[v])]
        if not clashing:
            return current
        for v in clashing:
            tried[v] += 1


def _cuts(value: str, width: int) -> list[int]:
    """How many leading characters to keep, best first: up to the first separator (at most half
    the width), then fewer (more of the end), then more."""
    room = width - len(ELLIPSIS)
    cap = max(1, width // 2)
    first = next((i + 1 for i, ch in enumerate(value[:cap]) if ch in SEPARATORS), cap)
    return [*range(first, -1, -1), *range(first + 1, room + 1)]


def _form(value: str, width: int, head: int) -> str:
    tail = width - len(ELLIPSIS) - head
    return value[:head] + ELLIPSIS + (value[-tail:] if tail > 0 else "")


def fitted(
    rows: list[list[str]],
    columns: Sequence[int],
    room: int,
    *,
    headers: Mapping[int, int] | None = None,
    least: int = MIN_COLUMN,
) -> list[list[str]]:
    """``rows`` with the text of ``columns`` cut from the middle (:func:`short_forms`) so that those
    columns together take about ``room`` characters: the narrow ones keep their width and the
    widest share the rest equally, none cut below ``least``. ``headers``: column -> its header's
    width (a column is never narrower than its header)."""
    heads = headers or {}
    widths = {i: max([heads.get(i, 0), *(len(r[i]) for r in rows)]) for i in columns}
    left, wide = room, sorted(columns, key=lambda i: widths[i])
    while wide and widths[wide[0]] <= left // len(wide):
        left -= widths[wide.pop(0)]
    if not wide:
        return rows
    limit = max(least, left // len(wide))
    forms = {i: short_forms((r[i] for r in rows), limit) for i in wide}
    return [[forms[i][v] if i in forms else v for i, v in enumerate(r)] for r in rows]
