"""Position sweeps: ``build_context(..., evidence_depth=D)`` moves the gold evidence sessions to depth
D of the history (0 first, 1 just before the question) at the nearest whole-session boundary, and
changes nothing else: the filler the seed drew, its order and the token totals stay as they were."""

from __future__ import annotations

import pytest

from core.formats.native import load_file
from core.history.build import build_context
from core.history.evidence_placement import place_evidence
from core.history.types import ContextSession
from core.model import Session, Turn
from tests.conftest import SAMPLE_DATA

DEPTHS = [0, 0.25, 0.5, 0.75, 1]
CONTEXTS = ["simple", "normal", "long"]


@pytest.fixture(scope="module")
def pool():
    """The sample filler pool (what `make demo` imports from sample_data/filler)."""
    return load_file(SAMPLE_DATA / "filler" / "everyday.json").fillers[0]


@pytest.fixture(scope="module")
def baselines(maya, pool):
    """(context, expression type, seed) -> the context built without a depth, built once."""
    cache = {}

    def get(cfg: str, expression: int, seed: int = 3):
        if (cfg, expression, seed) not in cache:
            cache[(cfg, expression, seed)] = build(maya, pool, cfg, expression, seed, None)
        return cache[(cfg, expression, seed)]

    return get


def build(maya, pool, cfg, expression, seed, depth):
    return build_context(
        maya,
        query="p1-open",
        expression_type=expression,
        config=cfg,
        seed=seed,
        filler_pools=[pool],
        evidence_depth=depth,
    )


def gold_keys(ctx) -> list[str]:
    """Keys of the user sessions that are gold evidence, in context order."""
    gold = {e.session_id for e in ctx.evidence}
    return [s.key for s in ctx.sessions if s.pool_id is None and s.id in gold]


def split(ctx) -> tuple[list[int], list[ContextSession]]:
    """(indexes of the gold sessions, the other sessions in order)."""
    gold = {e.session_id for e in ctx.evidence}
    idx = [i for i, s in enumerate(ctx.sessions) if s.pool_id is None and s.id in gold]
    rest = [s for i, s in enumerate(ctx.sessions) if i not in idx]
    return idx, rest


@pytest.mark.parametrize("cfg", CONTEXTS)
@pytest.mark.parametrize("expression", [1, 4])  # one gold session; two (e4a, e4b)
@pytest.mark.parametrize("depth", DEPTHS)
def test_evidence_lands_at_the_nearest_session_boundary(maya, pool, baselines, cfg, expression, depth):
    base = baselines(cfg, expression)
    ctx = build(maya, pool, cfg, expression, 3, depth)
    gold = maya.gold_evidence(maya.query("p1-open"), expression)
    assert {e.session_id for e in ctx.evidence} == set(gold) and not ctx.missing_evidence

    idx, rest = split(ctx)
    # The evidence sessions move together, in the order the context had them.
    assert idx == list(range(idx[0], idx[0] + len(idx)))
    assert gold_keys(ctx) == gold_keys(base)

    # Everything else: the same sessions (filler copies included) in the same order as without a depth.
    _, base_rest = split(base)
    assert [s.key for s in rest] == [s.key for s in base_rest]
    assert [s.tokens for s in rest] == [s.tokens for s in base_rest]
    assert [s.segment for s in rest] == [s.segment for s in base_rest]
    assert (ctx.history_tokens, ctx.user_tokens, ctx.interval_tokens, ctx.tail_tokens) == (
        base.history_tokens,
        base.user_tokens,
        base.interval_tokens,
        base.tail_tokens,
    )

    # The depth reached: within one session of the target, and the nearest boundary there is.
    total = sum(s.tokens for s in rest)
    before = sum(s.tokens for s in ctx.sessions[: idx[0]])
    assert abs(before / total - depth) <= max(s.tokens for s in rest) / total
    boundaries = [sum(s.tokens for s in rest[:i]) for i in range(len(rest) + 1)]
    assert abs(before - depth * total) == min(abs(b - depth * total) for b in boundaries)
    assert before in boundaries

    # tokens_to_query: what lies between each evidence session and the question.
    for e in ctx.evidence:
        assert ctx.sessions[e.position].id == e.session_id
        assert e.tokens_to_query == sum(s.tokens for s in ctx.sessions[e.position + 1 :])
    last = max(ctx.evidence, key=lambda e: e.position)
    assert last.tokens_to_query == total - before

    note = next(n for n in ctx.notes if n.startswith(f"evidence depth {depth:g} (reached"))
    assert f"reached {before / total:.3f}" in note and f"placed after {before:,} of the other {total:,}" in note


@pytest.mark.parametrize("cfg", CONTEXTS)
def test_depth_one_is_just_before_the_question_and_zero_is_first(maya, pool, cfg):
    for expression in (1, 4):
        n_gold = len(maya.gold_evidence(maya.query("p1-open"), expression))
        last = build(maya, pool, cfg, expression, 3, 1)
        assert [e.position for e in last.evidence] == list(range(len(last.sessions) - n_gold, len(last.sessions)))
        assert min(e.tokens_to_query for e in last.evidence) == 0
        first = build(maya, pool, cfg, expression, 3, 0)
        assert sorted(e.position for e in first.evidence) == list(range(n_gold))
        assert max(e.tokens_to_query for e in first.evidence) == first.history_tokens - first.sessions[0].tokens


