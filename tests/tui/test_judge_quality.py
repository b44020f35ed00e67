"""The Judge Quality view (``J`` on the Runs tab): agreement between annotators and judges on the runs
listed, as ``storage.agreement.agreement`` computes it, drawn as a table of rater pairs with each
pair's confusion matrix (real app, real SQLite, a batch stored by the `batch` command, labels stored
through ``storage.annotation_labels``)."""

from __future__ import annotations

import re

import pytest
from textual.app import App
from textual.widgets import DataTable

from storage.agreement import agreement
from storage.annotation_labels import ANSWER_DIMENSIONS, Label, save_label
from storage.annotation_queues import QueueSpec, create_queue, next_item
from storage.export import RunFilter
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.tui.conftest import app_for, settle
from tests.tui.test_heatmap_screen import screen_text
from tests.waiting import await_until
from tui.screens.judge_quality import EMPTY, JudgeQualityScreen, num
from tui.screens.main import MainScreen


@pytest.fixture
def judged(wb, unpaced_demo_models):  # noqa: F811
    """Maya's open queries at E1, simple context, three demo models scored by the heuristic judge."""
    cli(str(wb.db_path), "batch", "--name", "b", "--user", "maya", "--query-kind", "open", "--expression", "1",
        "--context", "simple", "--model", "demo:oracle", "--model", "demo:generic", "--model", "demo:violator",
        "--judge", "demo:heuristic", "-y")  # fmt: skip
    return wb


def label_queue(wb, name: str, annotator: str, offset: int) -> None:
    """``annotator`` scores every item of queue ``name``: the heuristic's score shifted by ``offset``
    on every third answer (so raters partly agree), clipped to 1–5."""
    n = 0
    while (item := next_item(wb.db, name, annotator)) is not None:
        judge = dict(
            wb.db.execute(
                "SELECT dimension, score FROM judgments WHERE response_id = ? AND judge_model = 'demo:heuristic'",
                [item.response_id],
            ).fetchall()
        )
        shift = offset if n % 3 == 0 else 0
        scores = {d: float(min(5, max(1, judge[d] + shift))) for d in ANSWER_DIMENSIONS}
        save_label(wb.db, item, annotator, Label(scores=scores), blind=True)
        n += 1


def run_ids(wb) -> list[str]:
    return [r for (r,) in wb.db.execute("SELECT id FROM runs WHERE label = 'b' ORDER BY id")]


def row_text(p) -> str:
    """A pair's row as the table draws it, spacing aside."""
    cells = [p.rater_a, p.rater_b, str(p.n), f"{p.abstained_a}/{p.abstained_b}", num(p.exact), num(p.within1)]
    cells += [num(p.cohen_kappa), num(p.weighted_kappa_linear), num(p.weighted_kappa_quadratic), num(p.spearman)]
    return " ".join([*cells, num(p.kendall)])


def words(text: str) -> str:
    return " ".join(text.split())


async def loaded(pilot, app) -> JudgeQualityScreen:
    await await_until(
        lambda: isinstance(app.screen, JudgeQualityScreen) and not app.screen.reading, timeout=60, what="agreement"
    )
    await pilot.pause()
    return app.screen


def assert_shows(text: str, dim) -> None:
    flat = words(text)
    assert f"Judge quality · {dim.dimension} ({dim.level}) · Krippendorff's α {dim.alpha:.3f}" in flat, flat
    assert f"over {len(dim.raters)} raters, {dim.items} items" in flat
    for p in dim.pairs:
        assert row_text(p) in flat, (row_text(p), flat)


class Host(App):
    """The view alone over a blank screen (the J key's own test goes through the main screen)."""

    def __init__(self, screen: JudgeQualityScreen):
        super().__init__()
        self.view = screen

    def on_mount(self) -> None:
        self.push_screen(self.view)


async def test_two_annotators_and_the_judge_pairs_and_alpha_as_storage_computes_them(judged):
    wb = judged
    create_queue(wb.db, "lab", QueueSpec(batches=["b"]))
    label_queue(wb, "lab", "ann", +1)
    label_queue(wb, "lab", "bob", -1)
    runs = run_ids(wb)
    expected = {d.dimension: d for d in agreement(wb.db, RunFilter(run_ids=runs, probes=False))}
    alignment = expected["rubric:alignment"]
    assert alignment.raters == ("ann", "bob", "demo:heuristic") and len(alignment.pairs) == 3
    app = Host(JudgeQualityScreen(wb, runs, "batch:b"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(pilot, app)
        text = screen_text(app)
        assert_shows(text, alignment)  # rubric:alignment first
        assert f"{len(runs)} run(s) listed in the Runs tab (filter: batch:b)" in words(text)
        assert "is left out of n and counted in abst (A's/B's)" in words(text)
        # the highlighted pair's confusion matrix: ann (rows) × bob (columns), and both base rates
        first = alignment.pairs[0]
        assert (first.rater_a, first.rater_b) == ("ann", "bob")
        assert f"confusion matrix · ann (rows) × bob (columns) · n = {first.n}" in words(text)
        for label, row in zip(first.labels, first.confusion):
            cells = r"\s+".join(map(str, [*row, sum(row)]))
            assert re.search(rf"^\s*{label:g}\s+{cells}\s*$", text, re.M), text
        rates = " · ".join(f"{v:g} {r:.0%}" for v, r in zip(first.labels, first.base_rate_a))
        assert f"base rates ann: {rates}" in words(text)

        await pilot.press("down")  # the next pair's matrix
        await pilot.pause()
        second = alignment.pairs[1]
        assert f"confusion matrix · {second.rater_a} (rows) × {second.rater_b} (columns)" in words(screen_text(app))

        seen = [screen.current.dimension]
        for _ in range(len(expected) - 1):  # d: every dimension in turn, with its own numbers
            await pilot.press("d")
            await pilot.pause()
            seen.append(screen.current.dimension)
            assert_shows(screen_text(app), expected[screen.current.dimension])
        assert sorted(seen) == sorted(expected)
        table = screen.query_one("#jq-pairs", DataTable)
        assert table.row_count == len(screen.current.pairs)


async def test_J_on_the_runs_tab_opens_the_view_for_the_runs_listed(judged):
    wb = judged
    create_queue(wb.db, "lab", QueueSpec(batches=["b"]))
    label_queue(wb, "lab", "ann", +1)
    label_queue(wb, "lab", "bob", -1)  # two annotators' columns in the results grid under it
    app = app_for(wb)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await pilot.press("J")  # the timeline has the focus: not the Runs tab's key there
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await pilot.press("6")
        await settle(pilot, app)
        await pilot.press("J")
        screen = await loaded(pilot, app)
        listed, _ = app.screen_stack[-2].tabs.runs.listed()
        assert screen.run_ids == listed and set(listed) == set(run_ids(wb))
        (dim,) = [
            d for d in agreement(wb.db, RunFilter(run_ids=listed, probes=False)) if d.dimension == "rubric:alignment"
        ]
        assert dim.raters == ("ann", "bob", "demo:heuristic")
        assert_shows(screen_text(app), dim)
        await pilot.press("escape")
        await await_until(lambda: isinstance(app.screen, MainScreen), what="the main screen")


async def test_with_one_rater_the_view_says_how_to_get_labels(judged):
    wb = judged
    app = Host(JudgeQualityScreen(wb, run_ids(wb)))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await loaded(pilot, app)
        text = words(screen_text(app))
        assert "only 1 rater(s) (demo:heuristic)" in text
        assert words(EMPTY)[:60] in text and "prefscope annotate QUEUE --batch B" in text
        assert not screen.query_one("#jq-pairs", DataTable).display
