"""The heatmap from the Runs tab (``m``): a position sweep stored by the `batch` command, drawn over
two factors with the numbers ``storage.report.heatmap_panels`` computes, and the keys that change
the metric and the axes (real app, real SQLite, demo models)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from storage.export import RunFilter
from storage.report import default_metrics, heatmap_panels
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.tui.conftest import DEMO, app_for, settle
from tests.tui.seed import seed_run
from tests.waiting import await_until
from tui.screens.heatmap import HeatmapScreen, cycled_factors, default_axes, next_factor
from tui.screens.main import MainScreen

MODELS = ["demo:forgetful", "demo:oracle"]


def screen_text(app) -> str:
    """The screen as the terminal shows it, as plain text (what ``save_screenshot`` draws)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


@pytest.fixture
def sweep(wb, unpaced_demo_models):  # noqa: F811
    """Maya's open queries at E1, the evidence at depth 0 and 1, simple and normal context, two models."""
    cli(str(wb.db_path), "batch", "--name", "sweep", "--user", "maya", "--query-kind", "open",
        "--expression", "1", "--evidence-depth", "0", "--evidence-depth", "1", "--context", "simple",
        "--context", "normal", "--model", MODELS[0], "--model", MODELS[1], "--judge", "demo:heuristic", "-y")  # fmt: skip
    return wb


def sweep_runs(wb) -> list[str]:
    return [r for (r,) in wb.db.execute("SELECT id FROM runs WHERE label = 'sweep'").fetchall()]


def expected(wb, metric: str, rows: str, cols: str, **f):
    (panel,) = heatmap_panels(wb.db, metric, [rows, cols], RunFilter(run_ids=sweep_runs(wb), **f))
    return panel


def assert_drawn(text: str, panel) -> None:
    """Each row of ``panel`` is a line of ``text``: its label, then every cell's mean and n in column order."""
    assert all(c is not None for row in panel.means for c in row)
    for label, means, counts in zip(panel.rows, panel.means, panel.counts):
        cells = r"\s+".join(rf"{m:.2f}\s+n={n}" for m, n in zip(means, counts))
        label_text = f"{label:g}" if isinstance(label, float) else str(label)
        assert re.search(rf"^\s*{re.escape(label_text)}\s+{cells}\s*$", text, re.M), (label, means, text)


async def open_heatmap(pilot, app) -> HeatmapScreen:
    await settle(pilot, app)
    await pilot.press("6")  # the Runs tab, the focus on the grid
    await settle(pilot, app)
    await pilot.press("m")
    await await_until(lambda: isinstance(app.screen, HeatmapScreen), what="the heatmap screen")
    screen = app.screen
    await shown(pilot, app, screen)
    return screen


async def filtered(pilot, app, text: str) -> None:
    """The Runs tab's filter box set to ``text`` and the grid refilled."""
    await settle(pilot, app)
    app.screen.tabs.runs.query_one("#runs-filter").value = text
    grid = app.screen.tabs.runs.grid
    await await_until(lambda: grid.filter_text == text, what=f"the grid filtered by {text!r}")


async def shown(pilot, app, screen: HeatmapScreen) -> str:
    await await_until(lambda: screen.panels or screen.message, timeout=60, what="the heatmap to be read")
    await settle(pilot, app)
    return screen_text(app)


