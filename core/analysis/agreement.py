"""Inter-rater agreement: how far two judges (or a judge and a human) give the same scores, and
Krippendorff's alpha over all of them. Pure numbers in and out; no storage, no UI.

Each rater's scores are a mapping item key -> score, where None is an abstention or a reply the
judge's parser could not read. A pair of raters is compared on the items both scored (``n``);
an item both saw where only one side is None is excluded from ``n`` and counted in
``abstained_a`` / ``abstained_b`` (None on both sides counts in neither), and items one rater never
saw are counted in ``only_a`` / ``only_b``. Silently dropping them would hide a judge that abstains
on exactly the hard items.

Scores are categories on an ordered list of labels: the scale's integer points when one is given
(so an unused point still counts as a step), plus any other observed value, sorted. The weighted
kappas weight a disagreement by its distance in INDEX over that list (linear |i − j|, quadratic
(i − j)²), as ``sklearn.metrics.cohen_kappa_score(weights=..., labels=labels)`` does; ``within1``
uses the score values themselves (|a − b| <= 1).

Every statistic is None where it is undefined (no items, a constant rater, expected disagreement
0), never a made-up number; and the ones that need an order (within-1, weighted kappas, Spearman,
Kendall) are None at level ``nominal``, where the scores are mere category names.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

import numpy as np

from core.metrics import cohen_kappa, spearman

Level = Literal["nominal", "ordinal", "interval"]
Scores = Mapping[Hashable, float | None]


@dataclass(frozen=True)
class PairStats:
    rater_a: str
    rater_b: str
    dimension: str
    n: int
    exact: float | None
    within1: float | None
    cohen_kappa: float | None
    weighted_kappa_linear: float | None
    weighted_kappa_quadratic: float | None
    spearman: float | None
    kendall: float | None
    labels: tuple[float, ...]
    #: rows = rater_a's label, columns = rater_b's, both in ``labels`` order
    confusion: tuple[tuple[int, ...], ...]
    #: share of each label among the rater's n scores (all 0 when n = 0)
    base_rate_a: tuple[float, ...]
    base_rate_b: tuple[float, ...]
    abstained_a: int
    abstained_b: int
    only_a: int
    only_b: int


def _labels(xs: Sequence[float], ys: Sequence[float], scale: tuple[float, float] | None) -> tuple[float, ...]:
    points = set(range(math.ceil(scale[0]), math.floor(scale[1]) + 1)) if scale else set()
    return tuple(sorted({float(v) for v in (*points, *xs, *ys)}))


def _confusion(a: Sequence[float], b: Sequence[float], labels: Sequence[float]) -> np.ndarray:
    index = {float(label): i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=int)
    for x, y in zip(a, b):
        for v in (x, y):
            if float(v) not in index:
                raise ValueError(f"score {v!r} is not among the labels {tuple(labels)}")
        matrix[index[float(x)], index[float(y)]] += 1
    return matrix


def weighted_kappa(
    a: Sequence[float], b: Sequence[float], labels: Sequence[float], weights: Literal["linear", "quadratic"]
) -> float | None:
    """Cohen's weighted kappa, 1 − Σ w·observed / Σ w·expected, with w over the labels' index
    distance (sklearn's definition with ``labels=``). None with no items or where the expected
    disagreement is 0 (both raters constant on one label, or a single label)."""
    if len(a) != len(b):
        raise ValueError(f"rater A has {len(a)} scores, rater B has {len(b)}")
    if not a:
        return None
    observed = _confusion(a, b, labels)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / len(a)
    idx = np.arange(len(labels))
    distance = np.abs(idx[:, None] - idx[None, :])
    w = distance if weights == "linear" else distance**2
    expected_disagreement = float((w * expected).sum())
    if expected_disagreement == 0:
        return None
    return 1 - float((w * observed).sum()) / expected_disagreement


def kendall(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b (``scipy.stats.kendalltau``); None for fewer than two pairs, a constant side
    or a NaN from scipy."""
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    from scipy.stats import kendalltau

    tau = float(kendalltau(x, y).statistic)
    return None if math.isnan(tau) else tau


def pair_stats(
    rater_a: str,
    rater_b: str,
    dimension: str,
    a: Scores,
    b: Scores,
    *,
    scale: tuple[float, float] | None = None,
    level: Level = "ordinal",
) -> PairStats:
    """Agreement of two raters on one score dimension (see the module docstring for what counts)."""
    both = [k for k in a if k in b]
    scored = [(float(x), float(y)) for k in both if (x := a[k]) is not None and (y := b[k]) is not None]
    xs, ys = [x for x, _ in scored], [y for _, y in scored]
    n = len(scored)
    labels = _labels(xs, ys, scale)
    confusion = _confusion(xs, ys, labels)
    ordered = level != "nominal"

    def share(count: int) -> float | None:
        return count / n if n else None

    def rates(counts: np.ndarray) -> tuple[float, ...]:
        return tuple(float(c) / n if n else 0.0 for c in counts)

    return PairStats(
        rater_a=rater_a,
        rater_b=rater_b,
        dimension=dimension,
        n=n,
        exact=share(sum(1 for x, y in zip(xs, ys) if x == y)),
        within1=share(sum(1 for x, y in zip(xs, ys) if abs(x - y) <= 1)) if ordered else None,
        cohen_kappa=cohen_kappa(xs, ys),
        weighted_kappa_linear=weighted_kappa(xs, ys, labels, "linear") if ordered else None,
        weighted_kappa_quadratic=weighted_kappa(xs, ys, labels, "quadratic") if ordered else None,
        spearman=spearman(xs, ys) if ordered else None,
        kendall=kendall(xs, ys) if ordered else None,
        labels=labels,
        confusion=tuple(tuple(int(c) for c in row) for row in confusion),
        base_rate_a=rates(confusion.sum(axis=1)),
        base_rate_b=rates(confusion.sum(axis=0)),
        abstained_a=sum(1 for k in both if a[k] is None and b[k] is not None),
        abstained_b=sum(1 for k in both if b[k] is None and a[k] is not None),
        only_a=sum(1 for k in a if k not in b),
        only_b=sum(1 for k in b if k not in a),
    )


def all_pairs(
    ratings: Mapping[str, Scores],
    dimension: str,
    *,
    scale: tuple[float, float] | None = None,
    level: Level = "ordinal",
) -> list[PairStats]:
    """:func:`pair_stats` for every unordered pair of raters (rater_a < rater_b by name), leaving
    out pairs that share no scored item."""
    stats = (
        pair_stats(x, y, dimension, ratings[x], ratings[y], scale=scale, level=level)
        for x, y in combinations(sorted(ratings), 2)
    )
    return [s for s in stats if s.n > 0]


def krippendorff_alpha(
    ratings: Mapping[str, Scores],
    *,
    level: Level = "ordinal",
    value_domain: Sequence[float] | None = None,
) -> float | None:
    """Krippendorff's alpha over all raters (the ``krippendorff`` package), which, unlike pairwise
    kappas, uses every item with at least two scores and tolerates missing ones (None).

    None with fewer than two raters, no item scored by two of them, or a single value (in the data
    or in ``value_domain``), where alpha is 0/0. A score outside ``value_domain`` is the caller's
    error and raises the package's ValueError.
    """
    if len(ratings) < 2:
        return None
    items = list(dict.fromkeys(k for scores in ratings.values() for k in scores))
    data = np.array(
        [[np.nan if (v := scores.get(k)) is None else float(v) for k in items] for scores in ratings.values()],
        dtype=float,
    ).reshape(len(ratings), len(items))
    if not ((~np.isnan(data)).sum(axis=0) >= 2).any():
        return None
    domain = sorted({float(v) for v in value_domain}) if value_domain is not None else None
    if len(domain if domain is not None else np.unique(data[~np.isnan(data)])) < 2:
        return None
    import krippendorff

    with np.errstate(invalid="ignore", divide="ignore"):  # one pairable value: 0/0, returned as None
        alpha = float(krippendorff.alpha(data, value_domain=domain, level_of_measurement=level))
    return None if math.isnan(alpha) else alpha
