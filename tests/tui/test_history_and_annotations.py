"""Re-open a stored run exactly as it was; annotate (scores, pairwise, attributes, relevance);
compare and export — every operator input ends up in SQLite."""

from __future__ import annotations

import csv

from textual.widgets import Select

from tests.tui.conftest import app_for, db_rows, run_and_wait, settle
from tui.screens.compare import differing_facts
from tui.screens.export import ExportScreen
from tui.screens.human_score import HumanScoreScreen, PairwiseScreen
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.tabs import AnalysisTabs


async def test_reopening_a_stored_run_refills_panes_scores_and_prompt(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        run_id = screen.run_view.run_id
        live_texts = [p.full_text for p in screen.run_view.panes]
        live_scores = [sorted((j.dimension, j.score) for j in p.judgments) for p in screen.run_view.panes]
        live_prompt = screen.query_one(AnalysisTabs).prompt.text
        # change the choices so the screen no longer shows that case, then re-open it from the Runs tab
        screen.query_one("#rb-query", Select).value = "p2-open"
        await settle(pilot, app)
        screen.show_tab("runs")
        await pilot.pause()  # showing a tab focuses its first control (the filter box) after a refresh
        table = screen.query_one(ResultsGrid)
        table.focus()
        await pilot.pause()
        assert table.current_id() == run_id
        await pilot.press("enter")
        await settle(pilot, app)
        assert screen.run_view.run_id == run_id and screen.run_view.stored_run is not None
        assert screen.query_one("#rb-query", Select).value == "p1-open"
        assert [p.full_text for p in screen.run_view.panes] == live_texts
        assert [sorted((j.dimension, j.score) for j in p.judgments) for p in screen.run_view.panes] == live_scores
        assert [p.status for p in screen.run_view.panes] == ["ok", "ok", "ok"]
        stored_prompt = screen.query_one(AnalysisTabs).prompt.text
        # same messages (the live view also had per-message token counts)
        assert stored_prompt.split("── step")[1].split("\n")[0] == live_prompt.split("── step")[1].split("\n")[0]
        assert "re-opened run" in str(screen.query_one("#estimate").render())


async def test_operator_scores_and_pairwise_choice_are_stored_as_human(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        screen.run_view.panes[2].focus()
        await pilot.press("ctrl+s")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, HumanScoreScreen) and modal.model == "demo:oracle"
        modal.query_one("#hs-rubric-alignment", Select).value = 5.0
        modal.query_one("#hs-rubric-awareness", Select).value = 4.0
        await pilot.click("#save")
        await settle(pilot, app)
        rows = db_rows(
            wb,
            "SELECT r.model, j.dimension, j.score, j.human, j.scale_max FROM judgments j "
            "JOIN responses r ON r.id = j.response_id WHERE j.human = 1 ORDER BY j.dimension",
        )
        assert rows == [("demo:oracle", "alignment", 5.0, 1, 5.0), ("demo:oracle", "awareness", 4.0, 1, 5.0)]
        assert sum(1 for j in screen.run_view.panes[2].judgments if j.human) == 2  # shown beside the judge's
        # pairwise: generic vs oracle, oracle better
        screen.query_one(AnalysisTabs).judges.focus()
        await pilot.press("p")
        await pilot.pause()
        pair = app.screen
        assert isinstance(pair, PairwiseScreen)
        pair.query_one("#pw-a", Select).value = 0
        pair.query_one("#pw-b", Select).value = 2
        await pilot.click("#b")
        await settle(pilot, app)
        rows = db_rows(wb, "SELECT kind, dimension, score, human, extra FROM judgments WHERE kind = 'pairwise'")
        assert len(rows) == 1 and rows[0][:4] == ("pairwise", "win", 0.0, 1)
        assert '"model_b": "demo:oracle"' in rows[0][4] and '"model_a": "demo:generic"' in rows[0][4]


async def test_marked_runs_export_to_csv_through_the_export_code(wb, tmp_path):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await settle(pilot, app)
        screen = app.screen
        screen.show_tab("runs")
        await pilot.pause()  # showing a tab focuses its first control (the filter box) after a refresh
        table = screen.query_one(ResultsGrid)
        table.focus()
        await pilot.pause()
        assert len(table.shown) == 6  # one row per answer: 2 runs × 3 models
        await pilot.press("space", "down", "space")  # two answers of the six
        await pilot.press("e")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ExportScreen)
        target = tmp_path / "out" / "runs.csv"
        modal.query_one("#export-path").value = str(target)
        await pilot.press("enter")
        await settle(pilot, app)
        with target.open() as fh:
            rows = list(csv.DictReader(fh))
        # exactly the marked answers, not every answer of their runs
        marked = {(m.run_id, m.response_id) for m in table.marked_rows()}
        assert len(marked) == 2 and {(r["run_id"], r["response_id"]) for r in rows} == marked and len(rows) == 2


async def test_compare_two_runs_shows_what_differs(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        app.screen.query_one("#rb-method", Select).value = "reminder"
        await run_and_wait(pilot, app)
        screen = app.screen
        screen.show_tab("runs")
        await pilot.pause()  # showing a tab focuses its first control (the filter box) after a refresh
        table = screen.query_one(ResultsGrid)
        table.focus()
        await pilot.pause()
        table.move_cursor(row=0)  # the cursor stays on the answer it was on when the grid refreshes
        await pilot.press("space", "down", "down", "down", "space", "c")  # demo:generic of each run
        await pilot.pause()
        compare = app.screen
        assert [a.facts["method"] for a in compare.answers] == ["reminder", "zero-shot"]
        assert "method" in differing_facts(compare.answers)  # marked ≠ in the table
