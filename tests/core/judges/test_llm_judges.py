"""LLM judges end to end with a scripted judge model: the right prompts go out, the answers are
parsed, and failures are recorded with the raw output."""

from __future__ import annotations

import pytest

from core.benchmarks.realpref.judge import RubricJudge
from core.benchmarks.recentering.judge import PersonalizationJudge, personalized_is_b
from core.providers.calls import Completion
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel, all_text, user_text

TABLE_MARKERS = {
    "awareness": "No mention or reflection of user preference at all.",
    "alignment": "Clear violation of user preference.",
    "quality": "Off-topic or irrelevant.",
}


async def test_rubric_makes_one_call_per_dimension_with_its_criteria(priya):
    def answer(spec, messages):
        text = user_text(messages)
        if "## Dimension: Preference Awareness" in text:
            return '{"score": 4, "rationale": "States the live-call preference."}'
        if "## Dimension: Preference Alignment" in text:
            return 'Looking at it... ```json\n{"score": 5, "rationale": "No recorded video."}\n```'
        return "The answer is fine overall."  # quality: no score -> recorded failure

    judge_model = ScriptedJudgeModel(answer)
    judge = RubricJudge("openai:gpt-4o-mini")
    out = await judge.judge(item_for(priya, "p1-open", "Use short live calls."), judge_model)

    assert len(judge_model.calls) == 3
    for spec, messages in judge_model.calls:
        assert spec.id == "openai:gpt-4o-mini" and spec.params.temperature == 0.0
        text = user_text(messages)
        assert priya.preference("p1").text in text and priya.query("p1-open").text in text
        assert "Use short live calls." in text
    for dim, marker in TABLE_MARKERS.items():
        sent = [user_text(m) for _, m in judge_model.calls if marker in user_text(m)]
        assert len(sent) == 1, f"{dim} criteria must be in exactly one call"
        others = [k for k in TABLE_MARKERS.values() if k != marker]
        assert not any(o in sent[0] for o in others), "each call carries one dimension's table only"

    by_dim = {j.dimension: j for j in out}
    assert by_dim["awareness"].score == 4 and by_dim["awareness"].rationale == "States the live-call preference."
    assert by_dim["alignment"].score == 5 and by_dim["alignment"].parse_ok
    q = by_dim["quality"]
    assert q.score is None and not q.parse_ok and q.raw == "The answer is fine overall."
    assert "no score" in q.error
    for j in out:
        assert j.prompt_version == "realpref-rubric-v1" and j.judge_model == "openai:gpt-4o-mini"
        assert (j.scale_min, j.scale_max) == (1, 5) and j.temperature == 0.0 and not j.heuristic


async def test_rubric_records_a_failed_call(priya):
    failing = ScriptedJudgeModel(lambda s, m: Completion("", error="rate limited (429)"))
    out = await RubricJudge("openai:gpt-4o-mini").judge(item_for(priya, "p1-open", "x"), failing)
    assert [j.parse_ok for j in out] == [False] * 3
    assert all("rate limited" in j.error and j.score is None for j in out)


# CUPID's response judge: tests/core/judges/test_cupid_judge.py


@pytest.mark.parametrize("answering_model", ["demo:oracle", "openai:gpt-4o"])  # shown as A / as B
async def test_personalization_reorients_the_score_to_the_personalised_side(priya, answering_model):
    item = item_for(priya, "p1-open", "PERSONALISED ANSWER", model=answering_model)

    def answer(spec, messages):
        if spec.id == answering_model:  # the generic response: the query alone, no history
            assert len(messages) == 1 and messages[0].content == priya.query("p1-open").text
            return "GENERIC ANSWER"
        text = all_text(messages)
        a_is_personal = text.index("PERSONALISED ANSWER") < text.index("GENERIC ANSWER")
        # the judge strongly prefers the personalised one, wherever it is shown
        return '{"score": 1, "rationale": "A"}' if a_is_personal else '{"score": 5, "rationale": "B"}'

    model = ScriptedJudgeModel(answer)
    [j] = await PersonalizationJudge("anthropic:claude-sonnet-4-5").judge(item, model)
    assert j.score == 5.0 and j.extra["generic"] == "GENERIC ANSWER"
    assert j.extra["personalized_position"] == ("B" if personalized_is_b("p1-open", answering_model) else "A")
    assert j.extra["raw_score"] == (5.0 if j.extra["personalized_position"] == "B" else 1.0)
    assert j.prompt_version == "recentering-personalization-v1"
