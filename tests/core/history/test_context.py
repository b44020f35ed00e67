import asyncio
import datetime as dt

import pytest

from core.history.build import abuild_context, build_context
from core.history.configs import CONFIGS, ContextError, ContextWindowExceeded, check_window
from core.history.summaries import InMemorySummaryCache, session_hash
from core.methods.session_summary import session_summary_plan, summary_from_reply
from core.model import FillerPool


def test_simple_is_user_specific_and_chronological(mara):
    ctx = build_context(mara, query="q1-open", expression_type=4, config="simple")
    ids = [s.id for s in ctx.sessions]
    assert ids == ["s-le-1", "s-le-2", "s-p1-e4a", "s-p1-e4b", "s-p2-e4a"]  # no type-1 sessions
    assert not any(s.is_filler for s in ctx.sessions)
    assert ctx.history_tokens == sum(s.tokens for s in ctx.sessions) == ctx.user_tokens
    assert ctx.target_tokens is None and ctx.within_target is None


def test_evidence_positions_and_distance(mara):
    ctx = build_context(mara, query="q1-open", expression_type=4, config="simple")
    ev = {e.session_id: e for e in ctx.evidence}
    assert set(ev) == {"s-p1-e4a", "s-p1-e4b"}
    assert ev["s-p1-e4b"].position == 3
    assert ev["s-p1-e4b"].tokens_to_query == ctx.sessions[4].tokens
    assert ev["s-p1-e4a"].tokens_to_query == ctx.sessions[3].tokens + ctx.sessions[4].tokens


def test_generalized_preference_uses_originals_evidence(mara):
    ctx = build_context(mara, query="q3-open", expression_type=1, config="simple")
    assert [e.session_id for e in ctx.evidence] == ["s-p1-e1"]


def test_normal_hits_target_and_reports_reuse(mara, filler_pool):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="normal", seed=3, filler_pools=[filler_pool])
    assert ctx.within_target is True
    assert abs(ctx.interval_tokens - 35_000) <= 700
    assert ctx.tail_tokens == 0
    assert ctx.reused_filler is True and any("reused" in n for n in ctx.notes)
    keys = [s.key for s in ctx.sessions]
    assert len(keys) == len(set(keys))  # reused copies get distinct keys
    assert ctx.sessions[-1].segment == "user"  # interval filler never after the last user session


def test_extreme_has_tail_after_all_user_sessions(mara, filler_pool):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="extreme", seed=1, filler_pools=[filler_pool])
    segments = [s.segment for s in ctx.sessions]
    last_user = max(i for i, s in enumerate(segments) if s == "user")
    assert all(s == "tail" for s in segments[last_user + 1 :])
    assert abs(ctx.tail_tokens - 210_000) <= 0.02 * 210_000
    assert min(e.tokens_to_query for e in ctx.evidence) >= ctx.tail_tokens


def test_same_seed_same_context_other_seed_differs(mara, filler_pool):
    a = build_context(mara, query="q1-open", expression_type=4, config="long", seed=7, filler_pools=[filler_pool])
    b = build_context(mara, query="q1-open", expression_type=4, config="long", seed=7, filler_pools=[filler_pool])
    c = build_context(mara, query="q1-open", expression_type=4, config="long", seed=8, filler_pools=[filler_pool])
    assert [s.key for s in a.sessions] == [s.key for s in b.sessions]
    assert a.history_tokens == b.history_tokens
    assert [s.key for s in a.sessions] != [s.key for s in c.sessions]


def test_empty_pool_says_so(mara):
    ctx = build_context(mara, query="q1-open", expression_type=1, config="normal", filler_pools=[])
    assert ctx.within_target is False
    assert any("filler pool is empty" in n for n in ctx.notes)


def test_big_filler_session_is_cut_to_land_on_target(mara, filler_pool):
    big = filler_pool.sessions[1].model_copy(
        update={
            "id": "huge",
            "turns": [t.model_copy(update={"content": t.content * 400}) for t in filler_pool.sessions[1].turns],
        }
    )
    pool = FillerPool(id="big", sessions=[big])
    ctx = build_context(mara, query="q1-open", expression_type=1, config="normal", filler_pools=[pool])
    assert ctx.truncated_filler and ctx.within_target
    assert any("cut" in n for n in ctx.notes)
    assert abs(ctx.interval_tokens - 35_000) <= 700


