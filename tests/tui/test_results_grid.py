"""The Runs tab's results grid through Pilot, on a real SQLite file filled by real demo runs (the
engine and recorder via ``seed_run``, and the `batch` command): enter opens the run, the filter
and the sort change the rows, groups, N-way compare with a word diff, a score's rationale and
evidence, and the histogram of a score column."""

from __future__ import annotations

from collections import Counter

import pytest
from textual.coordinate import Coordinate

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.tui.conftest import DEMO, app_for, db_rows, settle
from tests.tui.seed import seed_run
from tests.waiting import await_until
from tui.screens.compare import DELETED, INSERTED, CompareScreen, word_diff
from tui.screens.histogram import HistogramScreen, buckets
from tui.screens.score_evidence import HIGHLIGHT, ScoreEvidenceScreen, quoted_phrases
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.results_grid_rows import GroupHeader


# Seeding runs the engine with asyncio.run, so it happens in (sync) fixtures, outside the test's loop.
@pytest.fixture
def two_runs(wb) -> tuple[str, str]:
    old = seed_run(wb, "run-20260115T093000-aaaaaaaaaaaa", models=DEMO)
    new = seed_run(
        wb, "run-20260116T100000-bbbbbbbbbbbb", models=DEMO, method="reminder", created_at="2026-01-16T10:00:00+00:00"
    )
    return old, new


async def _grid(pilot, app) -> ResultsGrid:
    await settle(pilot, app)
    app.screen.show_tab("runs")
    await pilot.pause()  # showing a tab focuses its first control after a refresh
    grid = app.screen.query_one(ResultsGrid)
    grid.focus()
    await pilot.pause()
    return grid


def _answers(grid: ResultsGrid) -> list:
    return [r for r in grid.shown if not isinstance(r, GroupHeader)]


async def _filtered(grid: ResultsGrid, text: str) -> None:
    await await_until(lambda: grid.filter_text == text, what=f"the grid filtered by {text!r}")


def _to(grid: ResultsGrid, row: int, column: str) -> None:
    grid.move_cursor(row=row, column=grid.get_column_index(column), animate=False)


async def test_enter_opens_the_answers_run_in_the_main_view(wb, two_runs):
    old, new = two_runs
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        assert [r.run_id for r in _answers(grid)] == [new] * 3 + [old] * 3  # one row per answer, newest first
        assert str(grid.get_cell_at(Coordinate(0, 1))) == "bbbbbbbb"  # the short run id `prefscope` accepts
        _to(grid, 4, "model")
        await pilot.press("enter")
        await settle(pilot, app)
        view = app.screen.run_view
        assert view.run_id == old and view.stored_run is not None
        assert [p.status for p in view.panes] == ["ok", "ok", "ok"]


async def test_filter_and_sort_change_the_rows(wb, two_runs):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        await pilot.press("f")  # to the filter box
        await pilot.press(*"model:oracle")
        await _filtered(grid, "model:oracle")  # applied once typing pauses
        assert [r.model for r in _answers(grid)] == ["demo:oracle", "demo:oracle"]
        app.screen.query_one("#runs-filter").value = "reminder retrieval"  # free words: all must match
        await _filtered(grid, "reminder retrieval")
        assert [(r.method, r.model) for r in _answers(grid)] == [("reminder", "demo:retrieval")]
        app.screen.query_one("#runs-filter").value = "quality:>=4"
        await _filtered(grid, "quality:>=4")
        stored = db_rows(wb, "SELECT response_id FROM judgments WHERE dimension = 'quality' AND score >= 4")
        assert sorted(r.response_id for r in _answers(grid)) == sorted(r[0] for r in stored) and stored

        app.screen.query_one("#runs-filter").value = ""
        await pilot.press("enter")  # back to the grid
        assert app.focused is grid
        _to(grid, 0, "awareness")
        await pilot.press("s")
        scores = [r.scores[grid.current_column().score] for r in _answers(grid)]
        assert scores == sorted(scores) and len(set(scores)) > 1
        await pilot.press("s")  # again: the other way
        assert [r.scores[grid.current_column().score] for r in _answers(grid)] == sorted(scores, reverse=True)
        _to(grid, 0, "model")
        await pilot.press("s")
        assert [r.model for r in _answers(grid)] == sorted(r.model for r in _answers(grid))
        # a click on a header sorts by that column
        ordered = list(grid.ordered_columns)
        index = grid.get_column_index("method")
        x = sum(c.get_render_width(grid) for c in ordered[:index]) + 1
        await pilot.click(ResultsGrid, offset=(x, 0))
        await pilot.pause()
        assert grid.sort_column == "method"
        assert [r.method for r in _answers(grid)] == ["reminder"] * 3 + ["zero-shot"] * 3


