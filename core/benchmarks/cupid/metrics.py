"""CUPID's metrics (paper §2.3; github.com/kixlab/CUPID @ a8560ca, evaluation/pipeline/result.py):
checklist precision / recall / F1 with partial credit (Fully = 1, Partially = 0.5, Not covered = 0;
precision over inferred items, recall over gold items; micro-averaged over instances), and CUPID's
own micro-average on counts (:func:`cupid_prf`, 0 rather than None on an empty denominator, as its
code does). Pure functions; the generic statistics are :mod:`core.metrics`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.metrics import PRF, f1_of

COVERAGE = {"fully": 1.0, "partially": 0.5, "not": 0.0}


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
    return PRF(precision, recall, f1_of(precision, recall))


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
