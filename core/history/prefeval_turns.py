"""PrefEval's inter turns: the messages placed between the preference and the question.

PrefEval (``utils/common_utils.py``, ``extract_multi_turn_message``) concatenates the
``conversation`` lists of ``filtered_inter_turns.json`` in file order and takes the FIRST 2N
messages: no randomness, the same filler for every record, topic and seed, often cutting a
conversation in the middle. Message 2N must be an assistant message and too few messages is an
error. ``official`` order reproduces that exactly (so ``--seed`` has no effect); ``shuffled`` (ours)
concatenates the pool's conversations in a seeded order first, then applies the same prefix rule.

The pool is the imported ``prefeval-inter-turns`` filler pool, one session per conversation, in
file order.
"""

from __future__ import annotations

import random

from core.history.configs import ContextError
from core.history.tokens import session_tokens
from core.history.types import ContextSession
from core.model import FillerPool

#: The filler pool PrefEval's importer makes of filtered_inter_turns.json.
POOL_ID = "prefeval-inter-turns"
ORDERS = ("official", "shuffled")


def inter_pool(pools: list[FillerPool]) -> FillerPool:
    for pool in pools:
        if pool.id == POOL_ID:
            return pool
    raise ContextError(
        "the prefeval-turns context needs PrefEval's inter-turn pool: import filtered_inter_turns.json "
        "(prefscope import <benchmark_dataset>/filtered_inter_turns.json)"
    )


def pool_messages(pool: FillerPool) -> int:
    return sum(len(s.turns) for s in pool.sessions)


def inter_turn_sessions(pool: FillerPool, n: int, order: str, seed: int, encoding: str) -> list[ContextSession]:
    """The first 2n messages of the (ordered) pool, as whole or cut filler sessions."""
    if order not in ORDERS:
        raise ContextError(f"unknown --turns-order {order!r}; expected one of {', '.join(ORDERS)}")
    available = pool_messages(pool)
    if n < 0 or 2 * n > available:
        raise ContextError(
            f"--turns {n}: PrefEval's inter-turn pool has {available} messages, so N must be 0 to {available // 2}"
        )
    sessions = list(pool.sessions)
    if order == "shuffled":
        random.Random(f"prefscope-prefeval-turns/{seed}").shuffle(sessions)
    out: list[ContextSession] = []
    need = 2 * n
    for s in sessions:
        if need == 0:
            break
        if len(s.turns) <= need:
            part, cut = s, False
        else:
            part = s.model_copy(update={"turns": s.turns[:need], "meta": {**s.meta, "truncated": True}})
            cut = True
        need -= len(part.turns)
        out.append(ContextSession(part, session_tokens(part, encoding), True, "inter", POOL_ID, truncated=cut))
    if n and out[-1].session.turns[-1].role != "assistant":
        raise ContextError(f"--turns {n}: message {2 * n} of the inter-turn pool is not an assistant message")
    return out
