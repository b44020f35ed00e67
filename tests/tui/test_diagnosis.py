"""The diagnosis in the app: the probe key, each pane's label, the Diagnosis tab (real app, real
SQLite, unpaced demo models, the demo:heuristic judge)."""

from __future__ import annotations

import asyncio

import pytest
from textual.content import Content
from textual.widgets import Select

from core.analysis.diagnosis import APPLIED, KNOWN_NOT_APPLIED, NOT_KNOWN, STEPS
from tests.tui.conftest import app_for, db_rows, run_and_wait, settle, workbench
from tests.tui.seed import seed_run
from tests.waiting import await_until
from tui.widgets.diagnosis_tab import DiagnosisView

MODELS = ["demo:generic", "demo:oracle"]


def pane_labels(app) -> dict[str, str]:
    """The label each pane shows on its bottom border."""
    return {p.model_id: Content.from_markup(p.border_subtitle).plain for p in app.screen.run_view.panes}


def stored_labels(wb, run_id: str) -> dict[str, str]:
    return {case.model: diagnosis.label for case, diagnosis, _ in wb.diagnoses([run_id])}


async def probe_and_wait(pilot, app) -> None:
    view = app.screen.query_one(DiagnosisView)
    await pilot.press("p")
    await pilot.pause()
    await await_until(lambda: view.probing is None, timeout=60, what="the probes to finish")
    await settle(pilot, app)


async def test_probe_key_labels_each_pane_and_fills_the_diagnosis_tab(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, MODELS)
    async with app.run_test(size=(160, 50)) as pilot:
        await run_and_wait(pilot, app)
        run_id = app.screen.run_view.run_id
        view = app.screen.query_one(DiagnosisView)
        # judged, not probed yet: the oracle applied the preference, the generic answer waits for a probe
        assert pane_labels(app) == {"demo:generic": "undetermined: no probe", "demo:oracle": APPLIED}
        assert "No knowledge probes for this run yet: press p" in view.text

        await probe_and_wait(pilot, app)

        stored = stored_labels(wb, run_id)
        assert stored["demo:oracle"] == APPLIED
        assert stored["demo:generic"] in (NOT_KNOWN, KNOWN_NOT_APPLIED)
        assert pane_labels(app) == stored
        # the probe runs are stored against the run, with the same models, context and method
        probes = db_rows(
            wb, "SELECT query_id, context, method FROM runs WHERE probe_of = ? ORDER BY query_id", [run_id]
        )
        assert [q for q, *_ in probes] == ["p1-mcq", "p1-tf-no", "p1-tf-yes"]
        assert {(c, m) for _, c, m in probes} == {("simple", "zero-shot")}
        # ... and listed in the Runs tab
        assert {r.run_id for r in app.screen.tabs.runs.grid.data.rows} >= {
            run_id,
            *(r for (r,) in db_rows(wb, "SELECT id FROM runs WHERE probe_of = ?", [run_id])),
        }

        await pilot.press("7")
        await settle(pilot, app)
        assert app.screen.tabs.active == "diagnosis"
        text = view.text
        assert "probes: p1-mcq, p1-tf-yes, p1-tf-no" in text
        for case, diagnosis, _ in wb.diagnoses([run_id]):
            assert f"{case.model} (demo)  {diagnosis.label}" in text
            for step in diagnosis.steps:
                assert step.name in text
        assert all(name in text for name in STEPS)
        assert "✗ known" in text and "✓ known" in text  # generic fails its probes, the oracle passes them
        assert "MCQ p1-mcq ✗" in text and "MCQ p1-mcq ✓" in text
        assert "docs: how-to/diagnose.md" in text


@pytest.fixture
def probed(tmp_path):
    """A stored run of both models and its probes, as `prefscope run --probe` leaves them."""
    wb = workbench(tmp_path / "p.db")
    seed_run(wb, "run-seeded", models=MODELS)
    asyncio.run(wb.run_probes(wb.probe_specs("run-seeded"), wb.user("maya")))
    wb.flush()
    return wb


async def test_a_reopened_run_shows_its_stored_diagnosis_and_probes_again(probed):
    wb = probed
    stored = stored_labels(wb, "run-seeded")
    app = app_for(wb, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await app.screen.reopen_run("run-seeded")
        await settle(pilot, app)
        assert pane_labels(app) == stored
        assert stored["demo:oracle"] == APPLIED
        view = app.screen.query_one(DiagnosisView)
        assert view.run_id == "run-seeded"
        assert "probes: p1-mcq" in view.text
        # p probes again: a second set of probe runs, the diagnosis read again
        await probe_and_wait(pilot, app)
        assert db_rows(wb, "SELECT count(*) FROM runs WHERE probe_of = 'run-seeded'") == [(6,)]
        assert pane_labels(app) == stored_labels(wb, "run-seeded")


async def test_probe_key_on_a_query_without_probes_says_why(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.screen.query_one("#rb-query", Select).value = "p1-mcq"
        await run_and_wait(pilot, app)
        run_id = app.screen.run_view.run_id
        assert app.screen.run_view.spec.query_id == "p1-mcq"
        await pilot.press("p")
        await settle(pilot, app)
        said = " ".join(str(n.message) for n in app._notifications)
        assert "its own probe" in said
        assert db_rows(wb, "SELECT count(*) FROM runs WHERE probe_of = ?", [run_id]) == [(0,)]
        text = app.screen.query_one(DiagnosisView).text
        assert "An MCQ / true-false answer is its own probe" in text
        # the MCQ answer is its own probe: labels without a probe run
        assert pane_labels(app) == stored_labels(wb, run_id)
        assert all(not label.startswith("undetermined") for label in pane_labels(app).values())


async def test_probe_key_is_offered_only_with_a_finished_run(tmp_path):
    wb = workbench(tmp_path / "p.db")
    app = app_for(wb, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        assert app.screen.check_action("probe", ()) is False
        await pilot.press("p")  # nothing to probe: no run is shown
        await settle(pilot, app)
        assert db_rows(wb, "SELECT count(*) FROM runs") == [(0,)]
        assert "No run shown yet" in app.screen.query_one(DiagnosisView).text
        await run_and_wait(pilot, app)
        assert app.screen.check_action("probe", ()) is True
