"""Metrics against values worked out by hand (the arithmetic is in each docstring)."""

import math

import numpy as np
import pytest

from core import metrics
from core.benchmarks.cupid.metrics import checklist_prf
from core.benchmarks.interpref.metrics import (
    bradley_terry,
    bt_cross_entropy,
    order_disagreement,
    pass_rate,
    win_rate_matrix,
)


def test_cohen_kappa_hand_computed():
    """Agree on 8/10; both raters say 1 six times: pe = .6*.6 + .4*.4 = .52; k = .28/.48."""
    a = [1, 1, 0, 0, 1, 0, 1, 1, 0, 1]
    b = [1, 0, 0, 0, 1, 1, 1, 1, 0, 1]
    assert metrics.cohen_kappa(a, b) == pytest.approx(0.28 / 0.48)


def test_cohen_kappa_perfect_and_chance():
    assert metrics.cohen_kappa(["y", "n", "y"], ["y", "n", "y"]) == pytest.approx(1.0)
    # Opposite on every item with balanced marginals: po = 0, pe = .5 -> -1.
    assert metrics.cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    assert metrics.cohen_kappa([], []) is None


def test_cohen_kappa_is_undefined_when_both_raters_give_one_same_label():
    """po = pe = 1: kappa is 0/0 (it used to be reported as 1.0). Constant but different labels:
    po = pe = 0, kappa 0 (defined)."""
    assert metrics.cohen_kappa([3, 3, 3], [3, 3, 3]) is None
    assert metrics.cohen_kappa([3, 3], [4, 4]) == 0.0


def test_spearman_with_ties():
    """ranks y = [1, 2, 3.5, 5, 3.5]; sum dxdy = 8, sum dx^2 = 10, sum dy^2 = 9.5."""
    rho = metrics.spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])
    assert rho == pytest.approx(8 / math.sqrt(95))


def test_spearman_constant_or_too_short_is_undefined():
    assert metrics.spearman([1, 2, 3], [4, 4, 4]) is None
    assert metrics.spearman([1], [2]) is None
    with pytest.raises(ValueError):
        metrics.spearman([1, 2], [1])


def test_checklist_prf_partial_credit_micro_averaged():
    """P = (1.5 + 1) / (3 + 1); R = (2.5 + 1.5) / (4 + 2)."""
    instances = [([1, 0.5, 0], [1, 1, 0.5, 0]), ([1], [0.5, 1])]
    prf = checklist_prf(instances)
    assert prf.precision == pytest.approx(0.625)
    assert prf.recall == pytest.approx(4 / 6)
    assert prf.f1 == pytest.approx(2 * 0.625 * (4 / 6) / (0.625 + 4 / 6))


def test_binary_prf():
    """tp = 2, predicted 3, gold 4."""
    prf = metrics.binary_prf([1, 1, 1, 0, 0], [1, 1, 0, 1, 1])
    assert (prf.precision, prf.recall) == (pytest.approx(2 / 3), pytest.approx(0.5))
    assert metrics.binary_prf([0, 0], [1, 0]).precision is None


def test_pass_rate_needs_every_order():
    orders = [[True] * 4, [True, False, True, True], [True] * 4, [False] * 4]
    assert pass_rate(orders) == pytest.approx(0.5)
    assert order_disagreement(orders) == pytest.approx(0.25)


def test_bradley_terry_recovers_known_strengths():
    xi = np.array([1.0, 0.0, -1.0])
    w = 1 / (1 + np.exp(-(xi[:, None] - xi[None, :])))
    np.fill_diagonal(w, np.nan)
    fitted = bradley_terry(w)
    assert fitted == pytest.approx(xi, abs=1e-6)


def test_bradley_terry_is_a_minimum_of_the_cross_entropy():
    """On the InterPref Table 3 win rates the fit beats any nudged coefficients."""
    w = np.array(
        [[np.nan, 0.51, 0.65, 0.75], [0.48, np.nan, 0.58, 0.77], [0.34, 0.41, np.nan, 0.60], [0.23, 0.22, 0.39, np.nan]]
    )
    xi = bradley_terry(w)
    best = bt_cross_entropy(w, xi)
    assert list(np.argsort(-xi)) == [0, 1, 2, 3]
    rng = np.random.default_rng(1)
    for _ in range(20):
        assert bt_cross_entropy(w, xi + rng.normal(0, 0.05, 4)) > best


def test_win_rate_matrix_counts_draws_as_half():
    w = win_rate_matrix([("a", "b", 1), ("a", "b", 0.5), ("b", "c", 0)], ["a", "b", "c"])
    assert w[0, 1] == pytest.approx(0.75) and w[1, 0] == pytest.approx(0.25)
    assert w[2, 1] == pytest.approx(1.0) and np.isnan(w[0, 2])


def test_bootstrap_ci_brackets_the_mean_and_is_deterministic():
    values = [1, 2, 3, 4, 5, 4, 3, 2, 5, 1]
    lo, hi = metrics.bootstrap_ci(values, seed=3)
    assert lo < np.mean(values) < hi
    assert (lo, hi) == metrics.bootstrap_ci(values, seed=3)
    assert metrics.bootstrap_ci(values, seed=4) != (lo, hi)  # the seed is really used


