"""The diagnosis funnel (:func:`core.analysis.diagnosis_funnel.funnel_table`): counts per label in
funnel order, the applied rate and the "known, not applied" rate with Wilson intervals checked
against scipy, and generalized preferences reported in rows of their own."""

from __future__ import annotations

import pytest
from scipy.stats import binomtest

from core.analysis import diagnosis as dx
from core.analysis.diagnosis import Case, Diagnosis, Step
from core.analysis.diagnosis_funnel import DEFAULT_FACTORS, funnel_table
from core.plan import Message, PromptPlan, PromptStep

PLAN = PromptPlan(method="zero-shot", steps=[PromptStep(name="answer", messages=[Message(role="user", content="q")])])


def case(model: str = "m1", origin: str | None = "original", **kw) -> Case:
    data = dict(
        run_id="r",
        response_id="x",
        model=model,
        query_id="q",
        query_kind="open",
        method="zero-shot",
        context="simple",
        status="ok",
        plan=PLAN,
        origin=origin,
    )
    return Case(**{**data, **kw})


def diag(label: str, known: str = "pass") -> Diagnosis:
    steps = (
        Step("in context", "fail" if label == dx.NOT_IN_CONTEXT else "pass", ""),
        Step("retrieved", "n/a", ""),
        Step("known", known, ""),
        Step("applied", "pass" if label == dx.APPLIED else _verdict_of(label), ""),
    )
    return Diagnosis(label, steps)


def _verdict_of(label: str) -> str:
    # as diagnose() makes them: no verdict (or no answer) leaves "applied" unknown
    return "unknown" if label.startswith(("undetermined: no verdict", "undetermined: no answer")) else "fail"


def items(spec: list[tuple[str, str, int]], model: str = "m1", origin: str | None = "original", et: int = 2):
    """(label, known status, how many) -> funnel items."""
    return [
        (case(model, origin), diag(label, known), {"expression_type": et}) for label, known, n in spec for _ in range(n)
    ]


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return float(ci.low), float(ci.high)


def test_counts_rates_and_wilson_intervals():
    rows = items(
        [
            (dx.APPLIED, "pass", 3),
            (dx.APPLIED, "unknown", 1),  # applied, no probe: not in known_n
            (dx.KNOWN_NOT_APPLIED, "pass", 2),
            (dx.NOT_KNOWN, "fail", 2),
            (dx.NOT_IN_CONTEXT, "fail", 1),
            (dx.NOT_RETRIEVED, "unknown", 1),
            ("undetermined: no probe", "unknown", 1),
            ("undetermined: no verdict", "pass", 1),  # known, but no verdict: not in known_n
            ("undetermined: no answer (error)", "unknown", 1),
        ]
    )
    table = funnel_table(rows)
    assert table.columns[:5] == [*DEFAULT_FACTORS, "origin"]
    assert table.columns[5:13] == ["n", *dx.LABELS]
    (row,) = table.as_dicts()
    assert (row["model"], row["expression_type"], row["context"], row["method"], row["origin"]) == (
        "m1",
        2,
        "simple",
        "zero-shot",
        "original",
    )
    assert row["n"] == 13
    assert [row[label] for label in dx.LABELS] == [1, 1, 2, 2, 0, 4, 3]
    assert row["applied_rate"] == pytest.approx(4 / 13)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson(4, 13), abs=1e-12)
    assert row["known_n"] == 5  # 3 applied + 2 known, not applied
    assert row["known_not_applied_rate"] == pytest.approx(2 / 5)
    assert (row["kna_ci_low"], row["kna_ci_high"]) == pytest.approx(wilson(2, 5), abs=1e-12)
    assert table.value_column == "applied_rate" and table.scale == (0.0, 1.0)


