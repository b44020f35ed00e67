"""The README's "first five minutes", key by key, in the real app: the keys come from the README's
tour block, and after each step the test checks what that step says the user sees. A README edit
that changes a step's keys fails here until this script is changed with it."""

from __future__ import annotations

import csv
import re

from textual.content import Content
from textual.widgets import Input, Markdown

from tests.conftest import REPO
from tests.tui.conftest import app_for, settle, workbench
from tests.waiting import await_until
from tui.screens.compare import CompareScreen
from tui.screens.export import ExportScreen
from tui.screens.help import HelpScreen
from tui.widgets.diagnosis_tab import DiagnosisView
from tui.widgets.results_grid import ResultsGrid
from tui.widgets.results_grid_rows import GroupHeader
from tui.widgets.timeline import Timeline, render_row

TOUR = re.compile(r"\[start:tour\] -->\n(.*?)<!-- --8<-- \[end:tour\]", re.S)
#: Every key the tour may name; other backticked words (labels such as `applied`) are not keys.
KEYS = {"ctrl+r", "esc", "r", "1", "p", "7", "6", "g", "space", "c", "e", "f1"}
#: The keys each step presses, in the README's order: this script and the README change together.
SCRIPT = {
    1: [],
    2: ["ctrl+r", "esc"],
    3: ["r", "1"],
    4: ["p", "7"],
    5: ["6", "g", "space", "c", "e", "f1"],
}


def readme_steps() -> dict[int, list[str]]:
    block = TOUR.search((REPO / "README.md").read_text())
    assert block, "README.md has no tour block (<!-- --8<-- [start:tour] --> … [end:tour])"
    steps = re.split(r"^(\d+)\. ", block.group(1), flags=re.M)[1:]
    return {
        int(n): [k for k in re.findall(r"`([^`]+)`", text) if k in KEYS] for n, text in zip(steps[::2], steps[1::2])
    }


def test_the_script_presses_the_keys_the_readme_names():
    assert readme_steps() == SCRIPT


def _plain(markup: str) -> str:
    return Content.from_markup(markup).plain


async def test_the_first_five_minutes_as_the_readme_walks_them(tmp_path):
    # the demo pace (as `make demo`), so that `esc` can stop a pane mid-answer
    wb = workbench(tmp_path / "prefscope.db", tokens_per_s=40)
    app = app_for(wb, user="maya")
    async with app.run_test(size=(160, 48)) as pilot:
        screen = app.screen
        await settle(pilot, app)
        # 1. Look: Maya, the gold evidence starred, the estimate line with 3 free demo models
        assert screen.bundle.user.id == "maya"
        timeline = screen.query_one(Timeline)
        assert any("★" in render_row(row).plain for row in timeline.rows)
        estimate = str(screen.query_one("#estimate").render())
        assert "prompt tokens × 3 models" in estimate and "3 demo models free" in estimate

        # 2. Run: three panes stream; `esc` cancels the focused one and keeps its partial answer
        await pilot.press(*SCRIPT[2][:1])
        panes = screen.run_view.panes
        await await_until(lambda: len(panes[0].full_text) > 20, timeout=60, what="the first pane to stream")
        assert screen.focused is panes[0]
        await pilot.press("escape")  # the README's `esc`
        await settle(pilot, app, timeout=120)
        assert [p.model_id for p in panes] == ["demo:generic", "demo:retrieval", "demo:oracle"]
        assert panes[0].status == "cancelled" and panes[0].full_text.strip()
        assert [p.status for p in panes[1:]] == ["ok", "ok"]
        for pane in panes[1:]:
            assert pane.judgments and all(j.heuristic for j in pane.judgments)
        alignment = {p.model_id: next(j.score for j in p.judgments if j.dimension == "alignment") for p in panes[1:]}
        assert alignment["demo:oracle"] == 5

        # 3. Why: `r` shows the reason for every score; `1` the exact messages and the evidence's distance
        await pilot.press("r")
        assert all(p.show_rationales for p in panes)
        oracle_scores = str(panes[2].query_one(".pane-scores").render())
        assert all(j.rationale and j.rationale[:20] in oracle_scores.replace("\n", " ") for j in panes[2].judgments)
        await pilot.press("1")
        await pilot.pause()
        assert screen.tabs.active == "prompt"
        prompt = screen.tabs.prompt.text
        assert "tokens before the question" in prompt and "── step" in prompt

        # 4. Why not: `p` probes, each pane's border says why; `7` shows the evidence of every step
        await pilot.press("p")
        view = screen.query_one(DiagnosisView)
        await await_until(lambda: view.probing is None, timeout=120, what="the probes to finish")
        await settle(pilot, app, timeout=120)
        labels = {p.model_id: _plain(p.border_subtitle) for p in panes}
        assert labels["demo:oracle"] == "applied", labels
        assert all(labels[m] for m in ("demo:retrieval", "demo:oracle"))
        await pilot.press("7")
        await pilot.pause()
        assert screen.tabs.active == "diagnosis"
        assert "in context" in view.text and "known" in view.text

        # 5. Compare: `6` the Runs tab, `g` by model, `space` two answers, `c` side by side,
        # `e` the marked answers to CSV, `f1` every key
        await pilot.press("6")
        await pilot.pause()
        grid = screen.query_one(ResultsGrid)
        await await_until(lambda: screen.focused is grid and grid.row_count > 0, what="the Runs grid, focused")
        assert not isinstance(screen.focused, Input)
        await pilot.press("g")
        headers = [r for r in grid.shown if isinstance(r, GroupHeader)]
        assert headers and all(set(h.values) == {"model"} for h in headers)
        grid.move_cursor(row=1)  # the first answer under the first model's header
        await pilot.press("space", "down", "space")
        marked = grid.marked_rows()
        assert len(marked) == 2
        await pilot.press("c")
        await await_until(lambda: isinstance(app.screen, CompareScreen), what="the compare screen")
        assert len(app.screen.answers) == 2
        await pilot.press("escape")
        await await_until(lambda: app.screen is screen, what="back on the main screen")
        await pilot.press("e")
        await await_until(lambda: isinstance(app.screen, ExportScreen), what="the export dialog")
        target = tmp_path / "marked.csv"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await settle(pilot, app)
        with target.open() as fh:
            rows = list(csv.DictReader(fh))
        assert {r["response_id"] for r in rows} == {m.response_id for m in marked} and len(rows) == 2
        await pilot.press("f1")
        await await_until(lambda: isinstance(app.screen, HelpScreen), what="the help screen")
        help_text = app.screen.query_one(Markdown).source
        named = [k for step in SCRIPT.values() for k in step if not k.isdigit()]  # tabs: "`1` … `7`"
        assert "`1` … `7`" in help_text and all(f"`{key}`" in help_text for key in named)
