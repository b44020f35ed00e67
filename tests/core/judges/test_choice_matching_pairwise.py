"""Choice scoring, CUPID preference matching and InterPref pass / win rate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core.benchmarks.cupid.judge_matching import PreferenceMatchingJudge
from core.benchmarks.interpref.judge import PairInput, PairwiseJudge, pass_summary, win_rates
from core.judges.base import Judgment
from core.judges.choice import ChoiceJudge
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel, all_text, user_text


def _never(spec, messages):
    raise AssertionError("choice scoring must not call a model")


@pytest.mark.parametrize(
    ("query_id", "reply", "score"),
    [
        ("p1-mcq", "The answer is B: live calls you can interrupt.", 1.0),
        ("p1-mcq", "**A**", 0.0),
        ("p1-tf-yes", "Yes, that would suit you.", 1.0),
        ("p1-tf-no", "Yes — recorded readouts are efficient.", 0.0),
    ],
)
async def test_choice_scores_parsed_answers_against_gold(priya, query_id, reply, score):
    [j] = await ChoiceJudge().judge(item_for(priya, query_id, reply), ScriptedJudgeModel(_never))
    assert j.parse_ok and j.score == score and j.dimension == "accuracy"


@pytest.mark.parametrize(
    ("query_id", "reply"),
    [
        ("p1-mcq", "Either A or B could work, depending on the team."),
        ("p1-tf-yes", "It depends on how the team works."),
    ],
)
async def test_unparseable_choice_is_a_recorded_failure(priya, query_id, reply):
    [j] = await ChoiceJudge().judge(item_for(priya, query_id, reply), ScriptedJudgeModel(_never))
    assert not j.parse_ok and j.score is None and j.raw == reply and "does not commit" in j.error


# -- CUPID preference matching ---------------------------------------------------------------------

# Counts, statuses and CUPID's parsing rules: tests/core/judges/test_cupid_matching.py


async def test_matching_refuses_non_inference_runs(priya):
    out = await PreferenceMatchingJudge("openai:gpt-4o").judge(
        item_for(priya, "p1-open", "x"), ScriptedJudgeModel(_never)
    )
    assert all(not j.parse_ok and "cupid-infer" in j.error for j in out)


# -- InterPref pass --------------------------------------------------------------------------------

PAIR = PairInput(
    query="Plan my weekend.",
    preference="Loves crowded markets.",
    opposed="Avoids crowds.",
    response="RESP-MARKETS",
    opposed_response="RESP-QUIET",
)


def _oracle_evaluator(spec, messages):
    """Always matches correctly, whatever the order: finds which answer slot holds RESP-MARKETS."""
    text = all_text(messages)
    p1_is_p = text.index("Loves crowded markets.") < text.index("Avoids crowds.")
    a_is_r = text.index("RESP-MARKETS") < text.index("RESP-QUIET")
    return json.dumps({"answer_for_preference_1": "A" if p1_is_p == a_is_r else "B", "reason": "fits"})


async def test_pass_needs_all_four_swapped_orders():
    model = ScriptedJudgeModel(_oracle_evaluator)
    out = await PairwiseJudge("openai:gpt-4o").judge_pair(PAIR, model)
    assert len(model.calls) == 4
    shown = {
        (
            all_text(m).index("Loves") < all_text(m).index("Avoids"),
            all_text(m).index("RESP-MARKETS") < all_text(m).index("RESP-QUIET"),
        )
        for _, m in model.calls
    }
    assert len(shown) == 4, "the four calls must show the four distinct orders"
    summary = out[-1]
    assert summary.dimension == "pass" and summary.score == 1.0 and summary.extra["orders"] == [1.0] * 4


async def test_position_biased_evaluator_fails_pass_and_shows_disagreement():
    model = ScriptedJudgeModel(lambda s, m: '{"answer_for_preference_1": "A"}')  # always says A
    out = await PairwiseJudge("openai:gpt-4o").judge_pair(PAIR, model)
    summary = out[-1]
    assert summary.score == 0.0 and summary.extra["disagreement"] is True
    assert sorted(summary.extra["orders"]) == [0.0, 0.0, 1.0, 1.0]
    stats = pass_summary(
        [summary, (await PairwiseJudge("openai:gpt-4o").judge_pair(PAIR, ScriptedJudgeModel(_oracle_evaluator)))[-1]]
    )
    assert stats["pass_rate"] == 0.5 and stats["order_disagreement"] == 0.5


async def test_unparseable_order_leaves_pass_undecided():
    replies = iter(
        [
            '{"answer_for_preference_1": "A"}',
            "Hmm, hard to say.",
            '{"answer_for_preference_1": "B"}',
            '{"answer_for_preference_1": "A"}',
        ]
    )
    out = await PairwiseJudge("openai:gpt-4o").judge_pair(PAIR, ScriptedJudgeModel(lambda s, m: next(replies)))
    assert not out[-1].parse_ok and out[-1].score is None and "undecided" in out[-1].error


def _win(a, b, score, *, heuristic=False):
    return Judgment(
        kind="pairwise",
        dimension="win",
        score=score,
        rationale="",
        raw="",
        parse_ok=True,
        judge_model="openai:gpt-4o",
        prompt_version="interpref-compare-v1",
        heuristic=heuristic,
        extra={"model_a": a, "model_b": b},
    )


def test_win_rates_and_bradley_terry_ignore_heuristic_judgments():
    js = [_win("m1", "m2", 1.0)] * 3 + [_win("m1", "m2", 0.0)] + [_win("m2", "m1", 1.0, heuristic=True)] * 50
    names, w, bt = win_rates(js)
    assert names == ["m1", "m2"]
    assert w[0, 1] == pytest.approx(0.75) and w[1, 0] == pytest.approx(0.25)
    assert bt[0] > bt[1]
    assert np.isnan(w[0, 0])


async def test_compare_judges_both_presentation_orders():
    def answer(spec, messages):
        text = user_text(messages)
        x_block = text.split("## Assistant X")[1].split("## Assistant Y")[0]
        return '{"winner": "X"}' if "GOOD" in x_block else '{"winner": "Y"}'

    model = ScriptedJudgeModel(answer)
    out = await PairwiseJudge("openai:gpt-4o").compare(
        "q", "p", "pd", "good-model", ("GOOD r", "GOOD rd"), "bad-model", ("bad r", "bad rd"), model
    )
    assert [j.score for j in out] == [1.0, 1.0]  # good-model wins in both orders
    assert [j.extra["swapped"] for j in out] == [False, True]
