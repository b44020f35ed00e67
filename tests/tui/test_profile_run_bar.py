"""The run bar starts from the chosen user's benchmark profile and shows it; the operator's own
changes stay when another user is chosen, the rest follow the new user's profile (or prefscope's
defaults); the profile button goes back to it; a run stores where its defaults came from."""

from __future__ import annotations

import json

from textual.widgets import Button

from core.formats import load_path
from storage.users import save_import
from tests.core.formats.builders import locomo_sample
from tests.tui.cli.test_profile_cli import PE_USER, prefeval_tree
from tests.tui.conftest import app_for, run_and_wait, settle, workbench
from tests.waiting import await_until
from tui.widgets.run_bar import RunBar


def shown(bar: RunBar) -> tuple:
    c = bar.choices()
    return c.context, c.turns, c.method, c.judge


async def test_switching_users_switches_the_run_bar_to_their_profile(tmp_path):
    wb = workbench(tmp_path / "p.db")
    save_import(wb.db, load_path(prefeval_tree(tmp_path / "prefeval")))
    (tmp_path / "locomo.json").write_text(json.dumps([locomo_sample()]))
    save_import(wb.db, load_path(tmp_path / "locomo.json"))
    app = app_for(wb, ["demo:oracle"], user=PE_USER)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(RunBar)
        button = bar.query_one("#rb-profile", Button)
        assert shown(bar) == ("prefeval-turns", 5, "prefeval-zero-shot", "demo:heuristic")
        assert button.display and str(button.label) == "profile PrefEval"
        assert "profile PrefEval" in app.screen.sub_title
        assert bar.has_class("takes-turns")  # the turns box stands where the seed was
        assert bar.choices().spec().turns == 5

        bar.set_value("rb-user", "maya")
        await await_until(lambda: bar.choices().user_id == "maya", what="maya chosen")
        await settle(pilot, app)
        assert shown(bar) == ("simple", None, "zero-shot", "demo:heuristic")  # prefscope's defaults
        assert not button.display and not bar.has_class("takes-turns")

        bar.set_value("rb-method", "reminder")  # the operator's own choice …
        bar.set_value("rb-user", "locomo-demo-1")
        await await_until(lambda: bar.choices().user_id == "locomo-demo-1", what="the LoCoMo user chosen")
        await settle(pilot, app)
        assert shown(bar) == ("full", None, "reminder", "locomo")  # … stays; context and judge are LoCoMo's
        assert str(button.label) == "profile LoCoMo*"  # * : a choice differs from the profile

        await pilot.click("#rb-profile")
        await await_until(lambda: bar.choices().method == "locomo-qa", what="back to the profile's method")
        assert str(button.label) == "profile LoCoMo"
        await run_and_wait(pilot, app)
        run = wb.load_run(wb.list_runs(limit=1)[0].id)
        assert (run.spec.method, run.spec.judges) == ("locomo-qa", ["locomo"])
        assert run.plan.notes[0] == "defaults from the LoCoMo profile: context full, method locomo-qa, judge locomo"

        bar.set_value("rb-user", PE_USER)
        await await_until(lambda: bar.choices().user_id == PE_USER, what="the PrefEval user chosen again")
        await settle(pilot, app)
        await run_and_wait(pilot, app)
        pe_run = wb.load_run(wb.list_runs(limit=1)[0].id)
        assert (pe_run.spec.context, pe_run.spec.turns) == ("prefeval-turns", 5)
        assert bar.set_value("rb-turns", "") and bar.set_value("rb-context", "simple")
        await app.screen.reopen_run(pe_run.id)
        await settle(pilot, app)
        assert shown(bar) == ("prefeval-turns", 5, "prefeval-zero-shot", "demo:heuristic")  # as it was run
    wb.close()
