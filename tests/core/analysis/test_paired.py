"""core.analysis.paired against scipy and hand computation: McNemar's exact test (binomial on the
discordant pairs), the Wilcoxon signed-rank test, the matched-pairs rank-biserial correlation,
Cohen's d_z, the paired bootstrap interval; and the edge cases (no pairs, all ties, one pair)."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy.stats import binomtest
from scipy.stats import wilcoxon as scipy_wilcoxon

from core.analysis.paired import Pair, compare, mcnemar_exact, pair, wilcoxon
from core.metrics import bootstrap_ci


def pairs_of(a: list[float], b: list[float]) -> list[Pair]:
    return [Pair((f"item-{i:02d}",), x, y, f"a{i}", f"b{i}") for i, (x, y) in enumerate(zip(a, b))]


def average_ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties sharing the mean of their ranks (by hand, not scipy's rankdata)."""
    order = sorted(values)
    return [(order.index(v) + 1 + len(order) - order[::-1].index(v)) / 2 for v in values]


def rank_biserial(diffs: list[float]) -> float:
    nonzero = [d for d in diffs if d != 0]
    ranks = average_ranks([abs(d) for d in nonzero])
    plus = sum(r for r, d in zip(ranks, nonzero) if d > 0)
    minus = sum(r for r, d in zip(ranks, nonzero) if d < 0)
    return (plus - minus) / (plus + minus)


def test_pair_keeps_common_keys_in_key_order_and_counts_the_rest():
    a = {("u", "q2"): (1.0, "ra2"), ("u", "q1"): (0.0, "ra1"), ("u", "q9"): (1.0, "ra9")}
    b = {("u", "q1"): (1.0, "rb1"), ("u", "q2"): (1.0, "rb2"), ("v", "q1"): (0.0, "rb"), ("v", "q2"): (0.0, "rc")}
    pairs, only_a, only_b = pair(a, b)
    assert [p.key for p in pairs] == [("u", "q1"), ("u", "q2")]
    assert [(p.a, p.b, p.a_ref, p.b_ref) for p in pairs] == [(0.0, 1.0, "ra1", "rb1"), (1.0, 1.0, "ra2", "rb2")]
    assert (only_a, only_b) == (1, 2)
    assert pairs[0].diff == 1.0


# -- binary scores: McNemar -------------------------------------------------------------------------
A_BIN = [1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 1]
B_BIN = [1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1]


def test_binary_scores_get_mcnemars_exact_test():
    pairs = pairs_of(A_BIN, B_BIN)
    c = compare(pairs, unpaired_a=2, unpaired_b=1)
    only_a = sum(1 for x, y in zip(A_BIN, B_BIN) if x == 1 and y == 0)
    only_b = sum(1 for x, y in zip(A_BIN, B_BIN) if x == 0 and y == 1)
    assert (only_a, only_b) == (2, 8)
    assert c.binary and c.test == "McNemar (exact)"
    assert (c.a_only, c.b_only) == (only_a, only_b)
    assert c.p_value == pytest.approx(binomtest(only_b, only_b + only_a, 0.5).pvalue)
    assert c.p_value == pytest.approx(2 * sum(math.comb(10, k) for k in range(3)) / 2**10)
    assert c.statistic == 2.0
    assert c.rank_biserial is None
    assert (c.n, c.unpaired_a, c.unpaired_b) == (20, 2, 1)
    assert c.mean_a == pytest.approx(sum(A_BIN) / 20) and c.mean_b == pytest.approx(sum(B_BIN) / 20)
    diffs = [y - x for x, y in zip(A_BIN, B_BIN)]
    assert c.mean_diff == pytest.approx(statistics.mean(diffs))
    assert c.effect_dz == pytest.approx(statistics.mean(diffs) / statistics.stdev(diffs))
    assert (c.ci_low, c.ci_high) == pytest.approx(bootstrap_ci(diffs))
    assert len(c.regressed) == 2 and len(c.improved) == 8 and len(c.ties) == 10
    assert c.regressed[0].key < c.regressed[1].key  # equal changes: key order


def test_mcnemar_is_symmetric_and_empty_without_discordant_pairs():
    assert mcnemar_exact(3, 9)[1] == pytest.approx(mcnemar_exact(9, 3)[1])
    assert mcnemar_exact(3, 9) == (3.0, pytest.approx(binomtest(9, 12, 0.5).pvalue))
    assert mcnemar_exact(0, 0) == (None, None)
    assert mcnemar_exact(0, 1) == (0.0, 1.0)


