"""Attributes tab verdicts and Relevance tab deciders / labels, stored through storage.analyses."""

from __future__ import annotations

from core.analysis.attributes import ExtractedAttribute, Extraction
from core.model import Attribute
from storage.analyses import save_extraction
from tests.tui.conftest import app_for, db_rows, run_and_wait, settle
from tui.widgets.attributes_tab import AttributesTable
from tui.widgets.relevance_tab import RelevanceTable
from tui.widgets.timeline import Timeline


def store_extraction(wb) -> str:
    attrs = [
        ExtractedAttribute(
            Attribute(
                id="x1",
                text="Eats her main meal around 3 a.m. on night shifts",
                confidence=0.82,
                evidence_turns=["maya-p1-e4a#0"],
                source="demo:test",
            ),
            verifier_verdict="accept",
            verifier_reason="stated in the cited turn",
        ),
        ExtractedAttribute(
            Attribute(
                id="x2",
                text="Works in an emergency department",
                confidence=0.9,
                evidence_turns=["maya-life-01#0"],
                source="demo:test",
            )
        ),
    ]
    ex = Extraction("maya", "demo:test", "recentering-extract-v1", 0.0, 50_000, 0.4, None, attrs, [], [])
    return save_extraction(wb.db, ex)


async def test_attribute_verdicts_are_stored_and_evidence_is_marked(wb):
    extraction_id = store_extraction(wb)
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot, app)
        screen = app.screen
        marked = {r.session_id for r in screen.query_one(Timeline).rows if r.attribute_evidence}
        assert "maya-p1-e4a" in marked
        screen.show_tab("attributes")
        table = screen.query_one(AttributesTable)
        table.focus()
        await pilot.pause()
        assert [r.id for r in table.attrs] == ["x1", "x2"] and table.attrs[0].verifier == "accept"
        await pilot.press("x")  # reject x1
        await pilot.press("down", "u")  # x2 uncertain
        await pilot.pause()
        rows = db_rows(
            wb,
            "SELECT id, operator_verdict FROM attributes_extracted WHERE extraction_id = ? ORDER BY id",
            [extraction_id],
        )
        assert rows == [("x1", "reject"), ("x2", "uncertain")]
        assert [r.operator for r in table.attrs] == ["reject", "uncertain"]


async def test_relevance_deciders_side_by_side_and_the_operator_label(wb):
    store_extraction(wb)
    app = app_for(wb)
    async with app.run_test(size=(200, 50)) as pilot:
        await run_and_wait(pilot, app)
        screen = app.screen
        screen.show_tab("relevance")
        table = screen.query_one(RelevanceTable)
        table.focus()
        await pilot.press("d")
        await settle(pilot, app)
        assert table.targets == [("attribute", "x1"), ("attribute", "x2")]
        deciders = db_rows(
            wb,
            "SELECT target_id, decider, relevant FROM relevance WHERE run_id = ? ORDER BY target_id, decider",
            [screen.run_view.run_id],
        )
        assert ("x1", "gold", 1) in deciders and ("x2", "gold", 0) in deciders
        assert {d for _, d, _ in deciders} == {"gold", "bm25"}
        await pilot.press("n")  # the operator disagrees with gold on x1
        await pilot.pause()
        human = db_rows(wb, "SELECT target_id, relevant FROM relevance WHERE decider = 'human'")
        assert human == [("x1", 0)]
        note = str(screen.query_one("#relevance-note").render())
        assert "vs human" in note and "gold" in note
