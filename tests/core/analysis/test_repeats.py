"""core.analysis.repeats: variance and verdict flips across the repeats of a cell, and a judge's
test–retest; every number checked against a hand computation on constructed judgment rows."""

from __future__ import annotations

import pytest

from core.analysis.repeats import flips, pass_mark, repeat_table, retest_table
from core.analysis.report import JudgmentRow
from core.metrics import wilson_ci


def jr(
    score, *, factors=(), kind="rubric", dimension="alignment", judge="openai:judge", heuristic=False, ok=True, rid=None
):
    return JudgmentRow(
        kind=kind,
        dimension=dimension,
        score=score if ok else None,
        parse_ok=ok,
        judge_model=judge,
        prompt_version="v1",
        heuristic=heuristic,
        human=False,
        is_demo=True,
        scale_min=1.0,
        scale_max=5.0,
        extra={},
        factors=tuple(factors),
        response_id=rid,
    )


def test_pass_marks_are_the_diagnosis_rules():
    assert pass_mark("rubric", "alignment") == 4
    assert pass_mark("rubric", "awareness") == 4
    assert pass_mark("checklist", "preference") == 7
    assert pass_mark("choice", "accuracy") == 1
    assert pass_mark("locomo", "f1") == 0.5
    assert pass_mark("rubric", "quality") is None
    assert pass_mark("nonsense", "alignment") is None


@pytest.mark.parametrize(
    "scores,mark,flipped",
    [
        ([5, 4, 4], 4, False),  # all pass
        ([3, 4], 4, True),  # fail, pass
        ([1, 3, 2], 4, False),  # all fail: the score moves, the verdict does not
        ([0.5, 0.49], 0.5, True),
        ([2, 2, 2], None, False),  # no pass mark: any change of score is a flip
        ([2, 3], None, True),
    ],
)
def test_flips(scores, mark, flipped):
    assert flips(scores, mark) is flipped


def repeat_rows():
    """by = (model,), item identity = (cell, model). Hand computation, LLM judge on alignment (mark 4):

    model A, item c1: 5, 3, 4   -> var 1, sd 1, verdicts pass/fail/pass: flip
    model A, item c2: 4, 4 and one parse failure -> var 0, sd 0, no flip; failed 1
    model A, item c3: 2 (answered once)  -> not an item, not in the mean
    model B, item c1: 1, 2, 3, 2 -> var 2/3, sd sqrt(2/3), all fail: no flip
    heuristic judge on A c1: 4, 3 -> its own row: var 0.5, flip
    """
    a, b = "demo:a", "demo:b"
    return [
        *(jr(s, factors=(a, "c1", a)) for s in (5, 3, 4)),
        jr(4, factors=(a, "c2", a)),
        jr(None, factors=(a, "c2", a), ok=False),
        jr(4, factors=(a, "c2", a)),
        jr(2, factors=(a, "c3", a)),
        *(jr(s, factors=(b, "c1", b)) for s in (1, 2, 3, 2)),
        jr(4, factors=(a, "c1", a), judge="demo:heuristic", heuristic=True),
        jr(3, factors=(a, "c1", a), judge="demo:heuristic", heuristic=True),
    ]


def test_repeat_table_by_hand():
    t = repeat_table(repeat_rows(), "rubric:alignment", ["model"], 2)
    assert t.columns[:5] == ["model", "source", "judge", "prompt_version", "dimension"]
    rows = {(r["model"], r["source"]): r for r in t.as_dicts()}
    assert set(rows) == {("demo:a", "llm"), ("demo:b", "llm"), ("demo:a", "heuristic")}

    a = rows[("demo:a", "llm")]
    assert (a["items"], a["repeats"], a["failed"]) == (2, 2.5, 1)
    assert a["mean"] == pytest.approx((5 + 3 + 4 + 4 + 4) / 5)
    assert a["item_variance"] == pytest.approx((1 + 0) / 2)
    assert a["item_sd"] == pytest.approx((1 + 0) / 2)
    assert a["verdict"] == "passes 4"
    assert a["flip_rate"] == pytest.approx(1 / 2)
    assert (a["flip_ci_low"], a["flip_ci_high"]) == pytest.approx(wilson_ci(1, 2))

    b = rows[("demo:b", "llm")]
    assert (b["items"], b["repeats"], b["failed"]) == (1, 4, 0)
    assert b["mean"] == pytest.approx(2.0)
    assert b["item_variance"] == pytest.approx(2 / 3)
    assert b["item_sd"] == pytest.approx((2 / 3) ** 0.5)
    assert b["flip_rate"] == 0 and (b["flip_ci_low"], b["flip_ci_high"]) == pytest.approx(wilson_ci(0, 1))

    h = rows[("demo:a", "heuristic")]
    assert h["items"] == 1 and h["item_variance"] == pytest.approx(0.5) and h["flip_rate"] == 1.0
    assert t.value_column == "flip_rate" and t.scale == (0.0, 1.0)