# -- ordinal scores: Wilcoxon -----------------------------------------------------------------------
A_ORD = [3, 2, 4, 1, 5, 3, 2, 2, 4, 3, 1, 3]
B_ORD = [4, 4, 4, 3, 4, 5, 2, 5, 5, 4, 2, 1]


def test_ordinal_scores_get_wilcoxon_and_the_rank_biserial():
    c = compare(pairs_of(A_ORD, B_ORD))
    diffs = [y - x for x, y in zip(A_ORD, B_ORD)]
    nonzero = [d for d in diffs if d != 0]
    expected = scipy_wilcoxon(nonzero)
    assert not c.binary and c.test == "Wilcoxon signed-rank"
    assert c.statistic == pytest.approx(expected.statistic)
    assert c.p_value == pytest.approx(expected.pvalue)
    # W is the smaller signed-rank sum, by hand.
    ranks = average_ranks([abs(d) for d in nonzero])
    minus = sum(r for r, d in zip(ranks, nonzero) if d < 0)
    plus = sum(r for r, d in zip(ranks, nonzero) if d > 0)
    assert c.statistic == pytest.approx(min(plus, minus))
    assert c.rank_biserial == pytest.approx(rank_biserial(diffs))
    assert c.rank_biserial == pytest.approx((plus - minus) / (plus + minus))
    assert c.effect_dz == pytest.approx(statistics.mean(diffs) / statistics.stdev(diffs))
    assert (c.ci_low, c.ci_high) == pytest.approx(bootstrap_ci(diffs))
    assert c.ci_low < c.mean_diff < c.ci_high
    assert c.a_only is None and c.b_only is None
    # Largest change first; the regressions are the negative differences.
    assert [p.diff for p in c.regressed] == sorted(d for d in diffs if d < 0)
    assert [p.diff for p in c.improved] == sorted((d for d in diffs if d > 0), reverse=True)
    assert [p.key for p in c.ties] == [p.key for p in pairs_of(A_ORD, B_ORD) if p.diff == 0]


def test_the_rank_biserial_is_plus_one_when_every_change_is_an_improvement():
    stat, p, r = wilcoxon([1, 2, 2, 3, 0])
    assert r == 1.0 and stat == 0.0
    assert p == pytest.approx(scipy_wilcoxon([1, 2, 2, 3]).pvalue)
    assert wilcoxon([-1, -2])[2] == -1.0


def test_a_scale_with_fractions_is_not_binary():
    c = compare(pairs_of([0.0, 1.0, 0.5], [1.0, 1.0, 0.0]))
    assert not c.binary and c.test == "Wilcoxon signed-rank"


# -- edge cases -----------------------------------------------------------------------------------
def test_no_pairs():
    c = compare([], unpaired_a=3, unpaired_b=0)
    assert (c.n, c.unpaired_a, c.mean_a, c.mean_b, c.mean_diff) == (0, 3, None, None, None)
    assert (c.ci_low, c.ci_high, c.statistic, c.p_value, c.effect_dz, c.rank_biserial) == (None,) * 6
    assert not c.binary and c.regressed == c.improved == c.ties == []


@pytest.mark.parametrize("a,b", [([1, 0, 1], [1, 0, 1]), ([3, 4, 2], [3, 4, 2])])
def test_all_ties(a, b):
    c = compare(pairs_of(a, b))
    assert c.mean_diff == 0 and (c.ci_low, c.ci_high) == (0.0, 0.0)
    assert c.statistic is None and c.p_value is None  # nothing to test
    assert c.effect_dz is None  # a zero standard deviation has no d_z
    assert len(c.ties) == 3 and not c.regressed and not c.improved
    if c.binary:
        assert (c.a_only, c.b_only) == (0, 0)
    else:
        assert c.rank_biserial is None


def test_one_pair():
    c = compare(pairs_of([2], [5]))
    assert c.n == 1 and c.mean_diff == 3.0
    assert (c.ci_low, c.ci_high) == (None, None)  # nothing to resample
    assert c.effect_dz is None  # no standard deviation of one difference
    assert c.p_value == pytest.approx(scipy_wilcoxon([3.0]).pvalue)
    [improved] = c.improved
    assert (improved.a_ref, improved.b_ref) == ("a0", "b0")
    binary = compare(pairs_of([0], [1]))
    assert binary.binary and binary.p_value == pytest.approx(1.0) and (binary.a_only, binary.b_only) == (0, 1)
