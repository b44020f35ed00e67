"""RunSpec.evidence_depth reaches the plan: ``core.run.prepare`` builds the context with the depth, and
the PromptPlan's evidence positions are those of the built context (what the prompt really holds)."""

from __future__ import annotations

import pytest

from core.formats.native import load_file
from core.history.build import build_context
from core.providers.base import ModelSpec
from core.run.prepare import prepare
from core.run.spec import RunSpec
from core.settings import load_settings
from tests.conftest import SAMPLE_DATA


@pytest.fixture(scope="module")
def pool():
    return load_file(SAMPLE_DATA / "filler" / "everyday.json").fillers[0]


def spec(context: str, depth: float | None, expression: int = 1, seed: int = 0) -> RunSpec:
    return RunSpec(
        user_id="maya",
        query_id="p1-open",
        expression_type=expression,
        context=context,
        seed=seed,
        evidence_depth=depth,
        models=[ModelSpec(id="demo:generic")],
    )


@pytest.mark.parametrize("context", ["simple", "normal", "long"])
@pytest.mark.parametrize("depth", [0, 0.25, 0.5, 0.75, 1])
async def test_the_plan_carries_the_moved_evidence(maya, pool, context, depth):
    prepared = await prepare(spec(context, depth), maya, [pool], load_settings())
    direct = build_context(
        maya, query="p1-open", expression_type=1, config=context, seed=0, filler_pools=[pool], evidence_depth=depth
    )
    assert [s.key for s in prepared.context.sessions] == [s.key for s in direct.sessions]
    assert prepared.plan.evidence == prepared.context.evidence == direct.evidence
    [ev] = prepared.plan.evidence
    ctx = prepared.context
    assert ev.tokens_to_query == sum(s.tokens for s in ctx.sessions[ev.position + 1 :])
    rest = ctx.history_tokens - ctx.sessions[ev.position].tokens
    assert abs((rest - ev.tokens_to_query) / rest - depth) <= max(s.tokens for s in ctx.sessions) / rest
    if depth == 1:
        assert ev.tokens_to_query == 0 and ev.position == len(ctx.sessions) - 1
    if depth == 0:
        assert ev.position == 0
    assert any(n.startswith(f"evidence depth {depth:g} (reached") for n in ctx.notes)


async def test_the_depth_changes_the_prompt_and_nothing_else_in_the_plan(maya, pool):
    settings = load_settings()
    plain = await prepare(spec("normal", None), maya, [pool], settings)
    moved = await prepare(spec("normal", 1), maya, [pool], settings)
    assert plain.plan.history_tokens == moved.plan.history_tokens
    assert plain.plan.filler_pools == moved.plan.filler_pools == ["sample-everyday"]
    assert plain.plan.evidence[0].tokens_to_query > 0 == moved.plan.evidence[0].tokens_to_query
    # The same messages, in another order: the gold session's turns now end the history.
    first = [(m.role, m.content) for m in plain.plan.steps[-1].messages]
    second = [(m.role, m.content) for m in moved.plan.steps[-1].messages]
    assert first != second and sorted(first) == sorted(second)
    gold_turns = [t.content for t in next(s for s in maya.sessions if s.id == "maya-p1-e1").turns]
    history = [c for _, c in second[:-1]]
    assert history[-len(gold_turns) :] == gold_turns
