"""f4 in the workbench: PrefEval's recorded Mixtral 8x7B answers, read from the PrefEval folder beside
the project, imported once as runs and shown in the Runs grid for one user, labelled as recorded."""

from __future__ import annotations

from tests.conftest import dataset
from tests.tui.conftest import app_for, settle, workbench
from tests.waiting import await_until
from tui.widgets.results_grid import ResultsGrid


def _imported(wb) -> int:
    return wb.db.execute("SELECT count(*) FROM responses WHERE provider = 'imported'").fetchone()[0]


async def test_f4_shows_a_users_recorded_answers_at_every_depth(tmp_path):
    root = dataset("prefeval")
    dataset("prefeval", "SFT")
    wb = workbench(tmp_path / "r.db", prefeval_dir=root)
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await pilot.press("f4")
        screen = app.screen
        await await_until(lambda: screen.tabs.active == "runs" and _imported(wb) > 0, what="recorded answers shown")
        await settle(pilot, app)
        user = screen.query_one("#rb-user").value
        assert str(user).startswith("prefeval-travel_restaurant-")
        assert screen.tabs.runs.query_one("#runs-filter").value == f"user:{user}"
        await await_until(lambda: screen.query_one(ResultsGrid).filter_text == f"user:{user}", what="filter applied")
        grid = screen.query_one(ResultsGrid)
        models = {row.model for row in grid.shown}
        assert models == {"imported:mistral8x7b"} and len(grid.shown) == 6  # one per depth
        notes = " ".join(n.message for n in app._notifications)
        assert "recorded, not generated here" in notes and "PrefEval" in notes
        total = _imported(wb)
        assert total == 336
        await pilot.press("f4")  # a second time adds nothing
        await settle(pilot, app)
        assert _imported(wb) == total
    wb.close()


async def test_without_the_data_f4_says_where_to_get_it_and_imports_nothing(tmp_path):
    wb = workbench(tmp_path / "r.db", prefeval_dir=tmp_path / "no-prefeval-here")
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await pilot.press("f4")
        await settle(pilot, app)
        notes = " ".join(n.message for n in app._notifications)
        assert "not at" in notes and "no-prefeval-here" in notes and "github.com/amazon-science/PrefEval" in notes
        assert _imported(wb) == 0
    wb.close()
