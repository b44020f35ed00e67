"""Timeline rows: the one definition behind `prefscope show` and the TUI timeline."""

from __future__ import annotations

import datetime as dt

from core.history.timeline import TimelineRow, estimated_tokens, timeline_rows, tokens_by_session
from core.history.tokens import session_tokens
from core.model import Session, Turn
from core.plan import ContextEntry, Message, PromptPlan, PromptStep, RetrievedTurn
from tests.storage.bundles import rich_bundle


def _rows(bundle, **kw) -> list[TimelineRow]:
    kw.setdefault("expression_type", 1)
    kw.setdefault("evidence", set())
    kw.setdefault("tokens", {s.id: 10 for s in bundle.sessions})
    return timeline_rows(bundle, **kw)


def test_one_row_per_session_with_consecutive_fillers_folded():
    bundle = rich_bundle(n_filler=3)
    rows = _rows(bundle)
    assert [(r.kind, r.count) for r in rows] == [
        ("life_event", 1),
        ("preference", 1),
        ("preference", 1),
        ("filler", 3),
        ("task", 1),
    ]
    fillers = rows[3]
    assert fillers.session_ids == ("s-fill-0", "s-fill-1", "s-fill-2")
    assert fillers.position == 3 and rows[4].position == 6  # positions count sessions, not rows
    assert fillers.tokens == 30 and fillers.session_id is None  # a filler run opens nothing
    assert rows[0].session_id == "s-life" and rows[0].date == dt.date(2011, 6, 2)
    assert rows[2].preference_ids == ("p1", "p2") and rows[2].expression_type == 4
    assert rows[4].context_factor == "Dr. Chen"


def test_other_expression_types_are_dimmed_or_hidden():
    bundle = rich_bundle(n_filler=1)
    dimmed = _rows(bundle, expression_type=1)
    assert {r.session_ids[0]: r.dim for r in dimmed if r.kind == "preference"} == {
        "s-pref-1": False,
        "s-pref-4a": True,
    }
    assert not any(r.dim for r in _rows(bundle, expression_type=None))  # no type chosen: nothing dims
    hidden = _rows(bundle, expression_type=1, hide_other_types=True)
    assert [r.session_ids[0] for r in hidden if r.kind == "preference"] == ["s-pref-1"]
    assert not any(r.dim for r in hidden)


def test_hiding_a_session_between_fillers_folds_them_into_one_row():
    bundle = rich_bundle(n_filler=2)
    fill_a, fill_b = (s for s in bundle.sessions if s.kind == "filler")
    pref_4 = bundle.session("s-pref-4a")
    others = [s for s in bundle.sessions if s.kind != "filler" and s.id != "s-pref-4a"]
    bundle = bundle.model_copy(update={"sessions": [*others[:2], fill_a, pref_4, fill_b, *others[2:]]})
    shown = _rows(bundle, expression_type=1)
    assert [r.kind for r in shown] == ["life_event", "preference", "filler", "preference", "filler", "task"]
    hidden = _rows(bundle, expression_type=1, hide_other_types=True)
    assert [(r.kind, r.count) for r in hidden] == [("life_event", 1), ("preference", 1), ("filler", 2), ("task", 1)]


def test_evidence_and_attribute_marks():
    bundle = rich_bundle()
    rows = _rows(bundle, evidence={"s-pref-1", "s-fill-1"}, attribute_sessions={"s-life"})
    assert [r.session_ids[0] for r in rows if r.evidence] == ["s-pref-1", "s-fill-0"]  # the filler run holds one
    assert [r.session_id for r in rows if r.attribute_evidence] == ["s-life"]


def test_a_plan_gives_its_order_tokens_and_retrieved_turns():
    bundle = rich_bundle(n_filler=0)
    plan = PromptPlan(
        method="rag",
        steps=[PromptStep(name="answer", messages=[Message(role="user", content="q")])],
        context=[
            ContextEntry(session_id="pool-7", tokens=500, filler=True),
            ContextEntry(session_id="pool-8", tokens=250, filler=True),
            ContextEntry(session_id="s-pref-1", tokens=42),
            ContextEntry(session_id="s-task", tokens=77),
        ],
        retrieved=[
            RetrievedTurn(rank=1, session_id="s-task", turn_index=2, similarity=0.61, is_evidence=False),
            RetrievedTurn(rank=2, session_id="s-task", turn_index=0, similarity=0.40, is_evidence=False),
        ],
    )
    rows = _rows(bundle, plan=plan, estimated=True)
    assert [(r.kind, r.session_ids, r.tokens) for r in rows] == [
        ("filler", ("pool-7", "pool-8"), 750),  # pool fillers are not the user's sessions
        ("preference", ("s-pref-1",), 42),
        ("task", ("s-task",), 77),
    ]
    assert (rows[2].retrieved_rank, rows[2].retrieved_similarity) == (1, 0.61)  # the best-ranked turn
    assert rows[1].retrieved_rank is None
    assert not any(r.estimated for r in rows)  # a plan's counts are real


def test_a_sessions_tokens_mean_what_they_cost_as_chat_messages():
    bundle = rich_bundle()
    counts, estimated = tokens_by_session(bundle.sessions)
    assert not estimated
    assert counts == {s.id: session_tokens(s) for s in bundle.sessions}
    one = Session(id="x", kind="life_event", turns=[Turn(role="user", content="a" * 40)])
    assert estimated_tokens([one]) == {"x": 10}
    rows = _rows(bundle, tokens=counts)
    assert sum(r.tokens for r in rows) == sum(counts.values())
