"""The Runs tab's results grid keeps its score columns on screen at 160 and 80 columns when the
answers belong to users with long ids (imported PrefEval results), and shows those ids cut from
the middle, one distinct text per id; the filter still matches the whole id."""

from __future__ import annotations

import json

import pytest

from tests.cli_runner import cli
from tests.tui.conftest import DEMO, app_for, settle
from tests.tui.seed import seed_run
from tests.waiting import await_until
from tui.widgets.results_grid import ResultsGrid


@pytest.fixture
def long_ids(wb, tmp_path):
    """Three imported answers of users ``prefeval-results-travel_restaurant-<hash>`` judged by the
    heuristic judge, and one demo run of Maya (three more answers)."""
    records = [
        {"preference": f"I avoid seafood {i}.", "question": f"Where should I eat {i}?", "response_to_pref": "Noted.",
         "response_to_q": "Try a steakhouse."}
        for i in range(3)
    ]  # fmt: skip
    folder = tmp_path / "results" / "remind" / "travel_restaurant"
    folder.mkdir(parents=True)
    (folder / "claude3hk_travel_restaurant_2interturn.json").write_text(json.dumps(records))
    db = str(wb.settings.db)
    cli(db, "import-results", str(tmp_path / "results"))
    cli(db, "judge", "--label", "imported:*", "--judge", "demo:heuristic")
    seed_run(wb, "run-20260115T093000-aaaaaaaaaaaa", models=DEMO)
    return wb


def _on_screen(grid: ResultsGrid) -> set[str]:
    """The keys of the columns wholly inside the grid's width with the grid scrolled to its left edge."""
    shown, x = set(), 0
    for key, column in grid.columns.items():
        x += column.get_render_width(grid)
        if x <= grid.scrollable_content_region.width:
            shown.add(str(key.value))
    return shown


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_score_columns_are_on_screen_and_long_ids_are_cut_from_the_middle(long_ids, size):
    app = app_for(long_ids)
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        app.screen.show_tab("runs")
        grid = app.screen.query_one(ResultsGrid)
        await await_until(lambda: grid.row_count == 6, what="the six answers in the grid")
        await pilot.pause()
        scores = [c.key for c in grid.columns_shown if c.score is not None]
        assert {"alignment", "awareness", "quality"} <= set(scores)
        assert set(scores) <= _on_screen(grid), (size, _on_screen(grid))
        users = {r.run_id: r.user_id for r in grid.shown}
        shown = {str(grid.get_cell(r.response_id, "user")): users[r.run_id] for r in grid.shown}
        long = {cell: user for cell, user in shown.items() if user.startswith("prefeval-")}
        assert len(long) == 3 and len(set(long.values())) == 3  # three users, three texts
        for cell, user in long.items():
            head, _, tail = cell.partition("…")
            assert tail and user.startswith(head) and user.endswith(tail) and len(cell) < len(user)
        grid.filter(next(iter(long.values()))[-6:])  # the end of a whole id, typed in the filter
        assert grid.row_count == 1