@pytest.fixture
def batch_and_run(wb, unpaced_demo_models):  # noqa: F811
    cli(str(wb.db_path), "batch", "--name", "b1", "--user", "maya", "--query", "p1-open", "--query", "p2-open",
        "--model", "demo:generic", "--model", "demo:oracle", "--judge", "demo:heuristic", "-y")  # fmt: skip
    seed_run(wb, "run-20260115T093000-cccccccccccc", models=["demo:retrieval"])


async def test_grouping_by_batch_keeps_each_cases_models_together(wb, batch_and_run):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        await pilot.press("g")  # one press: by model, the grouping asked for most
        headers = [r for r in grid.shown if isinstance(r, GroupHeader)]
        assert sorted(h.values["model"] for h in headers) == sorted({r.model for r in grid.matching})
        await pilot.press("g")
        headers = [r for r in grid.shown if isinstance(r, GroupHeader)]
        assert [(h.values, h.count) for h in headers] == [({"batch": "b1"}, 4), ({"batch": ""}, 1)]
        batch = [r for r in grid.shown[1:5]]
        assert [(r.query_id, r.model) for r in batch] == [
            ("p1-open", "demo:generic"),
            ("p1-open", "demo:oracle"),
            ("p2-open", "demo:generic"),
            ("p2-open", "demo:oracle"),
        ]
        ((mean,),) = db_rows(
            wb, "SELECT avg(score) FROM judgments j JOIN runs r ON r.id = j.run_id "
            "WHERE r.label = 'b1' AND j.dimension = 'alignment'",
        )  # fmt: skip
        alignment = grid.columns_shown[[c.key for c in grid.columns_shown].index("alignment")].score
        assert headers[0].means[alignment] == mean
        await pilot.press("g")  # batch · model: each model of the batch as one unit
        headers = [r for r in grid.shown if isinstance(r, GroupHeader)]
        assert [(h.values["batch"], h.count) for h in headers] == [("b1", 2), ("b1", 2), ("", 1)]
        assert sorted(h.values["model"] for h in headers[:2]) == ["demo:generic", "demo:oracle"]


async def test_marking_two_answers_and_compare_shows_both_with_a_word_diff(wb, two_runs):
    texts = dict(db_rows(wb, "SELECT model, text FROM responses WHERE run_id = 'run-20260116T100000-bbbbbbbbbbbb'"))
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        _to(grid, 0, "run")
        await pilot.press("space", "down", "down", "space", "c")  # generic and oracle of the newest run
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        assert [a.row.model for a in screen.answers] == ["demo:generic", "demo:oracle"]
        assert [a.text for a in screen.answers] == [texts["demo:generic"], texts["demo:oracle"]]
        assert screen.bodies[0].plain == texts["demo:generic"]
        styles = {str(span.style) for span in screen.bodies[1].spans}
        assert INSERTED in styles  # the oracle's own words
        inserted = "".join(
            screen.bodies[1].plain[s.start : s.end] for s in screen.bodies[1].spans if s.style == INSERTED
        )
        assert "slump" in inserted and "slump" not in texts["demo:generic"]  # Maya's 4 a.m. slump
        assert "+" in screen.heads[1] and "words vs A" in screen.heads[1]
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen


def test_word_diff_marks_inserted_and_deleted_words():
    text, inserted, deleted = word_diff("plan a quiet dinner at home", "plan a loud dinner at home tonight")
    assert (inserted, deleted) == (2, 1)
    marked = {text.plain[s.start : s.end]: str(s.style) for s in text.spans}
    assert marked == {"quiet": DELETED, "loud": INSERTED, "tonight": INSERTED}


