"""A PersonaMem question has no evidence turns, only the dataset's distance figures: the Evidence
tab shows them as its first row (tokens before the question), and stars no session."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult

from core.formats import load_path
from core.history.build import build_context
from core.methods import plan as make_plan
from core.providers.base import ModelSpec
from core.run.spec import RunSpec
from tui.widgets.evidence_tab import EvidenceTable

FIXTURE = Path(__file__).parents[1] / "core" / "formats" / "fixtures" / "personamem"


class EvidenceApp(App):
    def compose(self) -> ComposeResult:
        yield EvidenceTable()


async def test_the_datasets_depth_is_the_first_row_and_nothing_is_starred():
    lena = load_path(FIXTURE).bundles[0]
    q = lena.query("q-lena-2")
    spec = RunSpec(user_id=lena.user.id, query_id=q.id, context="full", models=[ModelSpec(id="demo:oracle")])
    plan = make_plan("personamem", build_context(lena, query=q, config="full"), q)
    app = EvidenceApp()
    async with app.run_test() as pilot:
        table = app.query_one(EvidenceTable)
        table.show_run(lena, spec, plan, {"demo:oracle": "<final_answer>(c)"})
        await app.workers.wait_for_complete()
        await pilot.pause()
        keys = [k.value for k in table.rows]
        assert keys[0] == "evidence-depth"
        row = table.get_row("evidence-depth")
        assert str(row[1]) == "▶ dataset" and row[3] == "25"
        assert str(row[4]) == "0 blocks, 0.08 of the context before the question, as the dataset gives it"
        assert all(str(table.get_row(k)[1]) != "★ gold" for k in keys[1:])
