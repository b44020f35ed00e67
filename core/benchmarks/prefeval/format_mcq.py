"""PrefEval MCQ option orders: prefscope's balanced, seeded shuffle, and PrefEval's own seed-41 order."""

from __future__ import annotations

import random

#: MCQ option shuffle id and seed prefix (see :func:`mcq_orders`).
SHUFFLE = "prefscope-balanced-v1"
SHUFFLE_SEED = "prefscope-prefeval-mcq"


def mcq_orders(topic: str, options: list[list[str]]) -> list[dict]:
    """Each record's shown option order (indices into its raw options; index 0 is the aligned one)
    with the seeds that made it, and PrefEval's seed-41 order.

    Letters are dealt per topic: a permutation of the record indices seeded by the topic gets the
    answer positions 0, 1, 2, 3, 0, … in turn, so counts per letter differ by at most one within a
    topic. The distractors fill the other positions in an order seeded by topic and record.
    ``random.Random(str)`` seeds through sha512: stable across runs and PYTHONHASHSEED.
    """
    topic_seed = f"{SHUFFLE_SEED}/{topic}"
    dealt = list(range(len(options)))
    random.Random(topic_seed).shuffle(dealt)
    official = _official_orders(options)
    out = []
    for i, raw in enumerate(options):
        n = len(raw)
        seed = f"{topic_seed}/{i:03d}"
        rest = list(range(1, n))
        random.Random(seed).shuffle(rest)
        answer_at = dealt.index(i) % n
        order = [*rest[:answer_at], 0, *rest[answer_at:]]
        meta: dict[str, object] = {
            "option_order": order,
            "shuffle": SHUFFLE,
            "letter_seed": topic_seed,
            "shuffle_seed": seed,
        }
        if official[i] is not None:
            meta["official_option_order"] = official[i]
        out.append(meta)
    return out


def _official_orders(options: list[list[str]]) -> list[list[int] | None]:
    """PrefEval's orders for a fresh run over this topic (benchmark_classification.py:
    ``random.seed(41)`` then ``random.sample(options, 4)`` per task in file order). Sampling the
    indices draws exactly what sampling the options does; records without 4 options have none
    (the official code would fail on fewer and drop options on more)."""
    rng = random.Random(41)
    return [rng.sample(range(len(raw)), 4) if len(raw) == 4 else None for raw in options]
