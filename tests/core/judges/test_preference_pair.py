"""The pairwise preference judge of the bias audits: every pair in both orders, each judgment
scoring answer 1 whatever was shown first, so a judge that always says "A" flips every pair."""

from __future__ import annotations

import pytest

from core.judges.preference_pair import PreferencePairJudge, answer_1_outcome, orders
from core.judges.templates import template
from core.providers.calls import Completion
from tests.core.judges.scripted import ScriptedJudgeModel, user_text
from tests.core.judges.test_heuristic import ALIGNED, VIOLATING

PAIRS = [
    ("GOOD: live calls twice a week, then written notes.", "BAD: send Loom videos."),
    ("BAD: record a weekly voice note.", "GOOD: a short live call you can interrupt."),
    ("GOOD: live calls and a shared doc.", "BAD: recorded screen-shares."),
]
QUERY = "How should I set up updates with the client team?"
PREFERENCE = "Wants short live calls, not recorded video updates."


def shown_as_a(messages) -> str:
    """The answer text under '## Answer A' in the prompt."""
    text = user_text(messages)
    return text.split("## Answer A\n", 1)[1].split("\n\n## Answer B", 1)[0]


async def judge_all(model, judge=None):
    judge = judge or PreferencePairJudge("openai:gpt-4o-mini")
    return [await judge.judge_both_orders(QUERY, PREFERENCE, a1, a2, model) for a1, a2 in PAIRS]


async def test_always_a_scores_answer_1_then_answer_2_the_winner():
    model = ScriptedJudgeModel(lambda s, m: '{"better": "A", "reason": "A reads better."}')
    results = await judge_all(model)
    assert [[j.score for j in js] for js in results] == [[1.0, 0.0]] * 3
    for js in results:
        assert [j.extra for j in js] == [{"shown_first": 1, "label": "A"}, {"shown_first": 2, "label": "A"}]
        assert orders(js) == (1.0, 0.0) and orders(js[::-1]) == (1.0, 0.0)
        for j in js:
            assert (j.kind, j.dimension, j.scale_min, j.scale_max) == ("pairwise", "preferred", 0.0, 1.0)
            assert j.parse_ok and j.rationale == "A reads better." and not j.heuristic
            assert j.judge_model == "openai:gpt-4o-mini" and j.prompt_version == "preference-pair-v1"
            assert j.temperature == 0.0
    assert len(model.calls) == 6
    for (spec, first), (_, second), (a1, a2) in zip(model.calls[::2], model.calls[1::2], PAIRS):
        assert spec.id == "openai:gpt-4o-mini" and spec.params.temperature == 0.0
        assert shown_as_a(first) == a1 and shown_as_a(second) == a2
        assert PREFERENCE in user_text(first) and QUERY in user_text(first)
        assert first[0].role == "system" and "preference" in first[0].content


async def test_always_b_gives_the_mirror_flip():
    model = ScriptedJudgeModel(lambda s, m: 'Answer B follows it.\n{"better": "B", "reason": "B."}')
    results = await judge_all(model)
    assert [[j.score for j in js] for js in results] == [[0.0, 1.0]] * 3
    assert all(j.extra["label"] == "B" for js in results for j in js)


async def test_a_judge_reading_the_content_scores_both_orders_alike():
    def by_content(spec, messages):
        return '{"better": "%s", "reason": "follows it"}' % ("A" if shown_as_a(messages).startswith("GOOD") else "B")

    results = await judge_all(ScriptedJudgeModel(by_content))
    assert [[j.score for j in js] for js in results] == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    assert [[j.extra["label"] for j in js] for js in results] == [["A", "B"], ["B", "A"], ["A", "B"]]


async def test_a_tie_is_half_in_both_orders():
    results = await judge_all(ScriptedJudgeModel(lambda s, m: '{"better": "tie", "reason": "same"}'))
    assert [[j.score for j in js] for js in results] == [[0.5, 0.5]] * 3


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("Both answers have merits; hard to say.", "no better found in the judge output"),
        ('{"better": "C", "reason": "?"}', "better field 'C' is not one of A, B, tie"),
        (Completion("", error="rate limited (429)"), "judge call failed: rate limited (429)"),
    ],
)
async def test_an_unreadable_reply_is_a_recorded_failure(reply, error):
    judge = PreferencePairJudge("anthropic:claude-sonnet-4-5")
    js = await judge.judge_both_orders(QUERY, PREFERENCE, *PAIRS[0], ScriptedJudgeModel(lambda s, m: reply))
    for n, j in enumerate(js, 1):
        assert j.score is None and not j.parse_ok and j.error == error
        assert j.extra == {"shown_first": n, "label": None}
        assert j.raw == (reply.text if isinstance(reply, Completion) else reply)
    assert orders(js) == (None, None)


def test_outcome_of_answer_1_from_the_shown_label():
    assert [answer_1_outcome(label, 1) for label in ("A", "B", "tie")] == [1.0, 0.0, 0.5]
    assert [answer_1_outcome(label, 2) for label in ("A", "B", "tie")] == [0.0, 1.0, 0.5]


def test_the_prompt_is_versioned_and_ours():
    t = template("preference_pair", "compare")
    assert t.version == "preference-pair-v1" and not t.verbatim
    text = t.text("user", query="Q", preference="P", answer_a="AA", answer_b="BB")
    assert '{"better": "A" or "B" or "tie"' in text and "## Answer A\nAA\n\n## Answer B\nBB" in text


# -- the offline heuristic ----------------------------------------------------------------------


def _no_calls(spec, messages):
    raise AssertionError("the heuristic variant never calls a model")


async def test_heuristic_equal_scores_go_to_the_answer_shown_first(priya):
    pref, query = priya.preference("p1").text, priya.query("p1-open").text
    judge = PreferencePairJudge(None)
    assert judge.name == "demo:heuristic" and judge.heuristic
    js = await judge.judge_both_orders(query, pref, "Sure, here is a plan.", "Okay, I can help with that.", _no_calls)
    assert [j.score for j in js] == [1.0, 0.0]  # a flip: the demo's deliberate position bias
    assert [j.extra for j in js] == [{"shown_first": 1, "label": "A"}, {"shown_first": 2, "label": "A"}]
    for j in js:
        assert j.heuristic and j.parse_ok and j.judge_model == "demo:heuristic" and j.temperature is None
        assert (j.kind, j.dimension, j.scale_min, j.scale_max) == ("pairwise", "preferred", 0.0, 1.0)
        assert "alignment" in j.rationale and "equal" in j.rationale and "shown first" in j.rationale


async def test_heuristic_a_clearly_better_answer_wins_both_orders(priya):
    pref, query = priya.preference("p1").text, priya.query("p1-open").text
    judge = PreferencePairJudge(None)
    good_first = await judge.judge_both_orders(query, pref, ALIGNED, VIOLATING, _no_calls)
    good_second = await judge.judge_both_orders(query, pref, VIOLATING, ALIGNED, _no_calls)
    assert [j.score for j in good_first] == [1.0, 1.0]
    assert [j.score for j in good_second] == [0.0, 0.0]
    assert [j.extra["label"] for j in good_first] == ["A", "B"]
    assert "A (answer 1) 5, B (answer 2) 2" in good_first[0].rationale