@pytest.mark.parametrize("cfg", ["normal", "long"])
def test_deeper_means_nearer_the_question(maya, pool, cfg):
    distances = [build(maya, pool, cfg, 1, 5, d).evidence[0].tokens_to_query for d in DEPTHS]
    assert distances == sorted(distances, reverse=True) and len(set(distances)) == len(DEPTHS)


def test_same_seed_same_placement_other_seed_other_filler_same_rule(maya, pool):
    a = build(maya, pool, "normal", 1, 7, 0.5)
    b = build(maya, pool, "normal", 1, 7, 0.5)
    assert [s.key for s in a.sessions] == [s.key for s in b.sessions]
    assert a.evidence == b.evidence and a.notes == b.notes
    c = build(maya, pool, "normal", 1, 8, 0.5)
    _, rest_a = split(a)
    _, rest_c = split(c)
    assert [s.key for s in rest_a] != [s.key for s in rest_c]  # the seed draws other filler
    base_c = build(maya, pool, "normal", 1, 8, None)
    assert [s.key for s in rest_c] == [s.key for s in split(base_c)[1]]


def test_without_a_depth_nothing_moves_and_no_note(maya, pool, baselines):
    base = baselines("normal", 1)
    again = build(maya, pool, "normal", 1, 3, None)
    assert [s.key for s in again.sessions] == [s.key for s in base.sessions]
    assert not any(n.startswith("evidence depth") for n in base.notes)
    # The default history is in date order; a depth moves the evidence out of it, and says so.
    moved = build(maya, pool, "normal", 1, 3, 0)
    assert [s.key for s in moved.sessions] != [s.key for s in base.sessions]
    assert any("moved out of date order on purpose" in n for n in moved.notes)


def test_no_gold_in_context_is_noted_and_nothing_moves(maya, pool):
    none = build(maya, pool, "none", 1, 0, 0.5)
    assert none.sessions == [] and none.evidence == []
    assert any("evidence depth 0.5: no gold evidence session in this context; nothing moved" in n for n in none.notes)

    # A custom history without the gold session keeps its order exactly.
    picked = ["maya-life-01", "maya-p2-e1", "maya-life-02", "maya-p3-e1"]
    custom = build_context(
        maya, query="p1-open", expression_type=1, config="custom", session_ids=picked, evidence_depth=1
    )
    assert [s.id for s in custom.sessions] == picked
    assert custom.missing_evidence == ["maya-p1-e1"]
    assert any("no gold evidence session in this context; nothing moved" in n for n in custom.notes)


def test_a_depth_without_a_query_is_ignored_with_a_note(maya):
    plain = build_context(maya, expression_type=1, config="simple")
    ctx = build_context(maya, expression_type=1, config="simple", evidence_depth=0)
    assert [s.key for s in ctx.sessions] == [s.key for s in plain.sessions]
    assert any(n == "evidence depth 0 ignored: no query, so no gold evidence" for n in ctx.notes)


# -- place_evidence on hand-made sessions ---------------------------------------------------------
def session(sid: str, tokens: int, pool_id: str | None = None) -> ContextSession:
    s = Session(id=sid, kind="filler" if pool_id else "preference", turns=[Turn(role="user", content=sid)])
    return ContextSession(s, tokens, pool_id is not None, pool_id=pool_id)


@pytest.mark.parametrize(
    "depth,expected",
    [
        (0.0, ["g", "a", "b", "c"]),
        (0.2, ["a", "g", "b", "c"]),  # target 20: boundaries 0, 10, 40, 100 -> 10
        (0.25, ["a", "g", "b", "c"]),  # target 25: 10 and 40 are both 15 away -> the earlier, 10
        (0.26, ["a", "b", "g", "c"]),  # target 26: 40 is nearer
        (0.7, ["a", "b", "g", "c"]),  # target 70: 40 and 100 both 30 away -> 40
        (0.71, ["a", "b", "c", "g"]),
        (1.0, ["a", "b", "c", "g"]),
    ],
)
def test_nearest_boundary_with_ties_going_earlier(depth, expected):
    ordered = [session("a", 10), session("g", 999), session("b", 30), session("c", 60)]
    notes: list[str] = []
    got = place_evidence(ordered, {"g"}, depth, notes)
    assert [s.id for s in got] == expected
    assert len(notes) == 1 and "of the other 100 history tokens" in notes[0]


def test_several_gold_sessions_move_as_a_block_in_their_order():
    ordered = [session("g2", 5), session("a", 10), session("g1", 5), session("b", 10)]
    got = place_evidence(ordered, {"g1", "g2"}, 0.5, [])
    assert [s.id for s in got] == ["a", "g2", "g1", "b"]


def test_a_filler_session_sharing_a_gold_id_is_not_evidence():
    ordered = [session("g", 10, pool_id="pool"), session("a", 10), session("g", 10)]
    got = place_evidence(ordered, {"g"}, 0.0, [])
    assert [(s.id, s.pool_id) for s in got] == [("g", None), ("g", "pool"), ("a", None)]
