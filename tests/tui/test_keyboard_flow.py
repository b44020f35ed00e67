"""Keyboard flow: number keys and the palette move the focus into a tab, Tab walks every control in
screen order, the footer offers the focused tab's keys and fits 80 columns."""

from __future__ import annotations

import pytest
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from tests.tui.conftest import app_for, choose_in_palette, settle, workbench
from tests.tui.seed import seed_run
from tests.tui.test_snapshots import GateProvider
from tests.waiting import await_until
from tui.widgets.attributes_tab import AttributesTable
from tui.widgets.judges_tab import JudgesTable
from tui.widgets.prompt_tab import PromptView
from tui.widgets.relevance_tab import RelevanceTable
from tui.widgets.tabs import TABS, AnalysisTabs

DEMO = ["demo:generic", "demo:retrieval", "demo:oracle"]


def _in_tab(screen, name: str) -> bool:
    focused = screen.focused
    pane = screen.query_one(f"#tab-{name}")
    return focused is not None and pane in focused.ancestors


def _footer_keys(app) -> list[FooterKey]:
    return list(app.screen.query_one(Footer).query(FooterKey))


def _footer_shows(app, descriptions: set[str]) -> bool:
    """The footer offers these keys, each laid out (a key just mounted has no place yet)."""
    shown = [k for k in _footer_keys(app) if k.description in descriptions]
    return {k.description for k in shown} == descriptions and all(k.region.width for k in _footer_keys(app))


async def test_number_keys_show_each_tab_with_the_focus_inside(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        for n, name in enumerate(TABS, start=1):
            screen.query_one("#timeline").focus()
            await pilot.press(str(n))
            await pilot.pause()
            assert screen.query_one(AnalysisTabs).active == name
            assert _in_tab(screen, name), f"key {n}: focus on {screen.focused!r}, not inside the {name} tab"
            if name == "runs":
                from tui.widgets.results_grid import ResultsGrid

                assert isinstance(screen.focused, ResultsGrid), "the Runs tab lands on its grid: enter opens a run"
        await pilot.press("4")
        await await_until(lambda: isinstance(screen.focused, RelevanceTable), what="focus in the Relevance table")


async def test_on_80_columns_a_number_key_brings_the_tabs_in_place_of_the_answers(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert not screen.query_one(AnalysisTabs).display  # answers first
        await pilot.press("3")
        await pilot.pause()
        assert screen.query_one(AnalysisTabs).display and isinstance(screen.focused, AttributesTable)
        await pilot.press("f2")  # back to the answers
        await pilot.pause()
        assert not screen.query_one(AnalysisTabs).display


async def test_palette_show_tab_moves_the_focus_into_the_tab(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await choose_in_palette(pilot, "Show tab: Judges", "Show tab: Judges")
        await await_until(lambda: isinstance(app.screen.focused, JudgesTable), what="focus in the Judges table")
        assert isinstance(app.screen.focused, JudgesTable)


@pytest.fixture
def stored(wb):
    """The workbench with one stored demo run (seeded outside the test's event loop)."""
    seed_run(wb, "run-kb", models=DEMO)
    return wb


async def test_tab_from_the_answers_reaches_every_control_in_screen_order(stored):
    app = app_for(stored)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        await screen.reopen_run("run-kb")
        await settle(pilot, app)
        await pilot.press("1")
        await pilot.pause()
        screen.query_one("#pane-0").focus()
        await pilot.pause()
        walked = []
        for _ in range(len(screen.focus_chain) + 1):
            walked.append(screen.focused)
            await pilot.press("tab")
            await pilot.pause()
        ids = [w.id for w in walked]
        # from the answer pane, on through the tabs, round to the run bar's context and method
        assert "rb-context" in ids and "rb-method" in ids
        assert any(isinstance(w, PromptView) for w in walked)  # the visible tab's control
        # every focusable control is visited, once per round
        assert {id(w) for w in walked} == {id(w) for w in screen.focus_chain}
        # the run bar's controls come in reading order: row by row, left to right
        bar = [w for w in walked if w.id and w.id.startswith("rb-")]
        order = [(w.region.y, w.region.x) for w in bar]
        assert order == sorted(order), [w.id for w in bar]


async def test_the_footer_shows_the_focused_tabs_keys_and_fits_80_columns(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        labels = {k.description for k in _footer_keys(app)}
        assert {"Run", "Help"} <= labels and "Decide" not in labels
        grouped = [k.key for k in _footer_keys(app) if "-grouped" in k.classes]
        assert grouped == [str(n) for n in range(1, len(TABS) + 1)]  # "1234567 Tabs"
        for n, name, keys in [(4, "relevance", {"Yes", "No", "Decide"}), (3, "attributes", {"Accept", "Reject"})]:
            await pilot.press(str(n))
            await await_until(lambda keys=keys: _footer_shows(app, keys), what=f"the {name} tab's keys in the footer")
            footer = app.screen.query_one(Footer)
            shown = _footer_keys(app)
            assert keys <= {k.description for k in shown}, name
            right = max(k.region.right for k in shown)
            assert right <= footer.region.right, f"{name}: footer keys end at column {right}"
            assert footer.virtual_size.width <= footer.region.width, f"{name}: the footer scrolls"
            await pilot.press("f2")


async def test_cancel_keys_show_only_while_a_run_streams(tmp_path):
    gate = GateProvider()
    wb = workbench(tmp_path / "prefscope.db", provider_for=lambda spec: gate)
    app = app_for(wb, ["script:alpha", "script:beta", "script:gamma"])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        assert "Cancel all" not in {k.description for k in _footer_keys(app)}
        await pilot.press("ctrl+r")
        await await_until(lambda: gate.reached == 3, what="all three scripted models to stream")
        streaming = {"Cancel all", "Cancel pane", "Reasons"}
        await await_until(lambda: _footer_shows(app, streaming), what="the cancel keys in the footer")
        assert streaming <= {k.description for k in _footer_keys(app)}
        gate.gate.set()
        await settle(pilot, app)
        await await_until(
            lambda: _footer_shows(app, {"Retry"}) and not _footer_shows(app, {"Cancel all"}),
            what="the footer without the cancel keys",
        )
        shown = {k.description for k in _footer_keys(app)}
        assert "Cancel all" not in shown and "Retry" in shown  # the first pane has the focus
