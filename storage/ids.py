"""Ids as people type them, resolved in one place: the full id or any unique prefix of it.

Run ids (``run-20261125T022038-42a640d5fb56``) are also accepted by a unique prefix of their random
tail (``42a640d5``): that is the short form `prefscope runs` prints when the full id does not fit.
Every command that takes a run, user or query id goes through :func:`resolve_run_id`,
:func:`resolve_user_id` or :func:`resolve_query_id`.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence

from sqlite_utils import Database

#: Shortest tail shown by :func:`short_run_ids` (and accepted alone: fewer hex digits match too much).
SHORT_TAIL = 8
_MIN_TAIL_PREFIX = 4
_LISTED = 8


class UnknownId(LookupError):
    """No stored id is, or starts with, what was given."""


class UnknownExtraction(LookupError):
    """No stored attribute extraction has this id."""

    def __init__(self, extraction_id: str):
        super().__init__(f"no attribute extraction {extraction_id!r} (see `prefscope attributes USER`)")


class AmbiguousId(LookupError):
    """Several stored ids start with what was given; the message lists them."""


def resolve(
    kind: str,
    given: str,
    candidates: Iterable[str],
    *,
    listing: str,
    where: str = "in the database",
    tails: bool = False,
) -> str:
    """The one candidate equal to ``given``, else the one starting with it (with ``tails``: or whose
    random tail starts with it). Raises :class:`UnknownId` / :class:`AmbiguousId` naming ``listing``,
    the command that lists the ids."""
    ids = list(candidates)
    if given in ids:
        return given
    matches = [i for i in ids if given and i.startswith(given)]
    if not matches and tails and len(given) >= _MIN_TAIL_PREFIX:
        matches = [i for i in ids if _tail(i).startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UnknownId(f"{kind} {given!r} not found {where} (see `{listing}`)")
    shown = ", ".join(sorted(matches)[:_LISTED])
    more = f" and {len(matches) - _LISTED} more" if len(matches) > _LISTED else ""
    raise AmbiguousId(f"{kind} {given!r} is ambiguous: it matches {shown}{more}; give more characters")


def resolve_run_id(db: Database, given: str) -> str:
    return resolve("run", given, _column(db, "runs"), listing="prefscope runs", tails=True)


def resolve_run_ids(db: Database, given: Sequence[str]) -> list[str]:
    ids = _column(db, "runs")
    return [resolve("run", g, ids, listing="prefscope runs", tails=True) for g in given]


def resolve_user_id(db: Database, given: str) -> str:
    return resolve("user", given, _column(db, "users"), listing="prefscope users")


def resolve_query_id(user_id: str, query_ids: Iterable[str], given: str) -> str:
    """A query of one user (``p1-o`` → ``p1-open``); the listing is `prefscope show USER`."""
    return resolve("query", given, query_ids, listing=f"prefscope show {user_id}", where=f"for user {user_id!r}")


def short_run_ids(all_ids: Iterable[str], shown: Iterable[str]) -> dict[str, str]:
    """For each shown run id, the shortest prefix of its random tail (at least :data:`SHORT_TAIL`
    hex digits) that :func:`resolve_run_id` maps back to it among ``all_ids``.

    The tails are sorted once: the longest prefix a tail shares with any other is the one it shares
    with a neighbour in that order, so each shown id costs a binary search, not a scan of every id."""
    tails = sorted(_tail(i) for i in all_ids)
    out = {}
    for run_id in shown:
        tail = _tail(run_id)
        at = bisect_left(tails, tail)
        if at == len(tails) or tails[at] != tail:
            out[run_id] = run_id  # not among the stored ids: no prefix of it resolves to it
            continue
        neighbours = tails[max(at - 1, 0) : at] + tails[at + 1 : at + 2]
        shared = max((_common_prefix(tail, other) for other in neighbours), default=0)
        n = max(min(SHORT_TAIL, len(tail)), shared + 1)
        # A tail that another one starts with (or one stored twice) falls back to the full id.
        out[run_id] = tail[:n] if n <= len(tail) else run_id
    return out


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def all_run_ids(db: Database) -> list[str]:
    return _column(db, "runs")


def _tail(run_id: str) -> str:
    return run_id.rsplit("-", 1)[-1]


def _column(db: Database, table: str) -> list[str]:
    return [r[0] for r in db.execute(f"SELECT id FROM {table}").fetchall()]
