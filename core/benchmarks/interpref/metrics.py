"""InterPref's metrics (paper §4.1 and App. C): the pass rate over swapped orders, the judge's
order disagreement, and Bradley–Terry coefficients fitted by cross-entropy on a win-rate matrix.
Pure functions (numpy); the generic statistics are :mod:`core.metrics`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


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
