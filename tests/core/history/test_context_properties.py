"""Properties of every filler configuration, over seeds, expression types, queries and pools."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.history.build import build_context
from core.history.configs import CONFIGS
from core.history.filler import TOLERANCE
from core.model import FillerPool

FILLER_CONFIGS = [c for c in CONFIGS.values() if c.filler_target]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cfg=st.sampled_from(FILLER_CONFIGS + [CONFIGS["simple"]]),
    seed=st.integers(0, 10_000),
    expression=st.sampled_from([1, 4]),
    query=st.sampled_from(["q1-open", "q1-mcq", "q2-open", "q3-open"]),
    pool_size=st.integers(0, 8),
)
def test_context_properties(mara, filler_pool, cfg, seed, expression, query, pool_size):
    pools = [FillerPool(id="p", sessions=filler_pool.sessions[:pool_size])] if pool_size else []
    ctx = build_context(mara, query=query, expression_type=expression, config=cfg.name, seed=seed, filler_pools=pools)

    # token count within 2% of the target, or the result says why not
    if cfg.filler_target:
        for target, got in ((cfg.interval, ctx.interval_tokens), (cfg.tail, ctx.tail_tokens)):
            if ctx.within_target:
                assert abs(got - target) <= TOLERANCE * target
        if not ctx.within_target:
            assert ctx.notes, "missed the target without saying why"
        if ctx.reused_filler:
            assert any("reused" in n for n in ctx.notes)
    assert ctx.history_tokens == sum(s.tokens for s in ctx.sessions)

    # every gold evidence session is present
    gold = mara.gold_evidence(mara.query(query), expression)
    assert {e.session_id for e in ctx.evidence} == set(gold) and not ctx.missing_evidence

    # user sessions in chronological order, evidence distances consistent
    user_dates = [s.session.date for s in ctx.sessions if s.segment == "user"]
    assert user_dates == sorted(user_dates)
    for e in ctx.evidence:
        assert e.tokens_to_query == sum(s.tokens for s in ctx.sessions[e.position + 1 :])

    # same seed -> identical context
    again = build_context(mara, query=query, expression_type=expression, config=cfg.name, seed=seed, filler_pools=pools)
    assert [(s.key, s.tokens, s.segment) for s in again.sessions] == [
        (s.key, s.tokens, s.segment) for s in ctx.sessions
    ]
