"""The papers' metrics: no judge, no storage, just numbers in and out. numpy for the arithmetic,
scipy where it has the statistic (Spearman, BCa bootstrap); scipy is imported inside the functions
that use it, so importing this module stays cheap.

Every function returns None where its statistic is undefined (no items, a constant rater …),
never a made-up number.

- accuracy (MCQ / true-false; RealPref random baselines 0.25 and 0.5)
- binary precision / recall / F1 (relevance vs gold or human labels; Re-Centering)
- checklist precision / recall / F1 with partial credit (CUPID preference matching, CUPID paper §2.3:
  Fully = 1, Partially = 0.5, Not covered = 0; precision over inferred items, recall over gold
  items; micro-averaged over instances), and CUPID's own micro-average on counts (``cupid_prf``,
  0 rather than None on an empty denominator, as its code does)
- Cohen's kappa and Spearman's rho (human vs LLM agreement)
- InterPref pass rate over swapped orders and Bradley–Terry coefficients fitted by cross-entropy
  on a win-rate matrix (InterPref paper §4.1 and Appendix C)
- BCa bootstrap confidence intervals for a mean
- LoCoMo QA: normalised token F1 with the Porter stemmer, the category-1 multi-answer F1 and the
  category-5 "not mentioned" rule (``locomo_score``), as its official evaluation code
"""

from __future__ import annotations

import math
import re
import string
import warnings
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np

COVERAGE = {"fully": 1.0, "partially": 0.5, "not": 0.0}


@dataclass(frozen=True)
class PRF:
    precision: float | None
    recall: float | None
    f1: float | None


def _f1(p: float | None, r: float | None) -> float | None:
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
    return PRF(precision, recall, _f1(precision, recall))


def checklist_prf(instances: Sequence[tuple[Sequence[float], Sequence[float]]]) -> PRF:
    """Micro-averaged P/R/F1 with partial credit.

    Each instance is ``(inferred_item_coverage, gold_item_coverage)``: for every item of the
    inferred preference, how far the gold preference covers it (1 / 0.5 / 0), and for every gold
    item, how far the inferred preference covers it.
    """
    covered_inferred = sum(sum(inf) for inf, _ in instances)
    n_inferred = sum(len(inf) for inf, _ in instances)
    covered_gold = sum(sum(gold) for _, gold in instances)
    n_gold = sum(len(gold) for _, gold in instances)
    precision = covered_inferred / n_inferred if n_inferred else None
    recall = covered_gold / n_gold if n_gold else None
    return PRF(precision, recall, _f1(precision, recall))


@dataclass(frozen=True)
class CupidCounts:
    """One instance as CUPID's aggregation keeps it (evaluation/pipeline/result.py @ a8560ca):
    checklist lengths and the summed label scores of the entries the matcher returned (which
    nothing checks against the checklist length)."""

    n_true: int
    n_predicted: int
    true_matched: float
    predicted_matched: float


def cupid_prf(rows: Sequence[CupidCounts]) -> PRF:
    """CUPID's micro-average (calculate_prf): sums first, ratios after; each of P, R and F1 is 0,
    not undefined, when its denominator is 0, so instances counted as zero pull the means down."""
    n_true = sum(r.n_true for r in rows)
    n_pred = sum(r.n_predicted for r in rows)
    precision = sum(r.predicted_matched for r in rows) / n_pred if n_pred else 0.0
    recall = sum(r.true_matched for r in rows) / n_true if n_true else 0.0
    return PRF(precision, recall, 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))


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


def pass_rate(instances: Sequence[Sequence[bool]]) -> float | None:
    """InterPref pass: an instance passes only if the judge matched correctly in every order
    (4 swapped orders in the paper; chance = 0.5**4 = 6.25%)."""
    if not instances:
        return None
    return sum(1 for orders in instances if orders and all(orders)) / len(instances)


def order_disagreement(instances: Sequence[Sequence[bool]]) -> float | None:
    """Share of instances whose swapped orders did not all agree: the judge's position bias."""
    if not instances:
        return None
    return sum(1 for orders in instances if len(set(orders)) > 1) / len(instances)


def win_rate_matrix(outcomes: Sequence[tuple[str, str, float]], models: Sequence[str]) -> np.ndarray:
    """``outcomes`` are (model_i, model_j, score_i) with score 1 win, 0.5 draw, 0 loss.

    Returns W with W[i, j] = mean score of i against j (NaN where they never met).
    """
    index = {m: k for k, m in enumerate(models)}
    total = np.zeros((len(models), len(models)))
    count = np.zeros_like(total)
    for a, b, s in outcomes:
        i, j = index[a], index[b]
        total[i, j] += s
        count[i, j] += 1
        total[j, i] += 1 - s
        count[j, i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count == 0, 1, count), np.nan)


