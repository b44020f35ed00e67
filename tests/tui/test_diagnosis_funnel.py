"""The diagnosis funnel from the Runs tab: groups of the runs listed, a group's answers, and enter
on an answer re-opens its run (real app, real SQLite, demo models)."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import DataTable

from core.analysis.diagnosis import APPLIED, NOT_KNOWN, UNDETERMINED
from tests.tui.conftest import app_for, settle, workbench
from tests.tui.seed import seed_run
from tests.waiting import await_until
from tui.screens.funnel import FunnelScreen
from tui.screens.main import MainScreen

MODELS = ["demo:generic", "demo:oracle"]


@pytest.fixture
def two_runs(tmp_path):
    """Two stored runs of the same cell: the first probed, the second not."""
    wb = workbench(tmp_path / "p.db")
    seed_run(wb, "run-probed", models=MODELS)
    asyncio.run(wb.run_probes(wb.probe_specs("run-probed"), wb.user("maya")))
    seed_run(wb, "run-plain", models=MODELS, created_at="2026-01-16T09:30:00+00:00")
    wb.flush()
    return wb


async def open_funnel(pilot, app) -> FunnelScreen:
    await settle(pilot, app)
    await pilot.press("6")  # the Runs tab, the focus on the grid
    await settle(pilot, app)
    await pilot.press("d")
    await await_until(lambda: isinstance(app.screen, FunnelScreen), what="the funnel screen")
    screen = app.screen
    await await_until(lambda: screen.table is not None, timeout=60, what="the answers to be diagnosed")
    await settle(pilot, app)
    return screen


async def test_funnel_counts_the_listed_runs_and_enter_reopens_an_answers_run(two_runs):
    wb = two_runs
    app = app_for(wb, MODELS)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await open_funnel(pilot, app)
        # probe runs are listed in the grid but not counted as cells
        assert screen.run_ids == ["run-plain", "run-probed"]
        rows = {r["model"]: r for r in screen.table.as_dicts()}
        assert set(rows) == set(MODELS)
        assert rows["demo:oracle"]["n"] == 2 and rows["demo:oracle"][APPLIED] == 2
        generic = rows["demo:generic"]
        assert generic["n"] == 2
        assert generic[UNDETERMINED] == 1  # the unprobed run
        assert generic[NOT_KNOWN] + generic["known, not applied"] == 1  # the probed one
        table = screen.query_one("#funnel-table", DataTable)
        assert table.row_count == 2
        # E, context, method and origin are the same everywhere: named once above the table
        assert screen.common == {"expression_type": 4, "context": "simple", "method": "zero-shot", "origin": "original"}

        table.move_cursor(row=[r[0] for r in screen.table.rows].index("demo:generic"))
        await pilot.press("enter")
        await settle(pilot, app)
        cases = screen.query_one("#funnel-cases", DataTable)
        assert cases.has_focus and cases.row_count == 2
        assert {c.run_id for c, _, _ in screen.cases} == {"run-plain", "run-probed"}
        assert all(c.model == "demo:generic" for c, _, _ in screen.cases)

        target = next(i for i, (c, _, _) in enumerate(screen.cases) if c.run_id == "run-probed")
        cases.move_cursor(row=target)
        await pilot.press("enter")
        await await_until(lambda: isinstance(app.screen, MainScreen), what="the main screen")
        await settle(pilot, app)
        assert app.screen.run_view.run_id == "run-probed"
        labels = {p.model_id: p.diagnosis.label for p in app.screen.run_view.panes}
        assert labels["demo:oracle"] == APPLIED
        assert labels["demo:generic"] != "undetermined: no probe"


async def test_funnel_keeps_to_the_filtered_answers_and_escape_goes_back(two_runs):
    app = app_for(two_runs, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.screen.tabs.runs.query_one("#runs-filter").value = "model:oracle"
        await await_until(lambda: app.screen.tabs.runs.grid.filter_text == "model:oracle", what="filter")
        screen = await open_funnel(pilot, app)
        assert [r["model"] for r in screen.table.as_dicts()] == ["demo:oracle"]
        await pilot.press("enter")
        await settle(pilot, app)
        await pilot.press("escape")  # from the answers back to the groups
        assert screen.query_one("#funnel-table", DataTable).has_focus
        await pilot.press("escape")
        await await_until(lambda: isinstance(app.screen, MainScreen), what="the main screen")
