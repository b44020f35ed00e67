"""Nothing of one user leaks into the next: a re-opened recorded run's choices, its panes and a Runs
filter naming its user go when another user is chosen, and ctrl+r then runs the new user's
defaults. A recorded answer (``imported:*``) shows read-only and never arms ctrl+r."""

from __future__ import annotations

import json

from core.results import load_results
from storage.imported_runs import save_imported
from tests.conftest import dataset
from tests.tui.conftest import DEMO, app_for, choose_in_palette, db_rows, run_and_wait, settle, workbench
from tests.waiting import await_until
from tui.widgets.response_pane import ResponsePane
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.run_bar import RunBar


def _recorded_run(wb, tmp_path, user: str = "priya") -> str:
    """One answer of ``imported:mistral8x7b`` to ``user``'s p1-open, made with reminder over long."""
    path = tmp_path / "answers.jsonl"
    record = {
        "user": user,
        "query": "p1-open",
        "model": "mistral8x7b",
        "answer": "A recorded answer.",
        "method": "reminder",
        "context": "long",
    }
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (run_id,) = save_imported(wb.db, load_results(path)).runs_added
    return run_id


def _bar_state(bar: RunBar) -> tuple:
    c = bar.choices()
    return c.user_id, tuple(c.models), c.context, c.turns, c.method, c.judge, c.seed, c.force, c.filler_pool


async def test_switching_user_after_a_recorded_run_leaves_no_trace_and_ctrl_r_runs_the_defaults(tmp_path):
    wb = workbench(tmp_path / "s.db")
    run_id = _recorded_run(wb, tmp_path)
    app = app_for(wb, DEMO)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        bar = screen.query_one(RunBar)
        fresh = _bar_state(bar)  # maya, as the app starts
        box = screen.tabs.runs.query_one("#runs-filter")
        box.value = "user:priya"
        await await_until(lambda: screen.query_one(ResultsGrid).filter_text == "user:priya", what="filter applied")

        await screen.reopen_run(run_id)
        await settle(pilot, app)
        assert [p.full_text for p in screen.query(ResponsePane)] == ["A recorded answer."]
        assert bar.choices().user_id == "priya" and bar.choices().method == "reminder"
        assert bar.models == DEMO  # the recorded model is shown, never armed
        line = str(screen.estimate.render())
        assert "recorded (imported:mistral8x7b), read-only" in line and "ctrl+r runs demo:generic" in line

        await choose_in_palette(pilot, "Switch user: Maya", "Switch user: Maya")
        await await_until(lambda: screen.bundle.user.id == "maya", what="maya chosen")
        await settle(pilot, app)
        assert _bar_state(bar) == fresh  # profile / defaults, no reminder, no long, no "no judge"
        assert list(screen.query(ResponsePane)) == [] and screen.run_view.run_id is None
        assert "priya" not in box.value and screen.query_one(ResultsGrid).filter_text == ""

        before = db_rows(wb, "SELECT count(*) FROM runs")[0][0]
        await run_and_wait(pilot, app)
        rows = db_rows(wb, "SELECT user_id, method, context, status FROM runs ORDER BY created_at DESC LIMIT 1")
        assert rows == [("maya", "zero-shot", "simple", "ok")]
        assert db_rows(wb, "SELECT count(*) FROM runs")[0][0] == before + 1
        models = db_rows(wb, "SELECT model FROM responses WHERE run_id = (SELECT id FROM runs WHERE user_id = 'maya')")
        assert sorted(m for (m,) in models) == sorted(DEMO)
    wb.close()


async def test_ctrl_r_with_only_recorded_models_says_so_in_one_line_and_stores_nothing(tmp_path):
    wb = workbench(tmp_path / "s.db")
    app = app_for(wb, DEMO)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(RunBar)
        bar.set_models(["imported:mistral8x7b"])
        await settle(pilot, app)
        before = db_rows(wb, "SELECT count(*) FROM runs")[0][0]
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        notes = [n.message for n in app._notifications if "imported:mistral8x7b" in n.message]
        assert len(notes) == 1 and "\n" not in notes[0] and "cannot be generated again" in notes[0]
        assert db_rows(wb, "SELECT count(*) FROM runs")[0][0] == before
    wb.close()


async def test_f4_clears_the_last_users_answers_and_runs_with_prefevals_pool_by_default(tmp_path):
    root = dataset("prefeval")
    dataset("prefeval", "SFT")
    wb = workbench(tmp_path / "r.db", prefeval_dir=root)
    app = app_for(wb, DEMO)
    async with app.run_test(size=(160, 48)) as pilot:
        await run_and_wait(pilot, app)  # maya's answers in the panes
        screen = app.screen
        assert len(screen.query(ResponsePane)) == 3
        await pilot.press("f4")
        await await_until(lambda: screen.bundle.user.id.startswith("prefeval-"), what="the PrefEval user")
        await settle(pilot, app)
        assert list(screen.query(ResponsePane)) == []  # not maya's answers under the PrefEval user
        bar = screen.query_one(RunBar)
        assert bar.choices().context == "prefeval-turns"
        assert bar.filler_labels[0][0] == "filler: prefeval-inter-turns (default)"  # imported with the answers
        assert isinstance(screen.focused, ResultsGrid)
        await run_and_wait(pilot, app)  # as f4's note says: the demo models on the same question
        user = screen.bundle.user.id
        last = "SELECT r.user_id, r.context, r.status, count(DISTINCT p.model) FROM runs r JOIN responses p ON p.run_id = r.id"
        rows = db_rows(wb, f"{last} WHERE p.provider = 'demo' GROUP BY r.id ORDER BY r.rowid DESC LIMIT 1")
        assert rows == [(user, "prefeval-turns", "ok", len(DEMO))]
        assert bar.set_value("rb-context", "normal")  # another context: the default follows it
        await settle(pilot, app)
        assert bar.filler_labels[0][0] == "filler: prefeval-inter-turns (default)"  # the user's own source's pool
        assert bar.set_value("rb-context", "simple")
    wb.close()
