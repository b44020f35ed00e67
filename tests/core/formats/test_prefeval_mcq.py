"""PrefEval MCQ option orders: unbiased answer letters over any set of topics, stable, stored with
their seeds, and PrefEval's own seed-41 order kept alongside."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from scipy.stats import chisquare

from core.benchmarks.prefeval import format_mcq as prefeval_mcq
from core.formats import load_path
from core.model import MCQ_LETTERS
from tests.conftest import dataset


def letters(topic: str, n: int, k: int = 4) -> list[str]:
    opts = [[f"{topic}-{i}-{j}" for j in range(k)] for i in range(n)]
    return [MCQ_LETTERS[m["option_order"].index(0)] for m in prefeval_mcq.mcq_orders(topic, opts)]


def uniform(counts: Counter, k: int = 4) -> float:
    return float(chisquare([counts[c] for c in MCQ_LETTERS[:k]]).pvalue)


def test_real_topic_letters_are_balanced_and_point_at_the_aligned_option():
    result = load_path(dataset("prefeval"))
    raw = {b.user.id: b for b in result.bundles}
    qs = [q for b in raw.values() for q in b.queries if q.kind == "mcq"]
    counts = Counter(q.answer for q in qs)
    assert max(counts.values()) - min(counts.values()) <= 1 and set(counts) == set("ABCD")
    assert uniform(counts) > 0.05
    for q in qs:
        assert sorted(q.meta["option_order"]) == [0, 1, 2, 3]
        assert q.meta["shuffle"] == "prefscope-balanced-v1"
        assert q.meta["shuffle_seed"] == f"prefscope-prefeval-mcq/travel_restaurant/{q.id.split('-')[2]}"
        assert q.meta["letter_seed"] == "prefscope-prefeval-mcq/travel_restaurant"


def test_official_seed_41_order_is_kept_for_a_fresh_run():
    result = load_path(dataset("prefeval", "mcq_options", "travel_restaurant.json"))
    orders = [b.queries[-1].meta["official_option_order"] for b in result.bundles]
    # benchmark_classification.py: random.seed(41), then random.sample(options, 4) per task
    assert "".join(MCQ_LETTERS[o.index(0)] for o in orders[:12]) == "CDCABACDABCB"
    assert orders[:3] == [[3, 1, 0, 2], [3, 2, 1, 0], [3, 2, 0, 1]]
    random.seed(41)  # the official call, on the real options
    first = result.bundles[0].queries[-1]
    raw = [first.options[first.meta["option_order"].index(k)] for k in range(4)]
    assert random.sample(raw, 4) == [raw[k] for k in orders[0]]


def test_synthetic_topics_any_set_is_uniform():
    sizes = [random.Random(s).randint(20, 80) for s in range(40)]
    per_topic = {f"topic_{t}": Counter(letters(f"topic_{t}", n)) for t, n in enumerate(sizes)}
    for c in per_topic.values():
        assert max(c.values()) - min(c.values()) <= 1
    rng = random.Random(7)
    for _ in range(30):  # arbitrary subsets of topics
        chosen = rng.sample(sorted(per_topic), rng.randint(1, len(per_topic)))
        assert uniform(sum((per_topic[t] for t in chosen), Counter())) > 0.05


def test_records_at_the_same_index_do_not_share_a_letter_across_topics():
    """The official (and former) scheme gives record i the same letter in every topic."""
    by_index = [letters(f"topic_{t}", 50) for t in range(20)]
    for i in range(50):
        assert len({row[i] for row in by_index}) > 1


def test_orders_are_stable_and_distractors_shuffled():
    opts = [[f"o{i}{j}" for j in range(4)] for i in range(30)]
    a, b = prefeval_mcq.mcq_orders("hotels", opts), prefeval_mcq.mcq_orders("hotels", opts)
    assert a == b
    assert len({tuple(m["option_order"]) for m in a}) > 6
    assert prefeval_mcq.mcq_orders("flights", opts) != a


@pytest.mark.parametrize("k", [2, 3, 5])
def test_other_option_counts_stay_balanced(k):
    counts = Counter(letters("odd", 41, k))
    assert set(counts) == set(MCQ_LETTERS[:k]) and max(counts.values()) - min(counts.values()) <= 1
    opts = [[f"x{j}" for j in range(k)]]
    assert "official_option_order" not in prefeval_mcq.mcq_orders("odd", opts)[0]
