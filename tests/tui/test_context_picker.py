"""The run bar's context picker offers every context the CLI takes, PrefEval's inter turns and
``custom`` included (with the turns / session ids they need), and names each without a token total
that would be wrong for most users."""

from __future__ import annotations

import re

from textual.widgets import Input, Select

from core.formats import load_path
from core.history.configs import CONFIGS
from core.history.prefeval_turns import POOL_ID
from storage.users import save_import
from tests.tui.cli.test_profile_cli import prefeval_tree
from tests.tui.conftest import app_for, choose_in_palette, run_and_wait, settle, workbench
from tests.waiting import await_until
from tui.widgets.run_bar import CONTEXTS, RunBar


def test_context_labels_name_the_filler_they_add_and_no_total():
    labels = dict(CONTEXTS)
    assert set(labels) == set(CONFIGS)  # every context the CLI takes
    for name, label in labels.items():
        config = CONFIGS[name]
        figures = re.findall(r"\d+", label)
        if config.filler_target:
            assert "+" in label and sum(int(f) for f in figures) * 1000 == config.filler_target, label
        else:
            assert not figures, f"{label!r}: a size the user's own sessions decide"


async def _type_into(pilot, app, box: Input, text: str) -> None:
    await pilot.click(f"#{box.id}")
    await await_until(lambda: app.screen.focused is box, what=f"{box.id} focused")
    box.value = ""
    await pilot.press(*text)
    await pilot.press("escape")


async def test_prefeval_turns_and_custom_are_chosen_in_the_tui_and_the_prompt_is_built_from_them(tmp_path):
    wb = workbench(tmp_path / "c.db")
    save_import(wb.db, load_path(prefeval_tree(tmp_path / "prefeval")))
    app = app_for(wb, ["demo:oracle"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        bar = screen.query_one(RunBar)
        assert {"prefeval-turns", "custom"} <= set(bar.query_one("#rb-context", Select)._legal_values)

        await choose_in_palette(pilot, "Context: PrefEval turns", "Context: PrefEval turns")
        await await_until(lambda: bar.choices().context == "prefeval-turns", what="prefeval-turns chosen")
        await _type_into(pilot, app, bar.query_one("#rb-turns", Input), "2")
        await settle(pilot, app)
        plan = screen.plan
        assert plan is not None and bar.choices().spec().turns == 2
        assert plan.filler_pools == [POOL_ID] and "the first 4 messages of the pool" in " ".join(plan.notes)
        assert bar.filler_labels[0][0] == f"filler: {POOL_ID} (default)"  # the default follows the context

        sessions = [s.id for s in wb.user("maya").sessions]
        picked = [sessions[3], sessions[0]]  # out of order: custom keeps the order given
        await choose_in_palette(pilot, "Context: Custom sessions", "Context: Custom sessions")
        await await_until(lambda: bar.choices().context == "custom", what="custom chosen")
        box = bar.query_one("#rb-sessions", Input)
        assert box.display and not bar.query_one("#rb-seed", Input).display
        await _type_into(pilot, app, box, ", ".join(picked))
        await settle(pilot, app)
        assert [e.session_id for e in screen.plan.context] == picked
        await run_and_wait(pilot, app)
        run = wb.load_run(wb.list_runs(limit=1)[0].id)
        assert run.spec.context == "custom" and run.spec.method_options["session_ids"] == picked
        assert [e.session_id for e in run.plan.context] == picked
    wb.close()
