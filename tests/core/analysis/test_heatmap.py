"""core.analysis.heatmap: a score over two factors as a grid; axes in reading order, means and counts
per cell by hand, one panel per judge and per value of further factors, parse failures left out."""

from __future__ import annotations

import pytest

from core.analysis.heatmap import axis_order, heatmaps
from core.analysis.report import JudgmentRow
from core.history.configs import CONFIGS


def row(depth, context, score, *, judge="openai:judge", heuristic=False, parse_ok=True, more=(), scale=(1.0, 5.0)):
    return JudgmentRow(
        kind="rubric",
        dimension="alignment",
        score=score if parse_ok else None,
        parse_ok=parse_ok,
        judge_model=judge,
        prompt_version="v1",
        heuristic=heuristic,
        human=False,
        is_demo=True,
        scale_min=scale[0],
        scale_max=scale[1],
        extra={},
        factors=(depth, context, *more),
    )


def test_contexts_follow_the_configs_order_then_other_names_then_none():
    got = axis_order("context", ["long", None, "zzz-custom-name", "simple", "extreme", "normal", "none", "aaa"])
    assert got == ["simple", "normal", "long", "extreme", "none", "aaa", "zzz-custom-name", None]
    assert axis_order("context", list(CONFIGS)[::-1]) == list(CONFIGS)


def test_numbers_sort_numerically_and_none_last():
    assert axis_order("evidence_depth", [1.0, None, 0.25, 0, 0.5, 0.75]) == [0, 0.25, 0.5, 0.75, 1.0, None]
    assert axis_order("turns", [100, 9, 10]) == [9, 10, 100]  # not "10" < "100" < "9"
    assert axis_order("seed", [2, 2, 1, 1]) == [1, 2]  # each value once
    # Outside the context factor, a context name is just text.
    assert axis_order("method", ["zero-shot", "reminder", None]) == ["reminder", "zero-shot", None]


def test_means_and_counts_per_cell_by_hand():
    rows = [
        row(0.0, "normal", 2),
        row(0.0, "normal", 3),
        row(0.0, "normal", None, parse_ok=False),  # no score: neither in the mean nor in the count
        row(0.0, "simple", 5),
        row(1.0, "normal", 4),
        row(1.0, "normal", 5),
        row(1.0, "normal", 5),
        row(0.5, "long", 1),
        row(None, "simple", 3),
    ]
    [h] = heatmaps(rows, "rubric:alignment", ["evidence_depth", "context"])
    assert h.title == "rubric:alignment: evidence_depth × context"
    assert (h.row_factor, h.col_factor) == ("evidence_depth", "context")
    assert h.rows == [0.0, 0.5, 1.0, None] and h.cols == ["simple", "normal", "long"]
    assert h.means == [
        [5.0, 2.5, None],
        [None, None, 1.0],
        [None, pytest.approx(14 / 3), None],
        [3.0, None, None],
    ]
    assert h.counts == [[1, 2, 0], [0, 0, 1], [0, 3, 0], [1, 0, 0]]
    assert h.scale == (1.0, 5.0)
    assert h.panel == "llm · openai:judge · v1"


def test_a_value_seen_only_in_parse_failures_is_an_empty_row():
    [h] = heatmaps([row(0.0, "simple", 4), row(1.0, "simple", None, parse_ok=False)], "m", ["d", "context"])
    assert h.rows == [0.0, 1.0] and h.means == [[4.0], [None]] and h.counts == [[1], [0]]


def test_each_judge_gets_its_own_panel():
    rows = [
        row(0.0, "simple", 5),
        row(0.0, "simple", 1, judge="demo:heuristic", heuristic=True),
        row(0.0, "simple", 3),
        row(1.0, "simple", 1, judge="demo:heuristic", heuristic=True),
    ]
    panels = {h.panel: h for h in heatmaps(rows, "m", ["evidence_depth", "context"])}
    assert set(panels) == {"heuristic · demo:heuristic · v1", "llm · openai:judge · v1"}
    llm, heur = panels["llm · openai:judge · v1"], panels["heuristic · demo:heuristic · v1"]
    assert llm.rows == [0.0] and llm.means == [[4.0]] and llm.counts == [[2]]
    assert heur.rows == [0.0, 1.0] and heur.means == [[1.0], [1.0]]  # never pooled with the LLM's 5 and 3


def test_further_factors_split_the_panels():
    rows = [
        row(0.0, "simple", 5, more=("demo:oracle",)),
        row(0.0, "simple", 1, more=("demo:forgetful",)),
        row(1.0, "simple", 5, more=("demo:forgetful",)),
        row(1.0, "normal", 3, more=("demo:forgetful",)),
    ]
    panels = heatmaps(rows, "m", ["evidence_depth", "context", "model"])
    assert [h.panel for h in panels] == [
        "llm · openai:judge · v1 · model=demo:forgetful",
        "llm · openai:judge · v1 · model=demo:oracle",
    ]
    forgetful, oracle = panels
    assert forgetful.rows == [0.0, 1.0] and forgetful.cols == ["simple", "normal"]
    assert forgetful.means == [[1.0, None], [5.0, 3.0]]
    assert oracle.rows == [0.0] and oracle.cols == ["simple"] and oracle.means == [[5.0]]


def test_the_scale_spans_the_panels_judgments_and_may_be_unknown():
    [h] = heatmaps([row(0, "simple", 0.5, scale=(0.0, 1.0)), row(1, "simple", 8, scale=(0.0, 10.0))], "m", ["d", "c"])
    assert h.scale == (0.0, 10.0)
    [h] = heatmaps([row(0, "simple", 0.5, scale=(None, None))], "m", ["d", "c"])
    assert h.scale is None


def test_two_factors_are_needed():
    with pytest.raises(ValueError, match="two factors"):
        heatmaps([row(0, "simple", 1)], "m", ["evidence_depth"])
    assert heatmaps([], "m", ["evidence_depth", "context"]) == []
