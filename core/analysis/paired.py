"""Paired comparison of two sets of scores on the same items: is B really better than A?

Items are paired by a key (user, query, expression type, context, seed … whatever the caller
decides; :func:`pair`). On the pairs, :func:`compare` gives

- the mean paired difference B − A and its paired bootstrap 95% interval (BCa over the item
  differences, :func:`core.metrics.bootstrap_ci`: resampling items keeps each pair together);
- binary scores (every score 0 or 1): McNemar's exact test, the two-sided binomial test on the
  discordant pairs (``scipy.stats.binomtest(b, b + c, 0.5)``), and the discordant counts;
- other (ordinal / continuous) scores: the Wilcoxon signed-rank test (``scipy.stats.wilcoxon``,
  zero differences dropped, its default) and the matched-pairs rank-biserial correlation;
- Cohen's d_z (mean difference / its standard deviation) for both;
- the items that regressed (B < A) and improved (B > A), largest change first.

Pure functions; scipy is imported inside them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.metrics import bootstrap_ci


@dataclass(frozen=True)
class Pair:
    key: tuple[Hashable, ...]
    a: float
    b: float
    #: What each side's score came from (a response id), for opening the two answers.
    a_ref: Any = None
    b_ref: Any = None

    @property
    def diff(self) -> float:
        return self.b - self.a


@dataclass(frozen=True)
class Comparison:
    n: int
    #: Items on one side only (no partner), per side.
    unpaired_a: int
    unpaired_b: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    binary: bool
    test: str
    statistic: float | None
    p_value: float | None
    #: Cohen's d_z; the rank-biserial correlation (ordinal) or the discordant counts (binary).
    effect_dz: float | None
    rank_biserial: float | None = None
    #: Binary: pairs right in A only (b) and in B only (c).
    a_only: int | None = None
    b_only: int | None = None
    regressed: list[Pair] = field(default_factory=list)
    improved: list[Pair] = field(default_factory=list)
    #: Pairs with the same score on both sides.
    ties: list[Pair] = field(default_factory=list)


def pair(
    a: Mapping[tuple[Hashable, ...], tuple[float, Any]], b: Mapping[tuple[Hashable, ...], tuple[float, Any]]
) -> tuple[list[Pair], int, int]:
    """Pairs of the keys both sides scored (key order), and how many keys each side has alone.
    Each side maps key -> (score, reference)."""
    common = sorted(set(a) & set(b), key=repr)
    pairs = [Pair(k, float(a[k][0]), float(b[k][0]), a[k][1], b[k][1]) for k in common]
    return pairs, len(set(a) - set(b)), len(set(b) - set(a))


def compare(pairs: Sequence[Pair], unpaired_a: int = 0, unpaired_b: int = 0) -> Comparison:
    n = len(pairs)
    diffs = [p.diff for p in pairs]
    binary = n > 0 and all(p.a in (0.0, 1.0) and p.b in (0.0, 1.0) for p in pairs)
    regressed = sorted((p for p in pairs if p.diff < 0), key=lambda p: (p.diff, repr(p.key)))
    improved = sorted((p for p in pairs if p.diff > 0), key=lambda p: (-p.diff, repr(p.key)))
    base: dict[str, Any] = dict(
        n=n,
        unpaired_a=unpaired_a,
        unpaired_b=unpaired_b,
        mean_a=_mean([p.a for p in pairs]),
        mean_b=_mean([p.b for p in pairs]),
        mean_diff=_mean(diffs),
        binary=binary,
        effect_dz=_dz(diffs),
        regressed=regressed,
        improved=improved,
        ties=[p for p in pairs if p.diff == 0],
    )
    base["ci_low"], base["ci_high"] = bootstrap_ci(diffs) if n else (None, None)
    if binary:
        only_a = sum(1 for p in pairs if p.a == 1 and p.b == 0)
        only_b = sum(1 for p in pairs if p.a == 0 and p.b == 1)
        stat, pv = mcnemar_exact(only_a, only_b)
        return Comparison(**base, test="McNemar (exact)", statistic=stat, p_value=pv, a_only=only_a, b_only=only_b)
    stat, pv, rb = wilcoxon(diffs)
    return Comparison(**base, test="Wilcoxon signed-rank", statistic=stat, p_value=pv, rank_biserial=rb)


def mcnemar_exact(only_a: int, only_b: int) -> tuple[float | None, float | None]:
    """(min discordant count, two-sided exact p): the binomial test on the discordant pairs.
    No discordant pair: (None, None) — there is nothing to test."""
    total = only_a + only_b
    if total == 0:
        return None, None
    from scipy.stats import binomtest

    return float(min(only_a, only_b)), float(binomtest(only_b, total, 0.5).pvalue)


def wilcoxon(diffs: Sequence[float]) -> tuple[float | None, float | None, float | None]:
    """(W, two-sided p, matched-pairs rank-biserial r) of the non-zero differences; Nones when
    every difference is zero (or there are none)."""
    nonzero = [d for d in diffs if d != 0]
    if not nonzero:
        return None, None, None
    import numpy as np
    from scipy.stats import rankdata
    from scipy.stats import wilcoxon as scipy_wilcoxon

    result = scipy_wilcoxon(nonzero)
    ranks = rankdata(np.abs(nonzero))
    plus = float(sum(r for r, d in zip(ranks, nonzero) if d > 0))
    minus = float(sum(r for r, d in zip(ranks, nonzero) if d < 0))
    return float(result.statistic), float(result.pvalue), (plus - minus) / (plus + minus)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _dz(diffs: Sequence[float]) -> float | None:
    if len(diffs) < 2:
        return None
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return mean / math.sqrt(var) if var > 0 else None
