"""The workbench's focus model (the table in tui.screens.main.MainScreen): where the focus is after
each action; text inputs take it only when asked, show what is typed, and esc always leaves them."""

from __future__ import annotations

from textual.widgets import Footer, Input
from textual.widgets._footer import FooterKey, FooterLabel

from core.formats import load_path
from storage.users import save_import
from tests.tui.cli.test_profile_cli import prefeval_tree
from tests.tui.conftest import app_for, choose_in_palette, run_and_wait, settle, workbench
from tests.tui.test_snapshots import GateProvider
from tests.waiting import await_until
from tui.widgets.response_pane import ResponsePane
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.run_bar import RunBar
from tui.widgets.timeline import Timeline

SCRIPTED = ["script:alpha", "script:beta", "script:gamma"]


def _focused_input(app) -> bool:
    return isinstance(app.screen.focused, Input)


async def test_ctrl_r_from_the_zoomed_tabs_brings_the_answers_and_esc_cancels_the_first(tmp_path):
    gate = GateProvider()
    wb = workbench(tmp_path / "f.db", provider_for=lambda spec: gate)
    app = app_for(wb, SCRIPTED)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        await pilot.press("6")  # on 80 columns the tabs take the answers' place
        await await_until(lambda: isinstance(screen.focused, ResultsGrid), what="the Runs grid focused")
        assert screen.has_class("tabs-zoomed")
        await pilot.press("ctrl+r")
        await await_until(lambda: gate.reached == 3, what="the three scripted models streaming")
        await await_until(lambda: isinstance(screen.focused, ResponsePane), what="a pane focused")
        pane = screen.focused
        assert pane.id == "pane-0" and not screen.has_class("tabs-zoomed")
        assert pane in screen.focus_chain  # on screen, not focused behind the tabs
        await pilot.press("escape")
        await await_until(lambda: screen.run_view.panes[0].status == "cancelled", what="pane 0 cancelled by esc")
        assert [p.status for p in screen.run_view.panes[1:]] == ["running", "running"]
        gate.gate.set()
        await settle(pilot, app)
    wb.close()


async def test_probe_from_the_runs_grid_and_f2_6_never_land_in_the_filter_box(tmp_path):
    app = app_for(workbench(tmp_path / "wide.db"))
    async with app.run_test(size=(160, 48)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        await pilot.press("6")
        await await_until(lambda: isinstance(screen.focused, ResultsGrid), what="the Runs grid focused")
        await pilot.press("p")  # probe: the progress shows in the Diagnosis tab
        await await_until(lambda: screen.tabs.active == "diagnosis", what="the Diagnosis tab")
        await settle(pilot, app)
        assert screen.tabs.active == "diagnosis"  # not switched back to Runs by a focused filter box
        assert not _focused_input(app), screen.focused
        assert screen.focused is not None and screen.tabs.diagnosis in screen.focused.ancestors_with_self
    app = app_for(workbench(tmp_path / "narrow.db"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        for key in ("f2", "6"):
            await pilot.press(key)
            await pilot.pause()
        await settle(pilot, app)
        assert isinstance(app.screen.focused, ResultsGrid)
        await pilot.press("7")  # a tab key on the grid switches tabs: it is typed nowhere
        await await_until(lambda: app.screen.tabs.active == "diagnosis", what="the Diagnosis tab")
        assert app.screen.tabs.runs.query_one("#runs-filter", Input).value == ""


async def test_the_focused_filter_box_shows_what_is_typed_and_esc_goes_back_to_the_grid(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await pilot.press("6", "f")
        box = app.screen.tabs.runs.query_one("#runs-filter", Input)
        await await_until(lambda: app.screen.focused is box, what="the filter box focused by f")
        await pilot.press(*"model:oracle")
        await pilot.pause()
        assert box.value == "model:oracle"
        assert box.content_region.height == 1 and box.content_region.width > len(box.value)  # not only borders
        await pilot.press("escape")
        await await_until(lambda: isinstance(app.screen.focused, ResultsGrid), what="esc back to the grid")
        assert box.value == "model:oracle"  # leaving keeps the filter


async def test_esc_leaves_the_run_bars_inputs_for_the_timeline(tmp_path):
    wb = workbench(tmp_path / "f.db")
    save_import(wb.db, load_path(prefeval_tree(tmp_path / "prefeval")))
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(RunBar)
        for context, box in (("simple", "#rb-seed"), ("prefeval-turns", "#rb-turns"), ("custom", "#rb-sessions")):
            assert bar.set_value("rb-context", context)
            await settle(pilot, app)
            widget = bar.query_one(box, Input)
            assert widget.display, f"{box} shown for {context}"
            await pilot.click(box)
            await await_until(lambda widget=widget: app.screen.focused is widget, what=f"{box} focused by a click")
            await pilot.press("2")  # typed into the box: the operator asked for it
            assert "2" in widget.value
            await pilot.press("escape")
            await await_until(lambda: isinstance(app.screen.focused, Timeline), what=f"esc out of {box}")
    wb.close()


async def test_switching_user_from_the_palette_focuses_the_timeline(wb):
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await pilot.press("6")
        await await_until(lambda: isinstance(app.screen.focused, ResultsGrid), what="the Runs grid focused")
        await choose_in_palette(pilot, "Switch user: Priya", "Switch user: Priya")
        await await_until(lambda: app.screen.bundle.user.id == "priya", what="priya chosen")
        await await_until(lambda: isinstance(app.screen.focused, Timeline), what="the timeline focused")


async def test_the_compact_footer_keeps_the_tab_keys_label_apart_from_the_next_key(wb):
    app = app_for(wb)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        footer = app.screen.query_one(Footer)
        await await_until(lambda: footer.query(FooterLabel), what="the footer's Tabs label")
        label = footer.query_one(FooterLabel)
        help_key = next(k for k in footer.query(FooterKey) if k.description == "Help")
        assert str(label.render()) == "Tabs"
        assert help_key.region.x > label.region.right, "'Tabsf1 Help': no space after the group's label"


async def test_f2_and_f3_put_the_focus_on_what_they_bring_on_screen(wb):
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen.focused, Timeline)
        await pilot.press("f2")  # the tabs take the right side: the active tab's first control
        await await_until(
            lambda: screen.focused is not None and screen.tabs in screen.focused.ancestors, what="focus in the tabs"
        )
        await pilot.press("f2")  # back: no answers yet, so the timeline
        await await_until(lambda: isinstance(screen.focused, Timeline), what="the timeline focused again")
        await pilot.press("f3")  # the timeline hides: its focus does not vanish with it
        await await_until(lambda: screen.focused in screen.focus_chain, what="the focus on something shown")
        assert not isinstance(screen.focused, Timeline | Input)
        await pilot.press("f3")
        await await_until(lambda: isinstance(screen.focused, Timeline), what="the timeline shown and focused")
