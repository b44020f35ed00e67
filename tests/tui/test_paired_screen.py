"""The paired comparison in the workbench (`prefscope compare A B --tui`): two batches stored by the
`batch` command that differ in one model, paired by ``storage.compare``, opened through
``tui.cli.open_app.paired_app`` (what ``open_paired`` runs); ``enter`` on an item shows its two
answers side by side (real app, real SQLite, demo models)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable

from storage.compare import paired_comparison, side_for
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.tui.conftest import settle
from tests.tui.test_heatmap_screen import screen_text
from tests.waiting import await_until
from tui.cli.open_app import paired_app
from tui.paired_view import p_text
from tui.screens.compare import INSERTED, CompareScreen
from tui.screens.main import MainScreen
from tui.screens.paired import PairedScreen


@pytest.fixture
def two_batches(wb, unpaced_demo_models):  # noqa: F811
    """The same cells (maya and priya, open queries, E1, normal context) answered by two models."""
    for model in ("forgetful", "oracle"):
        cli(str(wb.db_path), "batch", "--name", model, "--user", "maya", "--user", "priya",
            "--query-kind", "open", "--expression", "1", "--context", "normal",
            "--model", f"demo:{model}", "--judge", "demo:heuristic", "-y")  # fmt: skip
    return wb


def answer_text(wb, ref) -> str:
    run_id, response_id = ref
    (text,) = wb.db.execute("SELECT text FROM responses WHERE run_id = ? AND id = ?", [run_id, response_id]).fetchone()
    return text


def errors(app) -> list[str]:
    return [str(n.message) for n in app._notifications if n.severity == "error"]


@pytest.mark.parametrize(
    ("a", "b", "first"), [("forgetful", "oracle", "improved"), ("oracle", "forgetful", "regressed")]
)
async def test_items_list_and_enter_shows_both_answers_with_the_changed_words(two_batches, a, b, first):
    wb = two_batches
    result = paired_comparison(wb.db, side_for(wb.db, a), side_for(wb.db, b), "rubric:alignment", "demo:heuristic")
    c = result.comparison
    assert c.n == 16 and getattr(c, first)  # the items the model changed, one way or the other
    app = paired_app({"db": str(wb.db_path)}, result)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, PairedScreen)
        text = " ".join(screen_text(app).split())  # words as shown, spacing aside
        for shown in (
            f"A {a}",
            f"B {b}",
            f"{c.mean_diff:+.3f} 95% paired bootstrap CI [{c.ci_low:+.3f}, {c.ci_high:+.3f}]",
            f"{c.test}: W = {c.statistic:g}, {p_text(c.p_value)}",  # "p = 0.042" or "p < 0.001"
            f"Cohen's d_z {c.effect_dz:.3f}",
            f"{len(c.regressed)} regressed · {len(c.improved)} improved · {len(c.ties)} ties",
            "every item: E 1 · context normal",
        ):
            assert shown in text, (shown, text)
        table = screen.query_one("#paired-items", DataTable)
        assert table.has_focus and table.row_count == len(c.regressed) + len(c.improved)
        pairs = c.regressed + c.improved
        assert [p for _, p in screen.items] == pairs  # regressions first, largest change first
        top = pairs[0]
        assert [result.key_factors[i] for i in screen.shown] == ["user", "query"]  # what varies between items
        mark = f"{'▼' if first == 'regressed' else '▲'} {first}"
        scores = [f"{top.a:g}", f"{top.b:g}", f"{top.diff:+g}"]
        assert [str(cell) for cell in table.get_row_at(0)] == [mark, *top.key[:2], *scores]

        await pilot.press("enter")
        await await_until(lambda: isinstance(app.screen, CompareScreen), what="the two answers")
        await settle(pilot, app)
        compare = app.screen
        texts = [answer_text(wb, top.a_ref), answer_text(wb, top.b_ref)]
        assert [x.text for x in compare.answers] == texts and texts[0] != texts[1]
        assert [x.row.response_id for x in compare.answers] == [top.a_ref[1], top.b_ref[1]]
        assert compare.bodies[0].plain == texts[0]
        assert INSERTED in {str(s.style) for s in compare.bodies[1].spans}  # B's own words marked
        shown = screen_text(app)
        assert f"A {a} · demo:{a} · the base of the diff" in shown and f"B {b} · demo:{b}" in shown
        assert f"{first}: rubric:alignment {top.a:g} → {top.b:g}" in shown
        for answer in texts:  # the first words of each answer are on screen
            assert " ".join(answer.split()[:4]) in " ".join(shown.split()), answer

        await pilot.press("escape")
        await await_until(lambda: app.screen is screen, what="the comparison again")
        await pilot.press("escape")
        await await_until(lambda: isinstance(app.screen, MainScreen), what="the main screen")
        assert errors(app) == []


async def test_at_80_columns_the_statistics_and_items_still_show(two_batches):
    wb = two_batches
    result = paired_comparison(wb.db, side_for(wb.db, "forgetful"), side_for(wb.db, "oracle"))
    app = paired_app({"db": str(wb.db_path)}, result)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        text = screen_text(app)
        assert "Paired comparison · rubric:alignment · B − A" in text
        assert "▲ improved" in text and "esc Close" in text
        assert errors(app) == []


async def test_a_side_against_itself_lists_nothing_and_enter_does_nothing(two_batches):
    wb = two_batches
    result = paired_comparison(wb.db, side_for(wb.db, "oracle"), side_for(wb.db, "oracle"))
    assert result.comparison.n == 16 and len(result.comparison.ties) == 16
    app = paired_app({"db": str(wb.db_path)}, result)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert "no item changed between A and B" in screen_text(app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen is screen and errors(app) == []
