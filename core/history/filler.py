"""Choosing filler pools, drawing filler sessions to a token target and scattering them (RealPref Table 2).

A context draws from the pools its RunSpec names, by default the user's own source's pool
(:func:`select_pools`), never from every pool imported: importing another dataset must not change
an existing user's prompt. Filler is drawn without replacement from one seeded permutation of
those pools (interval first, then tail). When the pools run out, a fresh permutation is drawn and
sessions repeat. Targets are filler tokens, hit within ±2 % with whole sessions; after a run of
skips the last session is cut at a turn and token boundary to land on the target.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, TypeVar

from core.history.configs import ContextConfig, ContextError
from core.history.prefeval_turns import POOL_ID as PREFEVAL_POOL_ID
from core.history.tokens import MESSAGE_OVERHEAD, count_tokens, session_tokens, truncate_to_tokens
from core.history.types import ContextSession
from core.model import FillerPool, Session, Turn

#: Allowed relative deviation from a filler target.
TOLERANCE = 0.02
#: Consecutive too-large filler sessions skipped before the last one is cut to size.
MAX_SKIPS = 25


#: Sources of the pools shipped with prefscope and of hand-written native data: the fallback for
#: a user whose own dataset brought no pool (LoCoMo, CUPID, chat logs).
SAMPLE_SOURCES = ("sample", "native")


class UnknownFillerPool(ContextError, LookupError):
    """A spec names a filler pool the database (or the given files) does not hold."""

    def __init__(self, missing: list[str], known: Sequence[str]):
        names = ", ".join(repr(m) for m in missing)
        listed = ", ".join(known) or "none (import one: prefscope import PATH)"
        super().__init__(f"no filler pool {names}; known pools: {listed}")
        self.missing = missing


class PoolLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def source(self) -> str: ...


P = TypeVar("P", bound=PoolLike)


def draws_filler(cfg: ContextConfig) -> bool:
    """Whether the configuration adds sessions from filler pools."""
    return bool(cfg.filler_target) or cfg.name == "prefeval-turns"


def default_pool_ids(user_source: str, pools: Sequence[PoolLike], context: str = "normal") -> list[str]:
    """The pools a user's context draws from when the spec names none: the pools of the user's own
    source (sample users: the sample pool; PrefEval users: PrefEval's inter turns), else the sample /
    native pools. Never "every pool": importing another dataset must not change anyone's prompt.
    The prefeval-turns context always takes PrefEval's inter-turn pool (its protocol)."""
    if context == "prefeval-turns":
        return [PREFEVAL_POOL_ID]
    own = sorted(p.id for p in pools if p.source == user_source)
    return own or sorted(p.id for p in pools if p.source in SAMPLE_SOURCES)


def select_pools(requested: Sequence[str] | None, user_source: str, pools: Sequence[P], context: str) -> list[P]:
    """The pools named in the spec (``requested``), or the user's default ones, ordered by id.
    Raises :class:`UnknownFillerPool` naming the known pools when a named one does not exist."""
    by_id = {p.id: p for p in pools}
    wanted = list(requested) if requested is not None else default_pool_ids(user_source, pools, context)
    missing = [i for i in wanted if i not in by_id]
    if missing and (requested is not None or context != "prefeval-turns"):
        raise UnknownFillerPool(missing, sorted(by_id))
    # prefeval-turns without its pool: build says how to import it (core.history.prefeval_turns)
    return [by_id[i] for i in sorted(set(wanted)) if i in by_id]


class FillerSource:
    """Seeded draw of filler sessions: one permutation of all pools, redrawn (with notice) when spent."""

    def __init__(self, pools: Sequence[FillerPool], seed: int):
        self.items = [(p.id, s) for p in pools for s in p.sessions]
        self.rng = random.Random(f"prefscope-filler/{seed}")
        self.round = 0
        self.order: list[int] = []
        self.pos = 0
        self.reused = False

    def __len__(self) -> int:
        return len(self.items)

    def next(self) -> tuple[str, Session, int] | None:
        if not self.items:
            return None
        if self.pos >= len(self.order):
            self.round += 1
            if self.round > 1:
                self.reused = True
            self.order = list(range(len(self.items)))
            self.rng.shuffle(self.order)
            self.pos = 0
        pool_id, session = self.items[self.order[self.pos]]
        self.pos += 1
        return pool_id, session, self.round


def cut_session(session: Session, budget: int, encoding: str) -> Session | None:
    """The session cut to at most ``budget`` tokens at a turn, then token, boundary."""
    turns: list[Turn] = []
    used = 0
    for turn in session.turns:
        cost = count_tokens(turn.content, encoding) + MESSAGE_OVERHEAD
        if used + cost <= budget:
            turns.append(turn)
            used += cost
            continue
        room = budget - used - MESSAGE_OVERHEAD
        if room > 0:
            turns.append(turn.model_copy(update={"content": truncate_to_tokens(turn.content, room, encoding)}))
        break
    if not turns:
        return None
    return session.model_copy(update={"turns": turns, "meta": {**session.meta, "truncated": True}})


def fill(target: int, segment: str, source: FillerSource, encoding: str) -> tuple[list[ContextSession], int, bool]:
    """Whole filler sessions summing to within ±TOLERANCE of ``target`` (last one cut if needed)."""
    lo, hi = target * (1 - TOLERANCE), target * (1 + TOLERANCE)
    picked: list[ContextSession] = []
    total = 0
    skips = 0
    truncated = False
    while total < target:
        item = source.next()
        if item is None:
            break
        pool_id, session, copy = item
        n = session_tokens(session, encoding)
        if total + n <= hi:
            picked.append(ContextSession(session, n, True, segment, pool_id, copy))
            total += n
            skips = 0
            continue
        if total >= lo:
            break  # within tolerance and the next whole session would overshoot
        skips += 1
        if skips < min(MAX_SKIPS, len(source)):
            continue
        cut = cut_session(session, target - total, encoding)
        if cut is not None:
            n = session_tokens(cut, encoding)
            picked.append(ContextSession(cut, n, True, segment, pool_id, copy, truncated=True))
            total += n
            truncated = True
        break
    return picked, total, truncated


def scatter(user: list[ContextSession], filler: list[ContextSession], seed: int) -> list[ContextSession]:
    """Interval filler into the gaps before user sessions, gap chosen per filler session (seeded).

    A lone user session has no "between": its filler goes after it, between it and the question,
    as PrefEval places its inter turns. Before it, the evidence would sit at the question (0
    tokens away) whatever the context's length."""
    if not user:
        return list(filler)
    if len(user) == 1:
        return [*user, *filler]
    rng = random.Random(f"prefscope-scatter/{seed}")
    gaps: list[list[ContextSession]] = [[] for _ in user]
    for f in filler:
        gaps[rng.randrange(len(user))].append(f)
    out: list[ContextSession] = []
    for gap, u in zip(gaps, user, strict=True):
        out += gap
        out.append(u)
    return out
