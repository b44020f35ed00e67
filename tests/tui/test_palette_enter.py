"""The command palette: Enter runs the highlighted entry of what is typed, even when pressed before
the search for it has finished (a quick typist's Enter ran the unfiltered list's first entry, Run);
the fuzzy scoring stays bounded on long titles."""

from __future__ import annotations

from textual.command import CommandInput, CommandPalette
from textual.fuzzy import FuzzySearch
from textual.widgets import Input

from tests.tui.conftest import app_for, settle
from tests.waiting import await_until
from tui.screens.commands import BoundedFuzzySearch
from tui.widgets.run_bar import RunBar


async def _type_and_enter_at_once(app, pilot, text: str) -> None:
    """The filter and its Enter in one go, as a fast typist's keys arrive: the Enter is handled
    right behind the change, before the palette's search for the text has had its turn."""
    await pilot.press("ctrl+p")
    await await_until(lambda: isinstance(app.screen, CommandPalette), what="the command palette")
    palette = app.screen
    await await_until(lambda: palette.query_one("CommandList").option_count > 0, what="the unfiltered list")
    box = palette.query_one(CommandInput)
    box.value = text
    box.post_message(Input.Submitted(box, text))


async def test_a_quick_enter_runs_the_entry_of_the_typed_filter_not_the_first_unfiltered_one(wb):
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(RunBar)
        assert bar.choices().context != "long"
        await _type_and_enter_at_once(app, pilot, "context long")
        await await_until(lambda: not isinstance(app.screen, CommandPalette), what="the palette to close")
        await settle(pilot, app)
        assert bar.choices().context == "long", "the entry the filter highlights: Context: Long"
        assert not app.screen.run_view.running and not wb.list_runs(limit=1), "Run (the unfiltered first entry) ran"


async def test_a_quick_enter_on_a_filter_nothing_matches_runs_nothing(wb):
    app = app_for(wb)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        await _type_and_enter_at_once(app, pilot, "zzzqqqxxx")
        palette = app.screen
        await await_until(
            lambda: not palette._searching() and not palette._enter_waiting, what="the search and the Enter done"
        )
        await settle(pilot, app)
        assert isinstance(app.screen, CommandPalette), "nothing to run: the palette stays open"
        assert not wb.list_runs(limit=1)


def test_bounded_scoring_matches_textual_where_it_is_small_and_finds_the_match_on_long_titles():
    ours, textual = BoundedFuzzySearch(), FuzzySearch()
    for query, title in [
        ("context long", "Context: Long 72K"),
        ("method rag", "Method: rag (RealPref)"),
        ("cancel all", "Cancel all running models"),
        ("tab runs", "Show tab: Runs"),
    ]:
        assert ours.match(query, title) == textual.match(query, title)
    long_title = "Query: [open] q17 " + "see the tree by the sea, then see the seeds " * 3
    score, offsets = ours.match("seeesee", long_title)
    assert score > 0 and "".join(long_title.lower()[i] for i in offsets) == "seeesee"
    assert ours.match("zq", long_title) == textual.match("zq", long_title) == (0.0, ())
