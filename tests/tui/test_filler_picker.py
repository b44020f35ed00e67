"""The run bar's filler picker: it names the user's default pool, a chosen pool goes into the run's
spec and plan, and a stored run re-opens with the pool it was run with."""

from __future__ import annotations

import json
from pathlib import Path

from core.formats import load_path
from storage.users import save_import
from tests.tui.conftest import app_for, run_and_wait, settle, workbench
from tui.widgets.run_bar import RunBar

SAMPLE_POOL = Path(__file__).resolve().parents[2] / "sample_data" / "filler" / "everyday.json"


def _second_pool(tmp_path: Path) -> Path:
    data = json.loads(SAMPLE_POOL.read_text())
    data["id"], data["name"], data["source"] = "other-pool", "Another pool", "elsewhere"
    for s in data["sessions"]:
        s["id"] = "other-" + s["id"]
    path = tmp_path / "other.json"
    path.write_text(json.dumps(data))
    return path


async def test_the_chosen_pool_is_run_stored_and_reopened(tmp_path):
    wb = workbench(tmp_path / "f.db")
    save_import(wb.db, load_path(_second_pool(tmp_path)))
    app = app_for(wb, ["demo:oracle"])
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot, app)
        bar = app.screen.query_one(RunBar)
        assert bar.filler_labels[0] == ("filler: sample-everyday (default)", "")
        assert [v for _, v in bar.filler_labels[1:]] == ["other-pool", "sample-everyday"]
        assert bar.choices().spec().filler_pools is None  # the default: the user's own pool

        assert bar.set_value("rb-context", "normal") and bar.set_value("rb-filler", "other-pool")
        await run_and_wait(pilot, app)
        run = wb.load_run(wb.list_runs(limit=1)[0].id)
        assert run.spec.filler_pools == ["other-pool"]
        assert run.plan.filler_pools == ["other-pool"]
        fillers = [c.session_id for c in run.plan.context if c.session_id.startswith(("other-", "fill-"))]
        assert fillers and all(f.startswith("other-") for f in fillers)

        bar.set_value("rb-filler", "")
        await app.screen.reopen_run(run.id)
        await settle(pilot, app)
        assert bar.choices().filler_pool == "other-pool"
    wb.close()
