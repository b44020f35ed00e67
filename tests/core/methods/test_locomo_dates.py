"""LoCoMo sessions carry their dates into every chat method's prompt (temporal questions need them);
other benchmarks' prompts stay dateless, as their protocols have them."""

from __future__ import annotations

import pytest

from core.formats import load_path
from core.history.build import build_context
from core.methods import METHODS, plan
from tests.conftest import dataset

#: Methods that send the history as chat messages (render.history_messages).
CHAT = ["zero-shot", "reminder", "fewshot-cot", "np", "td", "cot", "workflow", "self-critic"]


@pytest.fixture(scope="module")
def conv30():
    return load_path(dataset("locomo", "locomo10_conv-30.json")).bundles[0]


def _temporal(bundle):
    return next(q for q in bundle.queries if q.meta.get("category") == 2)


def test_chat_methods_are_the_registered_ones():
    assert set(CHAT) <= set(METHODS)


@pytest.mark.parametrize("method", CHAT)
def test_temporal_question_prompt_has_every_session_date_in_order(conv30, method):
    query = _temporal(conv30)
    ctx = build_context(conv30, query=query.id, config="full")
    text = "\n".join(m.content for m in plan(method, ctx, query).steps[0].messages)
    assert "DATE: 4:04 pm on 20 January, 2023\nCONVERSATION:\n" in text
    dates = [s.meta["date_time"] for s in conv30.sessions]
    assert len(dates) == len(conv30.sessions) >= 19
    positions = [text.find(f"DATE: {d}\nCONVERSATION:\n") for d in dates]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert text.count("DATE: ") == len(dates)


def test_the_header_opens_each_session_first_message(conv30):
    query = _temporal(conv30)
    ctx = build_context(conv30, query=query.id, config="full")
    msgs = plan("zero-shot", ctx, query).steps[0].messages
    first = conv30.sessions[0]
    assert msgs[0].content.startswith(f"DATE: {first.meta['date_time']}\nCONVERSATION:\n{first.turns[0].content}")


def test_recentering_transcript_shows_the_raw_dates(conv30):
    query = _temporal(conv30)
    ctx = build_context(conv30, query=query.id, config="full")
    text = plan("recentering", ctx, query).steps[0].messages[0].content
    positions = [text.find(f"## Conversation {n} ({s.meta['date_time']})") for n, s in enumerate(conv30.sessions, 1)]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)


@pytest.mark.parametrize("method", CHAT)
def test_other_benchmarks_get_no_date_header(mara, cupid_user, method):
    for bundle, q in ((mara, "q1-open"), (cupid_user, "qc1")):
        ctx = build_context(bundle, query=q, expression_type=1 if bundle is mara else None, config="full")
        assert all("DATE:" not in m.content for m in plan(method, ctx, bundle.query(q)).steps[0].messages)