def test_a_dimension_without_a_pass_mark_flips_on_any_change():
    rows = [jr(s, factors=("m", "c1", "m"), dimension="quality") for s in (4, 5)]
    rows += [jr(s, factors=("m", "c2", "m"), dimension="quality") for s in (3, 3)]
    [r] = repeat_table(rows, "rubric:quality", ["model"], 2).as_dicts()
    assert r["verdict"] == "score changes" and r["flip_rate"] == pytest.approx(1 / 2)


def test_the_item_is_the_identity_not_the_by_factors():
    """Two cells in one group are two items, even with the same scores."""
    rows = [jr(s, factors=("m", cell)) for cell in ("x", "y") for s in (3, 5)]
    [r] = repeat_table(rows, "m", [], 2).as_dicts()
    assert r["items"] == 2 and r["flip_rate"] == 1.0 and r["item_variance"] == pytest.approx(2.0)


def test_no_repeats_no_items():
    t = repeat_table([jr(4, factors=("m", "c1", "m")), jr(5, factors=("m", "c2", "m"))], "m", ["model"], 2)
    [r] = t.as_dicts()
    assert r["items"] == 0 and r["mean"] is None and r["flip_rate"] is None and r["flip_ci_low"] is None
    empty = repeat_table([], "rubric:alignment", ["model"], 2)
    assert empty.rows == [] and empty.notes[0].startswith("no repeated rubric:alignment scores")


def test_retest_table_by_hand():
    """Per response, the same judge again. LLM judge, alignment (mark 4):

    r1: 4, 4, 4 -> exact, within 1, pstdev 0, no flip
    r2: 3, 4    -> within 1, pstdev 0.5, flip
    r3: 1, 5, 3 -> neither exact nor within 1, pstdev sqrt(8/3), flip (5 passes, 1 and 3 fail)
    r4: 2 and a parse failure -> judged once: not counted; failed 1
    a judgment without a response: failed
    """
    rows = [
        *(jr(4, rid="r1") for _ in range(3)),
        jr(3, rid="r2"),
        jr(4, rid="r2"),
        *(jr(s, rid="r3") for s in (1, 5, 3)),
        jr(2, rid="r4"),
        jr(None, rid="r4", ok=False),
        jr(5, rid=None),
    ]
    t = retest_table(rows, "rubric:alignment")
    [r] = t.as_dicts()
    assert (r["source"], r["judge"], r["dimension"]) == ("llm", "openai:judge", "alignment")
    assert (r["answers"], r["judgings"], r["failed"]) == (3, pytest.approx(8 / 3, abs=0.005), 2)
    assert r["exact"] == pytest.approx(1 / 3)
    assert r["within1"] == pytest.approx(2 / 3)
    assert r["answer_sd"] == pytest.approx((0 + 0.5 + (8 / 3) ** 0.5) / 3)
    assert r["verdict"] == "passes 4"
    assert r["flip_rate"] == pytest.approx(2 / 3)
    assert (r["flip_ci_low"], r["flip_ci_high"]) == pytest.approx(wilson_ci(2, 3))
    assert t.value_column == "exact"


def test_retest_keeps_judges_apart():
    rows = [jr(4, rid="r1"), jr(4, rid="r1"), jr(1, rid="r1", judge="demo:heuristic", heuristic=True)]
    rows.append(jr(5, rid="r1", judge="demo:heuristic", heuristic=True))
    t = {r["source"]: r for r in retest_table(rows, "m").as_dicts()}
    assert t["llm"]["exact"] == 1.0 and t["llm"]["flip_rate"] == 0
    assert t["heuristic"]["exact"] == 0 and t["heuristic"]["flip_rate"] == 1.0
    assert retest_table([], "rubric:alignment").notes[0] == "no rubric:alignment judgments in the selected runs"