async def test_the_sweep_is_drawn_depth_by_context_with_the_reports_numbers(sweep):
    wb = sweep
    app = app_for(wb, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_heatmap(pilot, app)
        metric = default_metrics(wb.db, RunFilter(labels=["sweep"]))[0]
        assert (screen.metric, screen.rows, screen.cols) == (metric, "evidence_depth", "context")
        assert set(screen.run_ids) == set(sweep_runs(wb)) and screen.models is None
        panel = expected(wb, metric, "evidence_depth", "context")
        assert panel.rows == [0, 1] and panel.cols == ["simple", "normal"]
        assert [h.means for h in screen.panels] == [panel.means]
        text = screen_text(app)
        assert f"{metric}: evidence_depth × context" in text
        assert_drawn(text, panel)
        assert "every answer: method zero-shot · E 1" in text  # what does not vary, named once

        await pilot.press("x")  # swap: context down, depth across
        panel = expected(wb, metric, "context", "evidence_depth")
        assert_drawn(await shown(pilot, app, screen), panel)

        await pilot.press("c")  # depth → the next factor that varies: model
        assert screen.cols == "model"
        panel = expected(wb, metric, "context", "model")
        text = await shown(pilot, app, screen)
        assert "demo:forgetful" in text and "demo:oracle" in text
        assert_drawn(text, panel)

        await pilot.press("m")  # the next metric judged on these answers
        assert screen.metric != metric and screen.metric in screen.metrics
        assert_drawn(await shown(pilot, app, screen), expected(wb, screen.metric, "context", "model"))

        await pilot.press("escape")
        await await_until(lambda: isinstance(app.screen, MainScreen), what="the main screen")
        assert not [n.message for n in app._notifications if n.severity == "error"]


@pytest.fixture
def runs_of_three_models(wb):
    """Two runs (simple and normal context), each answered by three demo models."""
    seed_run(wb, "run-simple", models=DEMO)
    seed_run(wb, "run-normal", models=DEMO, context="normal", created_at="2026-01-16T10:00:00+00:00")
    return wb


async def test_a_model_filter_draws_only_that_models_answers(runs_of_three_models):
    wb = runs_of_three_models
    app = app_for(wb, DEMO)
    async with app.run_test(size=(80, 24)) as pilot:
        await filtered(pilot, app, "model:oracle")
        screen = await open_heatmap(pilot, app)
        assert screen.models == ["demo:oracle"]  # the runs hold other models' answers too
        assert (screen.rows, screen.cols) == ("context", "model")  # no evidence depth in these runs
        f = RunFilter(run_ids=["run-simple", "run-normal"], models=["demo:oracle"])
        (panel,) = heatmap_panels(wb.db, screen.metric, ["context", "model"], f)
        assert panel.rows == ["simple", "normal"] and panel.cols == ["demo:oracle"]
        assert [h.means for h in screen.panels] == [panel.means]
        text = screen_text(app)
        assert "(filter: model:oracle)" in text and "demo:generic" not in text
        assert_drawn(text, panel)


async def test_nothing_listed_says_so_and_opens_nothing(sweep):
    app = app_for(sweep, MODELS)
    async with app.run_test(size=(120, 40)) as pilot:
        await filtered(pilot, app, "model:nobody")
        await pilot.press("6")
        await settle(pilot, app)
        await pilot.press("m")
        await settle(pilot, app)
        assert isinstance(app.screen, MainScreen)
        assert "No runs listed to draw" in " ".join(str(n.message) for n in app._notifications)


@pytest.fixture
def unjudged(wb, unpaced_demo_models):  # noqa: F811
    """One answered run whose judgments were deleted."""
    cli(str(wb.db_path), "batch", "--name", "unjudged", "--user", "maya", "--query", "p1-open",
        "--expression", "1", "--model", "demo:oracle", "-y")  # fmt: skip
    with wb.db.conn:
        wb.db.execute("DELETE FROM judgments")
    return wb


async def test_runs_without_scores_show_a_message(unjudged):
    wb = unjudged
    app = app_for(wb, ["demo:oracle"])
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_heatmap(pilot, app)
        assert screen.panels == [] and "no rubric:alignment scores" in screen_text(app)
        await pilot.press("r", "m")  # nothing to cycle: no crash, the message stays
        await settle(pilot, app)
        assert isinstance(app.screen, HeatmapScreen) and screen.message
        assert not [n.message for n in app._notifications if n.severity == "error"]


def test_axes_default_to_depth_by_context_only_when_the_evidence_was_moved():
    assert default_axes({"evidence_depth": [None, 0.5], "context": ["normal"]}) == ("evidence_depth", "context")
    assert default_axes({"evidence_depth": [None], "context": ["normal"]}) == ("context", "model")
    values = {"evidence_depth": [None], "context": ["simple", "normal"], "model": ["a"], "method": ["x", "y"]}
    factors = cycled_factors(values, ("context", "model"))
    assert factors == ["context", "model", "method"]
    assert next_factor(factors, "context", "model") == "method"
    assert next_factor(factors, "method", "model") == "context"
    assert next_factor(["context", "model"], "context", "model") == "context"  # nothing else: unchanged