async def test_a_score_cell_shows_the_rationale_and_the_evidence_it_rests_on(wb, two_runs):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        _to(grid, 2, "awareness")  # demo:oracle of the newest run
        row = grid.current_row()
        assert row.model == "demo:oracle"
        await pilot.press("enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ScoreEvidenceScreen)
        ((rationale, score),) = db_rows(
            wb, "SELECT rationale, score FROM judgments WHERE response_id = ? AND dimension = 'awareness'",
            [row.response_id],
        )  # fmt: skip
        assert (
            screen.judgment.rationale == rationale
            and screen.judgment.score == score == grid.current_row().scores[grid.current_column().score]
        )
        phrases = quoted_phrases(rationale)
        assert phrases and "body clock" in phrases
        evidence = screen.evidence_text
        assert "maya-p1-e4a" in evidence.plain and "tokens before the question" in evidence.plain
        for shown in (screen.answer_text, screen.preference_text):  # the quoted words, where they occur
            marked = {shown.plain[s.start : s.end].lower() for s in shown.spans if str(s.style) == HIGHLIGHT}
            assert marked and marked <= {p.lower() for p in phrases}
        await pilot.press("o")  # close and open the run
        await settle(pilot, app)
        assert app.screen.run_view.run_id == row.run_id


@pytest.fixture
def nine_cells(wb, unpaced_demo_models):  # noqa: F811
    cli(str(wb.db_path), "batch", "--name", "h", "--user", "maya", "--query", "p1-open", "--query", "p2-open",
        "--query", "p3-open", "--model", "demo:generic", "--model", "demo:retrieval", "--model", "demo:oracle",
        "--judge", "demo:heuristic", "-y")  # fmt: skip


async def test_histogram_counts_equal_the_stored_scores(wb, nine_cells):
    stored = db_rows(
        wb, "SELECT j.score FROM judgments j JOIN responses p ON p.id = j.response_id "
        "WHERE p.is_final = 1 AND j.dimension = 'alignment'",
    )  # fmt: skip
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        _to(grid, 0, "model")
        await pilot.press("h")  # not a score column: nothing opens
        await pilot.pause()
        assert not isinstance(app.screen, HistogramScreen)
        _to(grid, 0, "alignment")
        await pilot.press("h")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HistogramScreen)
        shown, missing = buckets(screen.values)
        assert {b.low: b.count for b in shown} == dict(Counter(s for (s,) in stored)) and missing == 0
        drawn = str(screen.query_one("#histogram").render())
        assert "█" in drawn and f"n {len(stored)}" in drawn


async def test_past_the_listed_rows_a_last_row_counts_the_others_and_views_use_them_all(wb, nine_cells, monkeypatch):
    """The grid holds at most SHOWN_ROWS rows (a DataTable measures every cell it holds); the
    last counts the answers not listed, and the histogram, funnel and heatmap read every answer
    the filter keeps, listed or not."""
    import tui.widgets.results_grid as results_grid
    from tui.widgets.results_grid import MoreRows

    monkeypatch.setattr(results_grid, "SHOWN_ROWS", 5)
    stored = db_rows(wb, "SELECT count(*) FROM responses WHERE is_final = 1")[0][0]
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        grid = await _grid(pilot, app)
        assert grid.row_count == 5 and isinstance(grid.shown[-1], MoreRows)
        assert grid.shown[-1].count == stored - 4 and len(grid.matching) == stored
        runs, answers = app.screen.query_one("RunsView").listed()
        assert len(answers) == stored and len(runs) == 9
        _to(grid, 4, "model")  # the last row is no answer: nothing to open
        assert grid.current_row() is None
        _to(grid, 0, "alignment")
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HistogramScreen) and len(app.screen.values) == stored
        await pilot.press("escape")
        await pilot.pause()
        app.screen.query_one("#runs-filter").value = "model:oracle"  # narrowed to fit: no last row
        await _filtered(grid, "model:oracle")
        assert grid.row_count == 3 and not any(isinstance(r, MoreRows) for r in grid.shown)
