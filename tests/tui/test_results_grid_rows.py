"""The results grid's filter, sort, groups and column names, on plain rows (no Textual)."""

from __future__ import annotations

from storage.results_grid import GridRow, ScoreColumn
from tui.screens.histogram import bar, buckets
from tui.widgets.results_grid_rows import GroupHeader, columns_for, grouped, row_filter, score_labels, sorted_rows

ALIGN = ScoreColumn("rubric", "alignment", "demo:heuristic", True, False)
ALIGN_LLM = ScoreColumn("rubric", "alignment", "openai:gpt-4o", False, False)
ACC = ScoreColumn("choice", "accuracy", "parser:choice", False, False)
MINE = ScoreColumn("rubric", "alignment", "human:operator", False, True)


def _row(i: int, model: str, batch: str = "", query: str = "p1-open", **scores) -> GridRow:
    return GridRow(
        f"resp-{i}", f"run-{i}", "2026-01-01", batch, "maya", query, "open", 4, model, "zero-shot", "simple", "ok",
        scores={ALIGN: scores.get("align"), ACC: scores.get("acc")} if scores else {},
    )  # fmt: skip


ROWS = [
    _row(1, "demo:generic", "b1", align=3.0, acc=0.0),
    _row(2, "demo:oracle", "b1", align=5.0, acc=1.0),
    _row(3, "demo:oracle", "", "p2-open", align=4.0),
    _row(4, "openai:gpt-4o", "", "p2-open"),
]
COLUMNS = columns_for([ALIGN, ACC], {})


def _ids(rows) -> list[int]:
    return [int(r.response_id.split("-")[1]) for r in rows if not isinstance(r, GroupHeader)]


def test_score_columns_get_readable_unique_names():
    assert score_labels([ALIGN, ACC]) == {ALIGN: "alignment", ACC: "accuracy"}
    assert score_labels([ALIGN, ALIGN_LLM, MINE]) == {
        ALIGN: "alignment·heuristic",
        ALIGN_LLM: "alignment·gpt-4o",
        MINE: "you·alignment",
    }


def test_several_annotators_and_same_named_judges_get_their_own_columns():
    """Two annotators and the operator on one dimension, and two providers serving one model name:
    every header differs (the grid's column keys must be unique)."""
    ann, bob = (ScoreColumn("rubric", "alignment", f"human:{who}", False, True) for who in ("ann", "bob"))
    via = ScoreColumn("rubric", "alignment", "litellm:gpt-4o", False, False)
    labels = score_labels([ALIGN_LLM, via, MINE, ann, bob])
    assert labels[ann] == "ann·alignment" and labels[bob] == "bob·alignment" and labels[MINE] == "you·alignment"
    assert len(set(labels.values())) == 5


def test_filter_terms_by_column_comparison_or_anywhere():
    def kept(text: str) -> list[int]:
        keep = row_filter(text, COLUMNS)
        return _ids(r for r in ROWS if keep(r))

    assert kept("model:oracle") == [2, 3]
    assert kept("oracle p2") == [3]  # free words: each must appear in some cell
    assert kept("alignment:>=4") == [2, 3]
    assert kept("alignment:3") == [1]
    assert kept("accuracy:?") == [3, 4]  # no score
    assert kept("batch:b1 accuracy:<1") == [1]
    assert kept("nosuchcolumn:x") == []  # an unknown column is a plain word
    assert kept("") == [1, 2, 3, 4]


def test_sort_keeps_rows_without_a_value_last_both_ways():
    align = next(c for c in COLUMNS if c.key == "alignment")
    assert _ids(sorted_rows(ROWS, align, descending=False)) == [1, 3, 2, 4]
    assert _ids(sorted_rows(ROWS, align, descending=True)) == [2, 3, 1, 4]
    batch = next(c for c in COLUMNS if c.key == "batch")
    assert _ids(sorted_rows(ROWS, batch, descending=True)) == [1, 2, 3, 4]


def test_groups_with_counts_and_means():
    out = grouped(ROWS, ("batch",), COLUMNS, None)
    headers = [h for h in out if isinstance(h, GroupHeader)]
    assert [(h.values, h.count, h.means[ALIGN]) for h in headers] == [
        ({"batch": "b1"}, 2, 4.0),
        ({"batch": ""}, 2, 4.0),
    ]
    assert headers[1].means[ACC] is None
    assert _ids(out) == [1, 2, 3, 4]


def test_histogram_buckets_and_bars():
    shown, missing = buckets([1.0, 5.0, 5.0, None, 3.0])
    assert [(b.label, b.count) for b in shown] == [("1", 1), ("3", 1), ("5", 2)] and missing == 1
    many, _ = buckets([float(i) for i in range(100)])  # many distinct values: ten equal bins
    assert len(many) == 10 and sum(b.count for b in many) == 100
    assert bar(2, 2, width=4) == "████" and bar(1, 2, width=4) == "██" and bar(1, 100, width=4) == "▏"


def test_the_context_column_shows_prefeval_inter_turns():
    row = _row(9, "imported:mistral8x7b")
    row.context, row.turns = "prefeval-turns", 28
    context = next(c for c in COLUMNS if c.key == "context")
    assert context.value(row) == "28 · prefeval-turns"
    assert context.value(_row(10, "demo:oracle")) == "simple"
