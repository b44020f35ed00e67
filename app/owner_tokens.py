"""A stored user's (or filler pool's) tokens, meaning what they mean everywhere else: the sum of
its sessions' :func:`core.history.tokens.session_tokens` (every turn as a chat message, content
plus ``MESSAGE_OVERHEAD``), the count `prefscope show` and the workbench's timeline give.

Counting reads every turn; past :data:`COUNT_CHARS` characters (seconds of tokenizing), or
without the tokenizer offline, it falls back to the characters / 4 estimate those views use
then, and says so."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

#: Above this many characters of stored turns the listing estimates instead of counting
#: (tokenizing runs at roughly 5-10 MB of text per second per core).
COUNT_CHARS = 16_000_000


@dataclass
class OwnerTokens:
    users: dict[str, int] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)
    #: None: real counts; else why they are characters / 4 estimates.
    estimated: str | None = None


def owner_tokens(workbench, *, count_chars: int | None = None) -> OwnerTokens:
    """Tokens of every stored user and filler pool (``workbench``'s database, on its thread);
    estimated past ``count_chars`` characters of turns (default :data:`COUNT_CHARS`)."""
    from core.history.tokens import TokenizerUnavailable
    from storage.owner_turns import owner_chars

    chars = owner_chars(workbench.db)
    if chars > (COUNT_CHARS if count_chars is None else count_chars):
        return _estimated(workbench, f"{chars / 1e6:,.0f}M characters: too many to count in a listing")
    try:
        return _counted(workbench)
    except TokenizerUnavailable:
        return _estimated(workbench, "the tokenizer is not available offline")


def _counted(workbench) -> OwnerTokens:
    from core.history.tokens import MESSAGE_OVERHEAD, count_many
    from storage.owner_turns import owner_turns

    owners: list[tuple[bool, str]] = []
    texts: list[str] = []
    for is_pool, owner, content in owner_turns(workbench.db):
        owners.append((is_pool, owner))
        texts.append(content)
    totals: dict[tuple[bool, str], int] = defaultdict(int)
    for key, n in zip(owners, count_many(texts), strict=True):  # one batch: every core
        totals[key] += n + MESSAGE_OVERHEAD
    out = OwnerTokens()
    for (is_pool, owner), n in totals.items():
        (out.pools if is_pool else out.users)[owner] = n
    return out


def _estimated(workbench, why: str) -> OwnerTokens:
    from storage.owner_turns import estimated_owner_tokens

    out = OwnerTokens(estimated=why)
    for is_pool, owner, n in estimated_owner_tokens(workbench.db):
        (out.pools if is_pool else out.users)[owner] = n
    return out
