"""core.analysis.agreement against reference libraries and hand computation: Cohen's kappa and the
weighted kappas vs ``sklearn.metrics.cohen_kappa_score``, Spearman / Kendall vs scipy, Krippendorff's
alpha vs the ``krippendorff`` package and Krippendorff's own published example; the confusion
matrix, base rates, abstention counts and the undefined cases (n = 0, constant raters)."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from core.analysis.agreement import all_pairs, krippendorff_alpha, pair_stats, weighted_kappa

LABELS_1_5 = [1.0, 2.0, 3.0, 4.0, 5.0]


def as_scores(values: list[float | None]) -> dict[str, float | None]:
    return {f"item-{i:02d}": v for i, v in enumerate(values)}


def correlated(rng: random.Random, n: int) -> tuple[list[float], list[float]]:
    """Two 1-5 raters who mostly agree within a point, so every statistic is defined."""
    a = [float(rng.randint(1, 5)) for _ in range(n)]
    b = [min(5.0, max(1.0, x + rng.choice([-2, -1, 0, 0, 0, 1, 1]))) for x in a]
    return a, b


# -- kappas vs sklearn -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_kappas_match_sklearn_on_random_1_to_5_scores(seed):
    rng = random.Random(seed)
    a, b = correlated(rng, rng.randint(8, 60))
    s = pair_stats("judge-a", "judge-b", "alignment", as_scores(a), as_scores(b), scale=(1, 5))
    assert s.labels == tuple(LABELS_1_5)
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(a, b, labels=LABELS_1_5))
    assert s.weighted_kappa_linear == pytest.approx(cohen_kappa_score(a, b, labels=LABELS_1_5, weights="linear"))
    assert s.weighted_kappa_quadratic == pytest.approx(cohen_kappa_score(a, b, labels=LABELS_1_5, weights="quadratic"))


@pytest.mark.filterwarnings("ignore:.*cohen_kappa_score. is undefined")  # the None cases, checked below
@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=1, max_size=40),
    st.sampled_from(["linear", "quadratic"]),
)
def test_weighted_kappa_matches_sklearn_or_is_none_where_sklearn_is_undefined(pairs, weights):
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    ours = weighted_kappa(a, b, LABELS_1_5, weights)
    reference = cohen_kappa_score(a, b, labels=LABELS_1_5, weights=weights, replace_undefined_by=np.nan)
    if np.isnan(reference):
        assert ours is None
    else:
        assert ours == pytest.approx(reference)


def test_kappas_by_hand():
    # a = 1 2 3 1, b = 1 3 3 2 over labels 1 2 3 (indices 0 1 2).
    # Confusion (rows a, cols b): [[1,1,0],[0,0,1],[0,0,1]]; row sums 2 1 1, column sums 1 1 2, n = 4.
    # Expected = outer(rows, cols) / 4 = [[.5,.5,1],[.25,.25,.5],[.25,.25,.5]].
    # Unweighted: po = 2/4, pe = (2*1 + 1*1 + 1*2) / 16 = 5/16, kappa = (8/16 - 5/16) / (11/16) = 3/11.
    # Linear |i-j|: observed 1 + 1 = 2; expected .5 + 2*1 + .25 + .5 + 2*.25 + .25 = 4; kappa = 1 - 2/4 = 0.5.
    # Quadratic (i-j)^2: observed 2; expected .5 + 4*1 + .25 + .5 + 4*.25 + .25 = 6.5; kappa = 1 - 2/6.5 = 9/13.
    a, b = [1.0, 2.0, 3.0, 1.0], [1.0, 3.0, 3.0, 2.0]
    s = pair_stats("x", "y", "d", as_scores(a), as_scores(b))
    assert s.labels == (1.0, 2.0, 3.0)
    assert s.cohen_kappa == pytest.approx(3 / 11)
    assert s.weighted_kappa_linear == pytest.approx(0.5)
    assert s.weighted_kappa_quadratic == pytest.approx(9 / 13)
    assert s.exact == pytest.approx(0.5) and s.within1 == pytest.approx(1.0)


def test_weights_follow_the_label_index_so_unused_scale_points_count():
    a, b = [1.0, 2.0, 3.0, 1.0], [1.0, 3.0, 3.0, 2.0]
    wide = [1.0, 2.0, 3.0, 4.0, 5.0]
    for weights in ("linear", "quadratic"):
        ours = weighted_kappa(a, b, wide, weights)
        assert ours == pytest.approx(cohen_kappa_score(a, b, labels=wide, weights=weights))
    # an off-scale value (2.5) becomes its own label between 2 and 3
    s = pair_stats("x", "y", "d", as_scores([1.0, 2.5, 3.0]), as_scores([2.0, 2.5, 1.0]), scale=(1, 3))
    assert s.labels == (1.0, 2.0, 2.5, 3.0)
    # sklearn refuses non-integer floats as classes; as strings it keeps the given label order
    reference = cohen_kappa_score(["1", "2.5", "3"], ["2", "2.5", "1"], labels=["1", "2", "2.5", "3"], weights="linear")
    assert s.weighted_kappa_linear == pytest.approx(reference)


def test_a_score_outside_the_labels_is_an_error():
    with pytest.raises(ValueError, match="not among the labels"):
        weighted_kappa([1.0, 6.0], [1.0, 2.0], LABELS_1_5, "linear")


# -- correlations vs scipy ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [10, 11, 12])
def test_spearman_and_kendall_match_scipy(seed):
    a, b = correlated(random.Random(seed), 30)
    s = pair_stats("x", "y", "d", as_scores(a), as_scores(b), scale=(1, 5))
    assert s.spearman == pytest.approx(spearmanr(a, b).statistic)
    assert s.kendall == pytest.approx(kendalltau(a, b).statistic)  # tau-b, scipy's default
    assert s.exact == pytest.approx(sum(x == y for x, y in zip(a, b)) / 30)
    assert s.within1 == pytest.approx(sum(abs(x - y) <= 1 for x, y in zip(a, b)) / 30)


# -- confusion, base rates, abstentions --------------------------------------------------------------
def test_confusion_matrix_and_base_rates_on_a_tiny_example():
    a = {"q1": 1.0, "q2": 3.0, "q3": 3.0, "q4": 2.0}
    b = {"q1": 1.0, "q2": 2.0, "q3": 3.0, "q4": 2.0}
    s = pair_stats("judge", "human", "awareness", a, b, scale=(1, 4))
    assert (s.rater_a, s.rater_b, s.dimension, s.n) == ("judge", "human", "awareness", 4)
    assert s.labels == (1.0, 2.0, 3.0, 4.0)  # 4 unused, still a scale point
    assert s.confusion == (
        (1, 0, 0, 0),  # a = 1: b said 1
        (0, 1, 0, 0),  # a = 2: b said 2
        (0, 1, 1, 0),  # a = 3: b said 2 once, 3 once
        (0, 0, 0, 0),
    )
    assert s.base_rate_a == (0.25, 0.25, 0.5, 0.0)
    assert s.base_rate_b == (0.25, 0.5, 0.25, 0.0)
    assert s.exact == 0.75


def test_abstentions_are_left_out_of_n_and_counted():
    a = {"q1": 1.0, "q2": None, "q3": 3.0, "q4": None, "q5": 2.0, "q6": 4.0, "q7": 5.0}
    b = {"q1": 1.0, "q2": 2.0, "q3": None, "q4": None, "q5": 2.0, "q8": 3.0, "q9": None}
    s = pair_stats("a", "b", "d", a, b, scale=(1, 5))
    assert s.n == 2  # q1, q5
    assert (s.abstained_a, s.abstained_b) == (1, 1)  # q2 / q3; q4 (None on both sides) in neither
    assert (s.only_a, s.only_b) == (2, 2)  # q6 q7 / q8 q9
    assert sum(map(sum, s.confusion)) == 2 and s.labels == tuple(LABELS_1_5)


def test_nominal_level_leaves_out_the_statistics_that_need_an_order():
    a, b = [1.0, 2.0, 3.0, 1.0], [1.0, 3.0, 3.0, 2.0]
    s = pair_stats("x", "y", "d", as_scores(a), as_scores(b), level="nominal")
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(a, b))
    assert s.exact == 0.5
    assert (s.within1, s.weighted_kappa_linear, s.weighted_kappa_quadratic, s.spearman, s.kendall) == (None,) * 5


# -- undefined cases ---------------------------------------------------------------------------------
def test_no_shared_items_gives_none_everywhere():
    s = pair_stats("a", "b", "d", {"q1": 3.0, "q2": None}, {"q2": 4.0, "q3": 1.0}, scale=(1, 3))
    assert s.n == 0 and (s.abstained_a, s.only_a, s.only_b) == (1, 1, 1)
    stats = (s.exact, s.within1, s.cohen_kappa, s.weighted_kappa_linear, s.weighted_kappa_quadratic)
    assert stats == (None,) * 5 and (s.spearman, s.kendall) == (None, None)
    assert s.confusion == ((0, 0, 0),) * 3 and s.base_rate_a == (0.0, 0.0, 0.0)
    assert weighted_kappa([], [], LABELS_1_5, "linear") is None


def test_constant_raters():
    # both give 4 to everything: kappas are 0/0, correlations too; agreement shares are still 1
    s = pair_stats("a", "b", "d", as_scores([4.0] * 5), as_scores([4.0] * 5), scale=(1, 5))
    assert (s.exact, s.within1) == (1.0, 1.0)
    kappas = (s.cohen_kappa, s.weighted_kappa_linear, s.weighted_kappa_quadratic)
    assert kappas == (None, None, None) and (s.spearman, s.kendall) == (None, None)
    # one constant side: kappa is defined (0: no agreement beyond chance) but the correlations are not
    a, b = [4.0] * 5, [1.0, 2.0, 3.0, 4.0, 5.0]
    s = pair_stats("a", "b", "d", as_scores(a), as_scores(b), scale=(1, 5))
    assert s.cohen_kappa == pytest.approx(cohen_kappa_score(a, b)) == pytest.approx(0.0)
    assert s.weighted_kappa_linear == pytest.approx(cohen_kappa_score(a, b, labels=LABELS_1_5, weights="linear"))
    assert (s.spearman, s.kendall) == (None, None)
    # a single item: kendall and spearman need two
    s = pair_stats("a", "b", "d", {"q": 2.0}, {"q": 3.0})
    assert (s.n, s.spearman, s.kendall) == (1, None, None)


def test_all_pairs_sorts_raters_and_skips_pairs_without_shared_items():
    ratings = {
        "zeta": {"q1": 1.0, "q2": 2.0},
        "alpha": {"q1": 1.0, "q2": 3.0},
        "mid": {"q9": 5.0},
        "beta": {"q1": None, "q2": 2.0},
    }
    pairs = all_pairs(ratings, "alignment", scale=(1, 5))
    assert [(p.rater_a, p.rater_b) for p in pairs] == [("alpha", "beta"), ("alpha", "zeta"), ("beta", "zeta")]
    assert [p.n for p in pairs] == [1, 2, 1]
    assert all(p.dimension == "alignment" for p in pairs)
    assert pairs[0].abstained_b == 1


# -- Krippendorff's alpha ----------------------------------------------------------------------------
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the 4 coders x 12 units example
# with missing values (also in the krippendorff package's docstring): alpha nominal 0.743,
# ordinal 0.815, interval 0.849.
_ = None
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    "C": [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
}


def ratings_of(rows: dict[str, list]) -> dict[str, dict[int, float | None]]:
    """Rater -> {unit: score}, missing units left out of half the raters and None in the others, so
    both ways of missing are exercised."""
    out: dict[str, dict[int, float | None]] = {}
    for r, (name, row) in enumerate(rows.items()):
        out[name] = {u: v for u, v in enumerate(row, start=1) if v is not None or r % 2}
    return out


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_reproduces_krippendorffs_published_example(level, published):
    alpha = krippendorff_alpha(ratings_of(KRIPPENDORFF_2011), level=level)
    assert alpha is not None and round(alpha, 3) == published
    # an unused scale point changes nothing for these levels
    assert krippendorff_alpha(ratings_of(KRIPPENDORFF_2011), level=level, value_domain=range(1, 7)) == pytest.approx(
        alpha
    )


def test_alpha_by_hand():
    # 2 coders x 3 units, nominal: A = 1 1 2, B = 1 2 2. Coincidences (each unit with m = 2 values adds
    # 1/(m-1) = 1 per ordered pair): o11 = 2, o12 = o21 = 1, o22 = 2; n1 = n2 = 3, n = 6.
    # Do = (o12 + o21) / n = 2/6; De = 2 * n1 * n2 / (n (n - 1)) = 18/30; alpha = 1 - (1/3)/(3/5) = 4/9.
    assert krippendorff_alpha({"A": {1: 1, 2: 1, 3: 2}, "B": {1: 1, 2: 2, 3: 2}}, level="nominal") == pytest.approx(
        4 / 9
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_matches_the_package_on_a_matrix_built_by_hand(seed, level):
    rng = random.Random(seed)
    raters, units = ["j1", "j2", "j3", "human"], 25
    matrix = np.full((len(raters), units), np.nan)
    ratings: dict[str, dict[str, float | None]] = {r: {} for r in raters}
    truth = [rng.randint(1, 5) for _ in range(units)]
    for i, r in enumerate(raters):
        for u in range(units):
            roll = rng.random()
            if roll < 0.15:
                continue  # never seen
            v = None if roll < 0.25 else float(min(5, max(1, truth[u] + rng.choice([-1, 0, 0, 1]))))
            ratings[r][f"u{u}"] = v
            matrix[i, u] = np.nan if v is None else v
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert krippendorff_alpha(ratings, level=level) == pytest.approx(expected)
    assert krippendorff_alpha(ratings, level=level, value_domain=LABELS_1_5) == pytest.approx(
        krippendorff.alpha(reliability_data=matrix, value_domain=LABELS_1_5, level_of_measurement=level)
    )


def test_alpha_is_none_where_undefined():
    assert krippendorff_alpha({}) is None
    assert krippendorff_alpha({"only": {1: 3.0, 2: 4.0}}) is None
    # no unit scored by two raters
    assert krippendorff_alpha({"a": {1: 3.0, 2: None}, "b": {2: 4.0, 3: 1.0}}) is None
    # one value only: the package raises (no value domain) or returns nan (a wider domain)
    same = {"a": {1: 4.0, 2: 4.0}, "b": {1: 4.0, 2: 4.0}}
    assert krippendorff_alpha(same) is None
    assert krippendorff_alpha(same, value_domain=LABELS_1_5) is None
    assert krippendorff_alpha(same, value_domain=[4.0]) is None


def test_alpha_rejects_a_score_outside_the_value_domain():
    with pytest.raises(ValueError, match="out-of-domain"):
        krippendorff_alpha({"a": {1: 6.0, 2: 4.0}, "b": {1: 4.0, 2: 4.0}}, value_domain=LABELS_1_5)