def bradley_terry(win: np.ndarray, *, iterations: int = 5000, tol: float = 1e-10) -> np.ndarray:
    """Coefficients xi minimising sum_ij CE(W_ij, sigmoid(xi_i - xi_j)) (InterPref paper, App. C).

    NaN cells (pairs that never met) and the diagonal are ignored. BT is defined up to an
    additive constant; we return coefficients centred on mean 0.
    """
    w = np.asarray(win, dtype=float)
    mask = ~np.isnan(w)
    np.fill_diagonal(mask, False)
    target = np.where(mask, w, 0.0)
    xi = np.zeros(w.shape[0])
    # Newton steps on a convex objective; damped for safety.
    for _ in range(iterations):
        diff = xi[:, None] - xi[None, :]
        p = 1.0 / (1.0 + np.exp(-diff))
        resid = np.where(mask, p - target, 0.0)
        grad = resid.sum(axis=1) - resid.sum(axis=0)
        curv = np.where(mask, p * (1 - p), 0.0)
        hess = -(curv + curv.T)
        np.fill_diagonal(hess, (curv + curv.T).sum(axis=1))
        hess += np.eye(len(xi)) * 1e-9
        step = np.linalg.lstsq(hess, grad, rcond=None)[0]
        xi -= step
        xi -= xi.mean()
        if np.max(np.abs(step)) < tol:
            break
    return xi


def bt_cross_entropy(win: np.ndarray, xi: np.ndarray) -> float:
    """The objective of :func:`bradley_terry` (for tests and reports)."""
    w = np.asarray(win, dtype=float)
    mask = ~np.isnan(w)
    np.fill_diagonal(mask, False)
    p = 1.0 / (1.0 + np.exp(-(xi[:, None] - xi[None, :])))
    eps = 1e-12
    ce = -(np.where(mask, w, 0) * np.log(p + eps) + (1 - np.where(mask, w, 0)) * np.log(1 - p + eps))
    return float(np.where(mask, ce, 0).sum())


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


def bootstrap_ci(
    values: Sequence[float | None],
    *,
    n: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """BCa bootstrap interval of the mean (``scipy.stats.bootstrap``, ``n`` resamples, a fixed
    ``seed`` so the same scores always give the same interval). None values are skipped.

    - fewer than 2 values: (None, None), there is nothing to resample;
    - constant values: (v, v); every resample has mean v (BCa itself is 0/0 there);
    - any other case where BCa cannot be computed (scipy returns NaN): (None, None).
    """
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if len(arr) < 2:
        return (None, None)
    if np.all(arr == arr[0]):
        return (float(arr[0]), float(arr[0]))
    from scipy.stats import bootstrap

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degenerate BCa: reported as None below
        ci = bootstrap(
            (arr,),
            np.mean,
            method="BCa",
            n_resamples=n,
            confidence_level=level,
            rng=np.random.default_rng(seed),
        ).confidence_interval
    low, high = float(ci.low), float(ci.high)
    if np.isnan(low) or np.isnan(high):
        return (None, None)
    return (low, high)


# -- LoCoMo QA (snap-research/locomo @ 9228632, task_eval/evaluation.py) ----------------------------

LOCOMO_UNANSWERABLE_MARKS = ("no information available", "not mentioned")
_LOCOMO_ARTICLES = re.compile(r"\b(a|an|the|and)\b")


def locomo_normalize(text: str) -> str:
    """``normalize_answer``: drop commas, lower-case, drop ASCII punctuation, articles and "and"
    become spaces, whitespace collapsed."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in string.punctuation)
    return " ".join(_LOCOMO_ARTICLES.sub(" ", text).split())


@cache
def _porter():  # imported on first use: nltk is only needed for LoCoMo scores
    from nltk.stem import PorterStemmer  # type: ignore[import-untyped]

    return PorterStemmer()


def locomo_token_f1(prediction: str, gold: str) -> float:
    """``f1_score``: F1 of the multiset overlap of Porter-stemmed normalised tokens (0 on no overlap)."""
    stem = _porter().stem
    pred = [stem(t) for t in locomo_normalize(prediction).split()]
    ref = [stem(t) for t in locomo_normalize(gold).split()]
    overlap = sum((Counter(pred) & Counter(ref)).values())
    if overlap == 0:
        return 0.0
    p, r = overlap / len(pred), overlap / len(ref)
    return 2 * p * r / (p + r)


def locomo_multi_f1(prediction: str, gold: str) -> float:
    """``f1`` (category 1): mean over the gold's comma-separated parts of the best part-F1."""
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return float(np.mean([max(locomo_token_f1(p, g) for p in preds) for g in golds]))


def locomo_score(category: int, prediction: str, gold: str) -> float:
    """``eval_question_answering`` for one question. Category 3 keeps the gold before its first
    ``;``; category 5 scores 1 iff the prediction says the answer is not there (gold unused)."""
    if category in (2, 3, 4):
        return locomo_token_f1(prediction, gold.split(";")[0].strip() if category == 3 else gold)
    if category == 1:
        return locomo_multi_f1(prediction, gold)
    if category == 5:
        low = prediction.lower()
        return 1.0 if any(mark in low for mark in LOCOMO_UNANSWERABLE_MARKS) else 0.0
    raise ValueError(f"LoCoMo category must be 1-5, got {category!r}")
