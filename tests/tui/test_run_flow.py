"""Pick → run → scores, with the offline demo models, through the real app."""

from __future__ import annotations

import asyncio

from core.providers.demo import DemoProvider
from core.providers.events import Delta
from tests.tui.conftest import app_for, db_rows, run_and_wait, settle, workbench
from tests.waiting import await_until
from tui.widgets.tabs import AnalysisTabs


async def test_demo_run_streams_every_pane_and_scores_it(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        assert [p.status for p in screen.run_view.panes] == ["ok", "ok", "ok"]
        for pane in screen.run_view.panes:
            assert pane.full_text.strip(), pane.model_id
            dims = sorted(j.dimension for j in pane.judgments)
            assert dims == ["alignment", "awareness", "quality"], (pane.model_id, dims)
            assert all(j.heuristic and j.judge_model == "demo:heuristic" for j in pane.judgments)
        # the oracle knows the preference, the generic model does not: the heuristic judge sees it
        align = {
            p.model_id: next(j.score for j in p.judgments if j.dimension == "alignment") for p in screen.run_view.panes
        }
        assert align["demo:oracle"] > align["demo:generic"]
        assert len(screen.query_one(AnalysisTabs).judges.items) == 9
        rows = db_rows(
            wb, "SELECT model, status, text FROM responses WHERE run_id = ? ORDER BY slot", [screen.run_view.run_id]
        )
        assert [(m, s) for m, s, _ in rows] == [("demo:generic", "ok"), ("demo:retrieval", "ok"), ("demo:oracle", "ok")]
        assert [t for *_, t in rows] == [p.full_text for p in screen.run_view.panes]
        assert db_rows(wb, "SELECT count(*) FROM judgments WHERE run_id = ?", [screen.run_view.run_id]) == [(9,)]


async def test_estimate_shows_tokens_and_cost_before_sending(wb):
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        text = str(screen.query_one("#estimate").render())
        plan = screen.plan
        assert plan is not None
        assert f"{plan.total_tokens:,} prompt tokens × 3 models" in text
        assert "3 demo models free" in text
        assert db_rows(wb, "SELECT count(*) FROM runs") == [(0,)]  # nothing was sent


async def test_one_failing_model_shows_in_its_own_pane_only(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, ["demo:generic", "demo:flaky", "demo:oracle"])
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        generic, flaky, oracle = app.screen.run_view.panes
        assert (generic.status, flaky.status, oracle.status) == ("ok", "error", "ok")
        assert flaky.has_class("error") and not generic.has_class("error")
        assert flaky.full_text.strip()  # the partial answer is kept
        assert not flaky.judgments and generic.judgments and oracle.judgments
        status = db_rows(wb, "SELECT status FROM runs")
        assert status == [("partial",)]


class SlowHeldAfterItsFirstPiece(DemoProvider):
    """The demo models, unpaced, except demo:slow: it streams its first piece, then waits until it is
    cancelled (its pace is no race with the escape below, however loaded the machine)."""

    def __init__(self):
        super().__init__(tokens_per_s=0)

    async def stream(self, spec, messages, hints=None):
        async for event in super().stream(spec, messages, hints):
            yield event
            if spec.model == "slow" and isinstance(event, Delta):
                await asyncio.Event().wait()  # never set: only the cancellation ends it


async def test_escape_cancels_the_focused_pane_while_the_others_finish(tmp_path):
    demo = SlowHeldAfterItsFirstPiece()
    wb = workbench(tmp_path / "p.db", provider_for=lambda spec: demo)
    app = app_for(wb, ["demo:generic", "demo:slow", "demo:oracle"])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await pilot.press("ctrl+r")

        def slow_streaming():
            panes = app.screen.run_view.panes
            return len(panes) > 1 and panes[1].status == "running" and panes[1].full_text

        await await_until(slow_streaming, what="demo:slow to start streaming")
        slow = app.screen.run_view.panes[1]
        slow.focus()
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot, app)
        generic, slow, oracle = app.screen.run_view.panes
        assert (generic.status, slow.status, oracle.status) == ("ok", "cancelled", "ok")
        stored = dict(db_rows(wb, "SELECT model, status FROM responses"))
        assert stored == {"demo:generic": "ok", "demo:slow": "cancelled", "demo:oracle": "ok"}


async def test_retry_reruns_only_the_focused_pane(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, ["demo:generic", "demo:flaky"])
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        generic, flaky = app.screen.run_view.panes
        before = generic.full_text
        flaky.focus()
        await pilot.press("ctrl+t")
        await pilot.pause()
        await settle(pilot, app)
        assert flaky.status == "error" and generic.full_text == before and generic.status == "ok"
        assert db_rows(wb, "SELECT count(*) FROM responses WHERE model = 'demo:flaky'") == [(2,)]
