"""`--context prefeval-turns --turns N` on PrefEval's real data: the messages equal the list the
official code builds (PROTOCOL §2.1–3.3), rebuilt here from the raw JSON files, not from prefscope."""

from __future__ import annotations

import json

import pytest

from core.formats import load_path
from core.history.build import build_context
from core.history.configs import ContextError
from core.history.prefeval_turns import POOL_ID
from core.methods import plan
from core.plan import fill
from tests.conftest import dataset

SYSTEM = "You are a helpful assistant."  # config.yaml system_prompt
SUFFIX = " (Please respond within 300 words.)"  # word_limit_suffix.txt with max_tokens = 300
REPLY = " I understand: no gluten."  # stands for the model's live reply to the preference (unstripped)


@pytest.fixture(scope="module")
def prefeval():
    root = dataset("prefeval")
    return root, load_path(root)


def raw(root, *parts):
    return json.loads(root.joinpath(*parts).read_text(encoding="utf-8"))


def official_pool(root) -> list[tuple[str, str]]:
    """extract_multi_turn_message: every conversation of the file, concatenated in file order."""
    return [(m["role"], m["content"]) for rec in raw(root, "filtered_inter_turns.json") for m in rec["conversation"]]


def build(result, n, expression=1, record=0, seed=0, order="official", method="prefeval-zero-shot"):
    bundle = result.bundles[record]
    query = bundle.queries[0]
    ctx = build_context(
        bundle,
        query=query,
        expression_type=expression,
        config="prefeval-turns",
        turns=n,
        turns_order=order,
        seed=seed,
        filler_pools=result.fillers,
    )
    return ctx, plan(method, ctx, query)


def pairs(messages):
    return [(m.role, m.content) for m in messages]


@pytest.mark.parametrize("n", [0, 2, 10])
def test_explicit_messages_equal_the_official_list(prefeval, n):
    root, result = prefeval
    rec = raw(root, "explicit_preference", "travel_restaurant.json")[0]
    ctx, p = build(result, n)
    assert [s.name for s in p.steps] == ["preference", "answer"]
    assert pairs(p.steps[0].messages) == [("system", SYSTEM), ("user", rec["preference"])]
    assert (p.steps[0].max_tokens, p.steps[0].temperature) == (300, 0.0)
    expected = [
        ("system", SYSTEM),
        ("user", rec["preference"]),
        ("assistant", REPLY),
        *official_pool(root)[: 2 * n],
        ("user", rec["question"] + SUFFIX),
    ]
    assert pairs(fill(p.steps[1], {"preference": REPLY})) == expected
    assert (p.steps[1].max_tokens, p.steps[1].temperature) == (300, 0.0)
    roles = [r for r, _ in expected[1:]]
    assert roles == ["user", "assistant"] * (n + 1) + ["user"]


def test_evidence_distance_counts_the_inter_turns(prefeval):
    _, result = prefeval
    ctx0, p0 = build(result, 0)
    ctx10, p10 = build(result, 10)
    assert p0.evidence[0].tokens_to_query == 0  # only the model's live reply sits between them
    inter = sum(cs.tokens for cs in ctx10.sessions if cs.pool_id == POOL_ID)
    assert p10.evidence[0].position == 0 and p10.evidence[0].tokens_to_query == inter > 3000
    assert ctx10.sessions[0].session.meta["prefeval_form"] == "explicit"


def test_seed_has_no_effect_in_official_order(prefeval):
    _, result = prefeval
    _, a = build(result, 10, seed=0)
    _, b = build(result, 10, seed=7)
    assert pairs(a.steps[-1].messages) == pairs(b.steps[-1].messages)
    assert any("--seed has no effect" in note for note in a.notes)


def test_shuffled_order_is_seeded_and_still_alternates(prefeval):
    root, result = prefeval
    _, a = build(result, 10, seed=0, order="shuffled")
    _, a2 = build(result, 10, seed=0, order="shuffled")
    _, b = build(result, 10, seed=7, order="shuffled")
    assert pairs(a.steps[-1].messages) == pairs(a2.steps[-1].messages)
    assert pairs(a.steps[-1].messages) != pairs(b.steps[-1].messages)
    inter = a.steps[-1].messages[3:-1]
    assert len(inter) == 20 and [m.role for m in inter] == ["user", "assistant"] * 10
    assert pairs(inter) != official_pool(root)[:20]


@pytest.mark.parametrize("expression,form", [(3, "choice-based"), (2, "persona-driven")])
def test_implicit_messages_send_the_conversation_and_no_preference_step(prefeval, expression, form):
    root, result = prefeval
    rec = raw(root, "implicit_preference", form, "travel_restaurant.json")[0]
    conv = rec["conversation"]
    if form == "choice-based":
        keys = ["query", "assistant_options", "user_selection", "assistant_acknowledgment"]
        assert list(conv) == keys  # PrefEval iterates the keys in file order
        convo = [("user" if k in ("query", "user_selection") else "assistant", conv[k]) for k in conv]
    else:
        convo = [(role, turn[role]) for turn in conv.values() for role in turn]
    _, p = build(result, 2, expression=expression)
    assert [s.name for s in p.steps] == ["answer"]
    assert pairs(p.steps[0].messages) == [
        ("system", SYSTEM),
        *convo,
        *official_pool(root)[:4],
        ("user", rec["question"] + SUFFIX),
    ]


def test_pool_limits_and_missing_pool_are_clear_errors(prefeval):
    root, result = prefeval
    size = len(official_pool(root))
    build(result, size // 2)  # the whole pool is allowed
    with pytest.raises(ContextError, match=f"N must be 0 to {size // 2}"):
        build(result, size // 2 + 1)
    bundle = result.bundles[0]
    with pytest.raises(ContextError, match="import filtered_inter_turns.json"):
        build_context(bundle, query=bundle.queries[0], expression_type=1, config="prefeval-turns", turns=2)
    ctx = build_context(bundle, query=bundle.queries[0], expression_type=1, config="prefeval-turns")
    assert any("0 inter turns" in note for note in ctx.notes)


def test_grid_sweeps_turns_for_prefeval_turns_only():
    from core.run.grid import Grid, cell_key, expand

    grid = Grid(contexts=["simple", "prefeval-turns"], turns=[0, 10], models=["demo:generic"])
    cells = expand(grid, all_users=lambda: ["u"], queries_of=lambda u: [("q", "open")])
    assert [(c.spec.context, c.spec.turns) for c in cells] == [
        ("simple", None),
        ("prefeval-turns", 0),
        ("prefeval-turns", 10),
    ]
    assert len({c.plan_key for c in cells}) == 3
    # a spec without inter turns dumps (and hashes) exactly as before the field existed
    plain = cells[0].spec
    assert "turns" not in plain.model_dump() and "turns_order" not in plain.model_dump()
    assert cells[1].spec.model_dump()["turns"] == 0 and cell_key(cells[1].spec) != cell_key(cells[2].spec)
