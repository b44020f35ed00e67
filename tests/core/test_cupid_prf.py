"""CUPID's micro-average on counts, with the instances its aggregation counts as zero
(evaluation/pipeline/result.py @ a8560ca; PROTOCOL §5–6)."""

from __future__ import annotations

import pytest

from core.benchmarks.cupid.judge_matching import micro_prf
from core.benchmarks.cupid.metrics import CupidCounts, checklist_prf, cupid_prf

A = CupidCounts(n_true=3, n_predicted=2, true_matched=2.5, predicted_matched=1.5)
B = CupidCounts(n_true=2, n_predicted=2, true_matched=1.0, predicted_matched=1.0)
C_EMPTY = CupidCounts(n_true=2, n_predicted=0, true_matched=0.0, predicted_matched=0.0)


def test_worked_example_empty_inference_counts_as_zero():
    prf = cupid_prf([A, B, C_EMPTY])
    assert prf.recall == pytest.approx(0.50)  # 3.5 / 7
    assert prf.precision == pytest.approx(0.625)  # 2.5 / 4
    assert prf.f1 == pytest.approx(2 * 0.625 * 0.5 / 1.125)
    # what prefscope reported before: the empty instance dropped
    before = checklist_prf([([1, 0.5], [1, 1, 0.5]), ([1, 0], [1, 0])])
    assert before.recall == pytest.approx(0.70) and before.precision == pytest.approx(0.625)


def _extra(status: str, c: CupidCounts | None = None) -> dict:
    e: dict = {"cupid_status": status}
    if c is not None:
        e |= {"n_true": c.n_true, "n_predicted": c.n_predicted, "true_matched": c.true_matched}
        e |= {"predicted_matched": c.predicted_matched}
    return e


def test_statuses_from_stored_extras():
    counted = [_extra("ok", A), _extra("ok", B), _extra("empty", C_EMPTY)]
    assert micro_prf(counted + [_extra("no_heading"), _extra("decompose_failed")]) == cupid_prf([A, B, C_EMPTY])
    failed = _extra("match_failed", CupidCounts(3, 2, 0.0, 0.0))
    prf = micro_prf(counted + [failed])
    assert prf.recall == pytest.approx(3.5 / 10) and prf.precision == pytest.approx(2.5 / 6)
    cut = _extra("context_length", CupidCounts(2, 0, 0.0, 0.0))
    assert micro_prf(counted + [cut]).recall == pytest.approx(3.5 / 9)


def test_zero_denominators_are_zero_not_undefined():
    assert cupid_prf([C_EMPTY, C_EMPTY]) == cupid_prf([]) == cupid_prf([C_EMPTY])
    prf = cupid_prf([C_EMPTY])
    assert (prf.precision, prf.recall, prf.f1) == (0.0, 0.0, 0.0)


def test_more_returned_entries_than_items_is_not_checked():
    prf = cupid_prf([CupidCounts(n_true=2, n_predicted=2, true_matched=2.0, predicted_matched=3.0)])
    assert prf.precision == pytest.approx(1.5)  # CUPID does not check the count
