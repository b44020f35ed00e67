"""The statistics every benchmark shares: no judge, no storage, just numbers in and out. numpy for
the arithmetic, scipy where it has the statistic (Spearman; the BCa bootstrap is scipy's interval,
computed in O(n) memory); scipy is imported inside the functions that use it, so importing this
module stays cheap.

Every function returns None where its statistic is undefined (no items, a constant rater …),
never a made-up number.

- accuracy (MCQ / true-false; RealPref random baselines 0.25 and 0.5)
- binary precision / recall / F1 (relevance vs gold or human labels; Re-Centering)
- Cohen's kappa and Spearman's rho (human vs LLM agreement)
- Wilson interval of a proportion, BCa bootstrap confidence intervals for a mean

A benchmark's own metrics are in its folder (``core/benchmarks/<name>/metrics.py``: CUPID's
checklist P/R/F1, InterPref's pass rate and Bradley–Terry, LoCoMo's token F1).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PRF:
    precision: float | None
    recall: float | None
    f1: float | None


def f1_of(p: float | None, r: float | None) -> float | None:
    """The harmonic mean of precision and recall (None when either is undefined)."""
    if p is None or r is None:
        return None
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def accuracy(correct: Sequence[bool]) -> float | None:
    return sum(bool(c) for c in correct) / len(correct) if correct else None


def binary_prf(predicted: Sequence[bool], gold: Sequence[bool]) -> PRF:
    if len(predicted) != len(gold):
        raise ValueError(f"predicted has {len(predicted)} labels, gold has {len(gold)}")
    tp = sum(1 for p, g in zip(predicted, gold) if p and g)
    n_pred = sum(1 for p in predicted if p)
    n_gold = sum(1 for g in gold if g)
    precision = tp / n_pred if n_pred else None
    recall = tp / n_gold if n_gold else None
    return PRF(precision, recall, f1_of(precision, recall))


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Agreement between two raters beyond chance: (po − pe) / (1 − pe).

    None when undefined: no items, or pe = 1 (both raters gave one and the same label to every
    item, so kappa is 0/0). Ours rather than sklearn's ``cohen_kappa_score``, which answers NaN
    with a warning there (or a number passed as ``replace_undefined_by``) and is not a declared
    dependency.
    """
    if len(a) != len(b):
        raise ValueError(f"rater A has {len(a)} labels, rater B has {len(b)}")
    n = len(a)
    if n == 0:
        return None
    labels = sorted(set(a) | set(b), key=repr)
    observed = sum(1 for x, y in zip(a, b) if x == y) / n
    expected = sum((list(a).count(lab) / n) * (list(b).count(lab) / n) for lab in labels)
    if expected == 1.0:
        return None
    return (observed - expected) / (1 - expected)


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (``scipy.stats.spearmanr``, average ranks for ties); None for fewer than two
    pairs or when either side is constant (rho is 0/0 there)."""
    if len(x) != len(y):
        raise ValueError(f"x has {len(x)} values, y has {len(y)}")
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def wilson_ci(k: int, n: int, level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval of a proportion k/n (the same as ``scipy.stats.binomtest(k, n)
    .proportion_ci(method="wilson")``); (None, None) for n = 0. Unlike the bootstrap it is defined
    for 0 and n successes, which a funnel step often has."""
    if n <= 0:
        return (None, None)
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    low = 0.0 if k == 0 else max(0.0, centre - half)  # exact ends, not 1e-17 from rounding
    high = 1.0 if k == n else min(1.0, centre + half)
    return (low, high)


#: Resamples drawn and averaged at once: memory is O(_RESAMPLE_BATCH × n), not O(resamples × n).
_RESAMPLE_BATCH = 50


def bootstrap_ci(
    values: Sequence[float | None],
    *,
    n: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """BCa bootstrap interval of the mean, ``n`` resamples, a fixed ``seed`` so the same scores
    always give the same interval. None values are skipped.

    The same interval ``scipy.stats.bootstrap(method="BCa")`` gives (same resamples from the same
    seed, same bias correction, same quantiles; checked against it in the tests), computed in O(n)
    memory: resamples are drawn in batches, and the jackknife means the acceleration needs have a
    closed form for the mean, ``(sum − x_i) / (n − 1)``, where scipy builds an n × (n − 1) array
    (21 GB for a group of 35K scores).

    - fewer than 2 values: (None, None), there is nothing to resample;
    - constant values: (v, v); every resample has mean v (BCa itself is 0/0 there);
    - any other case where BCa cannot be computed (a degenerate distribution): (None, None).
    """
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    size = len(arr)
    if size < 2:
        return (None, None)
    if np.all(arr == arr[0]):
        return (float(arr[0]), float(arr[0]))
    from scipy.special import ndtr, ndtri
    from scipy.stats import quantile

    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            arr[rng.integers(0, size, (min(_RESAMPLE_BATCH, n - k), size))].mean(axis=-1)
            for k in range(0, n, _RESAMPLE_BATCH)
        ]
    )
    theta = arr.mean()
    with np.errstate(divide="ignore", invalid="ignore"):  # degenerate BCa: reported as None below
        z0 = ndtri((np.count_nonzero(means < theta) + np.count_nonzero(means <= theta)) / (2 * n))
        jackknife = (arr.sum() - arr) / (size - 1)
        u = (size - 1) * (jackknife.mean() - jackknife)
        accel = (np.sum(u**3) / size**3) / (6 * (np.sum(u**2) / size**2) ** 1.5)
        z = float(ndtri((1 - level) / 2))
        shifted = [z0 + (z0 + zz) / (1 - accel * (z0 + zz)) for zz in (z, -z)]
        alphas = ndtr(np.asarray(shifted))
        if np.any(np.isnan(alphas)):
            return (None, None)
        low, high = (float(q) for q in quantile(means, alphas))
    if np.isnan(low) or np.isnan(high):
        return (None, None)
    return (low, high)
