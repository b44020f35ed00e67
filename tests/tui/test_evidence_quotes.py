"""The Evidence tab shows a session an answer quotes, even when it is neither gold nor retrieved."""

from __future__ import annotations

from textual.app import App, ComposeResult

from core.providers.base import ModelSpec
from core.run.spec import RunSpec
from tui.widgets.evidence_tab import EvidenceTable


class EvidenceApp(App):
    def compose(self) -> ComposeResult:
        yield EvidenceTable()


async def test_a_quoted_session_gets_a_row_with_its_quote(wb):
    bundle = wb.user("maya")
    spec = RunSpec(user_id="maya", query_id="p1-open", expression_type=4, models=[ModelSpec(id="demo:retrieval")])
    plan = (await wb.prepare_async(spec, bundle)).plan
    gold = {e.session_id for e in plan.evidence}
    other = next(c.session_id for c in plan.context if c.session_id not in gold)
    said = " ".join(bundle.session(other).turns[0].content.split()[:8])
    answer = f'Since you mentioned "{said}…", I took that into account.'
    app = EvidenceApp()
    async with app.run_test() as pilot:
        table = app.query_one(EvidenceTable)
        table.show_run(bundle, spec, plan, {"demo:retrieval": answer})
        await app.workers.wait_for_complete()
        await pilot.pause()
        keys = [k.value for k in table.rows]
        assert set(gold) <= set(keys) and other in keys
        row = table.get_row(other)
        assert str(row[-1]).startswith("✓ “") and row[3]  # the quote, and its distance to the question
