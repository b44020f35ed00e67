"""Snapshot tests (pytest-textual-snapshot). Each docstring says what a reviewer should see.

Deterministic: stored runs come from the real demo models with their clock fields fixed
(tests/tui/seed.py), the header shows only the database file name, animations are off, and
the in-progress run pauses at a fixed token count (a scripted provider waits on a gate).
"""

from __future__ import annotations

import asyncio

import pytest

from core.providers.base import CALLS_A_MODEL
from core.providers.events import Delta, Done
from tests.tui.conftest import app_for, settle, workbench
from tests.tui.seed import seed_run
from tests.tui.test_attributes_relevance import store_extraction
from tests.waiting import await_until
from tui.widgets.relevance_tab import RelevanceTable
from tui.widgets.tabs import TABS

DEMO = ["demo:generic", "demo:retrieval", "demo:oracle"]
RUN = "run-snapshot-a"


def _opened(wb, run_id: str, tab: str | None = None, *, after=None):
    async def run_before(pilot):
        app = pilot.app
        await settle(pilot, app)
        await app.screen.reopen_run(run_id)
        await settle(pilot, app)
        if tab:
            app.screen.show_tab(tab)
        if after is not None:
            await after(pilot)
            await settle(pilot, app)
        app.screen.query_one("#timeline").focus()
        await pilot.pause()

    return run_before


def _seeded(tmp_path, models=DEMO, **kw):
    wb = workbench(tmp_path / "prefscope.db")
    seed_run(wb, RUN, models=models, **kw)
    return wb


def test_main_screen_wide(snap_compare, tmp_path):
    """200×50, a stored demo run re-opened: timeline with ★ on maya-p1-e4a/e4b, the run bar
    (Maya Okafor, [open] p1 …, E4, Simple, zero-shot, demo:heuristic), three panes side by side
    with two-line headers (● ok · ttft · t/s / tokens · free (demo)), markdown answers starting at
    the top of each pane, heuristic scores under each (oracle 5/5/5), each pane's diagnosis label on
    its bottom border (oracle "applied" in green, the others "undetermined: no probe" in grey), and
    the Prompt tab showing where the gold evidence sits."""
    wb = _seeded(tmp_path)
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN))


def test_main_screen_80x24(snap_compare, tmp_path):
    """80×24: narrow timeline (year-month dates); the run bar in four compact rows: user
    "Maya Okafor (maya, sample)" with "models 3" and ▶ Run, the query "[open] p1-open I've got…" on a
    row of its own, expression/context/seed, method/judge/force; the three answers behind pane
    tabs that show all three model ids, demo:generic shown with its scores; a compact footer that
    ends with "1234567 Tabs", "f1 Help" and "^p palette", nothing cut; the pane's bottom border shows
    its diagnosis label "undetermined: no probe" (grey: the run was not probed)."""
    wb = _seeded(tmp_path)
    assert snap_compare(app_for(wb), terminal_size=(80, 24), run_before=_opened(wb, RUN))


@pytest.mark.parametrize("n, tab", list(enumerate(TABS, start=1)))
def test_each_tab_at_80x24(snap_compare, tmp_path, n, tab):
    """80×24, the tab opened with its number key: the tabs take the whole width (timeline and
    answers give way), all seven tab titles visible, the tab's table or text fills the rest, and the
    footer starts with the tab's own keys (Attributes: a/u/x; Relevance: y/n/d/D; Judges: h/p;
    Diagnosis: p, its text saying the run has no probes yet and each model's four steps) and still
    fits "1234567 Tabs", "f1 Help" and "^p palette"."""
    wb = _seeded(tmp_path)
    store_extraction(wb)

    async def run_before(pilot):
        app = pilot.app
        await settle(pilot, app)
        await app.screen.reopen_run(RUN)
        await settle(pilot, app)
        app.screen.query_one("#timeline").focus()
        await pilot.press(str(n))
        await settle(pilot, app)
        if tab == "runs":  # the table, not the filter box (no cursor blink in the snapshot)
            app.screen.query_one(f"#tab-{tab} DataTable").focus()
        await pilot.pause()

    assert snap_compare(app_for(wb), terminal_size=(80, 24), run_before=run_before)


