"""An imported run re-opens in the workbench like any other: its answer in its pane."""

from __future__ import annotations

import json

from core.results import load_results
from storage.imported_runs import save_imported
from tests.tui.conftest import app_for, settle
from tui.widgets.response_pane import ResponsePane


async def test_imported_run_reopens_with_its_answer(wb, tmp_path):
    path = tmp_path / "answers.jsonl"
    record = {"user": "maya", "query": "p1-open", "model": "gpt-4o-mini", "answer": "A recorded answer.", "turns": 2}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    (run_id,) = save_imported(wb.db, load_results(path)).runs_added
    app = app_for(wb, ["demo:oracle"])
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        await app.screen.reopen_run(run_id)
        await settle(pilot, app)
        panes = list(app.screen.query(ResponsePane))
        assert [p.full_text for p in panes] == ["A recorded answer."]
        assert panes[0].status == "ok"
        errors = [n.message for n in app._notifications if n.severity == "error"]
        assert errors == []
    wb.close()