def test_bootstrap_ci_is_bias_corrected_for_skewed_scores():
    """Right-skewed scores: the BCa interval sits above the plain percentile interval (its
    whole point: the percentile one is biased towards the bulk of small values)."""
    values = [1.0, 1.0, 1.0, 2.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0]
    rng = np.random.default_rng(0)
    means = rng.choice(values, size=(20_000, len(values))).mean(axis=1)
    p_lo, p_hi = np.quantile(means, [0.025, 0.975])
    lo, hi = metrics.bootstrap_ci(values)
    assert lo > p_lo + 0.1 and hi > p_hi + 0.3
    assert lo < np.mean(values) < hi


def test_bootstrap_ci_edge_cases():
    """Fewer than two values: nothing to resample. Constant values: every resample has the same
    mean, so the interval is that value (BCa's acceleration would be 0/0)."""
    assert metrics.bootstrap_ci([1.0]) == (None, None)
    assert metrics.bootstrap_ci([]) == (None, None)
    assert metrics.bootstrap_ci([None, 2.0]) == (None, None)
    assert metrics.bootstrap_ci([4.0, 4.0, 4.0]) == (4.0, 4.0)


def test_accuracy():
    assert metrics.accuracy([True, False, True, True]) == 0.75
    assert metrics.accuracy([]) is None


@pytest.mark.parametrize(
    ("k", "n"), [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (1, 2), (7, 9), (50, 100), (0, 250), (249, 250)]
)
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_wilson_ci_matches_scipy(k, n, level):
    """Against ``scipy.stats.binomtest(k, n).proportion_ci(method="wilson")``, including 0 and n
    successes, where the interval still has width (unlike the bootstrap)."""
    from scipy.stats import binomtest

    expected = binomtest(k, n).proportion_ci(confidence_level=level, method="wilson")
    low, high = metrics.wilson_ci(k, n, level)
    assert low == pytest.approx(float(expected.low), abs=1e-12)
    assert high == pytest.approx(float(expected.high), abs=1e-12)
    assert 0.0 <= low and high <= 1.0 and high - low > 0


def test_wilson_ci_hand_computed_and_empty():
    """k=0, n=1, z=1.96: centre = (z²/2)/(1+z²), half the same, so (0, z²/(1+z²)) = (0, 0.7935)."""
    z2 = 1.959963984540054**2
    assert metrics.wilson_ci(0, 1) == pytest.approx((0.0, z2 / (1 + z2)))
    assert metrics.wilson_ci(1, 1) == pytest.approx((1 / (1 + z2), 1.0))
    assert metrics.wilson_ci(0, 0) == (None, None)


@pytest.mark.parametrize("n", [10, 250])
def test_wilson_ci_of_zero_successes_contains_zero(n):
    """No success: the Wilson lower bound is exactly 0 (scipy returns 0.0), so the interval holds the
    observed rate 0. Rounding leaves a positive lower bound (2.8e-17 for n = 10)."""
    low, _ = metrics.wilson_ci(0, n)
    assert low <= 0.0


@pytest.mark.parametrize("kind", ["likert", "normal", "rare-binary", "skewed"])
def test_bootstrap_ci_is_scipys_bca_interval(kind):
    """Computed in O(n) memory (batched resamples, closed-form jackknife) but the same interval
    scipy's BCa gives from the same seed, for the score shapes reports meet."""
    import warnings

    from scipy.stats import bootstrap

    rng = np.random.default_rng(len(kind))
    for size in (2, 3, 17, 120, 433):
        draw = {
            "likert": lambda k: rng.integers(1, 6, k).astype(float),
            "normal": lambda k: rng.normal(size=k),
            "rare-binary": lambda k: (rng.random(k) < 0.1).astype(float),
            "skewed": lambda k: rng.exponential(size=k),
        }[kind]
        x = draw(size)
        if np.all(x == x[0]):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ci = bootstrap((x,), np.mean, method="BCa", n_resamples=2000, rng=np.random.default_rng(0))
        expected = ci.confidence_interval
        got = metrics.bootstrap_ci(list(x))
        if np.isnan(expected.low) or np.isnan(expected.high):
            assert got == (None, None)
        else:
            assert got == pytest.approx((expected.low, expected.high), rel=0, abs=1e-12), (kind, size)


def test_bootstrap_ci_of_a_large_group_stays_within_memory():
    """A report group of 60K scores: scipy's jackknife alone would need 60K × 60K floats (29 GB);
    under a 1.5 GB address-space limit the interval is still computed (in a child process, so the
    limit binds only it)."""
    import subprocess
    import sys

    code = (
        "import resource, numpy as np\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))\n"
        "from core.metrics import bootstrap_ci\n"
        "x = np.random.default_rng(1).integers(1, 6, 60_000).astype(float)\n"
        "lo, hi = bootstrap_ci(list(x), n=200)\n"
        "assert lo < x.mean() < hi, (lo, hi)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "ok", done.stderr[-2000:]