def test_generalized_preferences_get_their_own_rows():
    rows = (
        items([(dx.APPLIED, "pass", 2), (dx.NOT_KNOWN, "fail", 1)], origin="original")
        + items([(dx.KNOWN_NOT_APPLIED, "pass", 2)], origin="generalized")
        + items([(dx.APPLIED, "pass", 1)], origin=None)
        + items([(dx.NOT_KNOWN, "fail", 1)], model="m0", origin="original")
    )
    table = funnel_table(rows)
    got = [(r["model"], r["origin"], r["n"], r[dx.APPLIED], r["known_n"]) for r in table.as_dicts()]
    assert got == [
        ("m0", "original", 1, 0, 0),
        ("m1", "generalized", 2, 0, 2),
        ("m1", "n/a", 1, 1, 1),
        ("m1", "original", 3, 2, 2),
    ]
    generalized = table.as_dicts()[1]
    assert generalized["applied_rate"] == 0.0
    assert (generalized["ci_low"], generalized["ci_high"]) == pytest.approx(wilson(0, 2), abs=1e-12)
    assert generalized["known_not_applied_rate"] == 1.0
    assert (generalized["kna_ci_low"], generalized["kna_ci_high"]) == pytest.approx(wilson(2, 2), abs=1e-12)


def test_no_known_answer_gives_no_kna_rate():
    (row,) = funnel_table(items([(dx.NOT_KNOWN, "fail", 3)])).as_dicts()
    assert row["known_n"] == 0
    assert row["known_not_applied_rate"] is None
    assert (row["kna_ci_low"], row["kna_ci_high"]) == (None, None)
    assert row["applied_rate"] == 0.0


def test_factors_are_chosen_and_origin_is_always_added():
    rows = items([(dx.APPLIED, "pass", 1)], et=1) + items([(dx.NOT_KNOWN, "fail", 1)], et=3)
    table = funnel_table(rows, factors=("expression_type",))
    assert table.columns[:3] == ["expression_type", "origin", "n"]
    assert [(r["expression_type"], r["n"], r[dx.APPLIED], r[dx.NOT_KNOWN]) for r in table.as_dicts()] == [
        (1, 1, 1, 0),
        (3, 1, 0, 1),
    ]
    by_model = funnel_table(rows, factors=("model",))
    assert [r["n"] for r in by_model.as_dicts()] == [2]
    assert funnel_table([]).rows == []


def test_kna_rate_counts_every_answer_whose_probes_passed_and_that_has_a_verdict():
    """known_not_applied_rate: of the answers whose probes passed and that have a verdict, the share
    whose verdict fails, whatever label an earlier step gave them. An answer whose evidence was not
    sent but whose probes passed (the model guessed) and whose verdict fails is known and not
    applied, though labelled 'not in context'."""
    rows = items([(dx.APPLIED, "pass", 1), (dx.KNOWN_NOT_APPLIED, "pass", 1), (dx.NOT_IN_CONTEXT, "pass", 1)])
    (row,) = funnel_table(rows).as_dicts()
    assert row["known_n"] == 3
    assert row["known_not_applied_rate"] == pytest.approx(2 / 3)


def test_misapplied_has_its_own_column_and_rate_over_restraint_answers():
    def restraint(label: str, verdict: str) -> Diagnosis:
        steps = (
            Step("in context", "pass", ""),
            Step("retrieved", "n/a", ""),
            Step("known", "pass", ""),
            Step("applied", verdict, ""),
        )
        return Diagnosis(label, steps, restraint=True)

    rows = [
        *items([(dx.APPLIED, "pass", 2), (dx.KNOWN_NOT_APPLIED, "pass", 1)]),
        *((case(), restraint(dx.MISAPPLIED, "fail"), {"expression_type": 2}) for _ in range(3)),
        (case(), restraint(dx.HELD_BACK, "pass"), {"expression_type": 2}),
        (case(), restraint("undetermined: no verdict", "unknown"), {"expression_type": 2}),
    ]
    (row,) = funnel_table(rows).as_dicts()
    assert row["n"] == 8
    assert (row[dx.MISAPPLIED], row[dx.APPLIED], row[dx.UNDETERMINED]) == (3, 3, 1)
    assert row["restraint_n"] == 4  # the undetermined restraint answer has no verdict
    assert row["misapplied_rate"] == pytest.approx(3 / 4)
    assert (row["mis_ci_low"], row["mis_ci_high"]) == pytest.approx(wilson(3, 4), abs=1e-12)
    # restraint answers stay out of the known-not-applied rate (their "applied" asks the opposite)
    assert row["known_n"] == 3 and row["known_not_applied_rate"] == pytest.approx(1 / 3)