def test_oracle_cupid_matches_factor_and_preference(cupid_user):
    ctx = build_context(cupid_user, query="qc1", config="oracle")
    assert [s.id for s in ctx.sessions] == ["t1", "t3"]
    assert [e.session_id for e in ctx.evidence] == ["t1", "t3"]


def test_full_none_custom(cupid_user, mara):
    assert [s.id for s in build_context(cupid_user, query="qc1", config="full").sessions] == ["t1", "t2", "t3", "t4"]
    none = build_context(cupid_user, query="qc1", config="none")
    assert none.sessions == [] and none.history_tokens == 0 and none.missing_evidence == ["t1", "t3"]
    custom = build_context(mara, query="q1-open", expression_type=1, config="custom", session_ids=["s-p2-e1", "s-le-1"])
    assert [s.id for s in custom.sessions] == ["s-p2-e1", "s-le-1"]
    assert custom.missing_evidence == ["s-p1-e1"]
    with pytest.raises(ContextError, match="unknown session"):
        build_context(mara, config="custom", expression_type=1, session_ids=["nope"])


def test_unknown_config_and_expression(mara):
    with pytest.raises(ContextError, match="unknown context"):
        build_context(mara, config="huge")
    with pytest.raises(ContextError, match="no expression type 3"):
        build_context(mara, config="simple", expression_type=3)


def test_undated_sessions_stay_next_to_their_neighbours(mara):
    from core.history.selection import chronological

    s = mara.sessions
    undated = s[3].model_copy(update={"date": None, "id": "undated"})
    order = chronological([s[5], undated, s[0]])
    assert [x.id for x in order] == ["s-le-1", "s-p2-e1", "undated"]
    assert order[0].date == dt.date(2016, 5, 10)


def test_check_window():
    assert check_window(1000, 2000) is None
    assert check_window(1000, None) is None
    with pytest.raises(ContextWindowExceeded, match="247,000 tokens but the model's window is 131,072"):
        check_window(247_000, 131_072)
    assert "forced" in check_window(247_000, 131_072, force=True)


def test_summaries_are_cached_by_model_and_session_hash(cupid_user):
    cache = InMemorySummaryCache()
    calls = []

    def summarise(session):
        calls.append(session.id)
        return f"summary of {session.id}"

    ctx = build_context(
        cupid_user, query="qc1", config="summaries", summarise=summarise, summary_cache=cache, summary_model="m"
    )
    assert [s.summary for s in ctx.sessions] == [f"summary of {i}" for i in ("t1", "t2", "t3", "t4")]
    assert ctx.summary_requests == []
    assert cache.get_summary("m", session_hash(cupid_user.session("t1"))) == "summary of t1"
    build_context(
        cupid_user, query="qc1", config="summaries", summarise=summarise, summary_cache=cache, summary_model="m"
    )
    assert len(calls) == 4  # second build: all cache hits
    pending = build_context(cupid_user, query="qc1", config="summaries", summary_cache=cache, summary_model="other")
    assert pending.summary_requests == ["t1", "t2", "t3", "t4"]


def test_async_summariser(cupid_user):
    async def summarise(session):
        await asyncio.sleep(0)
        return f"async {session.id}"

    ctx = asyncio.run(
        abuild_context(cupid_user, query="qc1", config="summaries", summarise=summarise, summary_model="m")
    )
    assert ctx.sessions[0].summary == "async t1"
    with pytest.raises(ContextError, match="abuild_context"):
        build_context(cupid_user, config="summaries", summarise=summarise)


def test_summary_call_plan_uses_fig23_and_parses_reply(cupid_user):
    plan = session_summary_plan(cupid_user.session("t1"))
    system, user = plan.steps[0].messages
    assert system.content.startswith("## Your Objective") and "summarize each interaction session" in system.content
    assert "### Session 1\n\n#### User\n\n" in user.content and plan.steps[0].tokens > 0  # CUPID repo log layout
    reply = '```json\n{"summaries": [{"session_id": 1, "analysis": "x", "context": ["writes to Dana"], "preferences": ["decisions first"]}]}\n```'
    assert summary_from_reply(reply) == "Context:\n- writes to Dana\nPreferences:\n- decisions first"
    assert summary_from_reply("not json") == "not json"


def test_every_config_is_buildable(mara, filler_pool):
    for name in CONFIGS:
        kwargs = {"session_ids": ["s-le-1"]} if name == "custom" else {}
        ctx = build_context(mara, query="q1-open", expression_type=1, config=name, filler_pools=[filler_pool], **kwargs)
        assert ctx.config == name