def test_error_pane(snap_compare, tmp_path):
    """demo:flaky failed mid-stream: its pane is tinted red with ● error, its partial answer and
    the error quoted under it, no scores; demo:generic and demo:oracle beside it are ok and scored."""
    wb = _seeded(tmp_path, models=["demo:generic", "demo:flaky", "demo:oracle"])
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN))


def test_evidence_tab(snap_compare, tmp_path):
    """Evidence tab: the two gold sessions (★ gold, tokens to the question) with their distinctive
    words, and per model whether its answer used them (demo:oracle ✓ with the words, the generic
    model —)."""
    wb = _seeded(tmp_path)
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN, "evidence"))


def test_judges_tab(snap_compare, tmp_path):
    """Judges tab: nine heuristic rows (3 models × awareness / alignment / quality) with judge
    demo:heuristic, source 'heuristic', parsed yes, the rationale naming matched words."""
    wb = _seeded(tmp_path)
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN, "judges"))


def test_runs_tab(snap_compare, tmp_path):
    """Runs tab: two stored runs (zero-shot and reminder, both ok, fixed dates 2026-01-15 and
    2026-01-16) newest first, with the filter box above."""
    wb = _seeded(tmp_path)
    seed_run(wb, "run-snapshot-b", models=DEMO, method="reminder", created_at="2026-01-16T10:00:00+00:00")
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN, "runs"))


def test_attributes_tab(snap_compare, tmp_path):
    """Attributes tab: two extracted attributes (x1 verifier accept, x2 no verdict), confidence,
    evidence turn refs; the timeline marks maya-p1-e4a and maya-life-01 with ◆."""
    wb = _seeded(tmp_path)
    store_extraction(wb)
    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN, "attributes"))


def test_relevance_tab(snap_compare, tmp_path):
    """Relevance tab after `d` and an operator `n` on x1: rows for attributes x1 and x2 with gold,
    BM25 (with scores) and human columns side by side, x1 marked ✗ split, and agreement vs human
    in the note line."""
    wb = _seeded(tmp_path)
    store_extraction(wb)

    async def decide(pilot):
        table = pilot.app.screen.query_one(RelevanceTable)
        table.focus()
        await pilot.press("d")
        await settle(pilot, pilot.app)
        await pilot.press("n")

    assert snap_compare(app_for(wb), terminal_size=(200, 50), run_before=_opened(wb, RUN, "relevance", after=decide))


class GateProvider:
    """Streams the first ``words`` words of a fixed answer, then waits until released."""

    name = "script"
    capabilities = CALLS_A_MODEL

    def __init__(self, words: int = 12):
        self.words = words
        self.reached = 0
        self.gate = asyncio.Event()

    def cost_usd(self, spec, usage, *, batch=False):
        return None

    def context_window(self, spec):
        return None

    async def stream(self, spec, messages):
        text = (
            f"Answer from {spec.model}: plan the week around night shifts, keep dinners light, "
            "and batch-cook on days off so the 3 a.m. meal is ready."
        ).split(" ")
        for w in text[: self.words]:
            yield Delta(w + " ")
        self.reached += 1
        await self.gate.wait()
        for w in text[self.words :]:
            yield Delta(w + " ")
        yield Done("stop")


def test_run_in_progress(snap_compare, tmp_path):
    """A run paused mid-stream: three panes (script:alpha, script:beta, script:gamma) each with
    ● running and the same first twelve words; the estimate line says cost n/a for the three
    scripted models; no scores yet."""
    gate = GateProvider()
    wb = workbench(tmp_path / "prefscope.db", provider_for=lambda spec: gate)
    app = app_for(wb, ["script:alpha", "script:beta", "script:gamma"])

    async def run_before(pilot):
        await settle(pilot, app)
        await pilot.press("ctrl+r")
        await await_until(lambda: gate.reached == 3, what="all three scripted models to be called")

        def twelve_words_each() -> bool:
            panes = app.screen.run_view.panes
            return len(panes) == 3 and all(p.status == "running" and len(p.full_text.split()) == 12 for p in panes)

        await await_until(twelve_words_each, what="each pane running with its first twelve words")
        app.screen.query_one("#timeline").focus()
        await pilot.pause()

    assert snap_compare(app, terminal_size=(200, 50), run_before=run_before)
