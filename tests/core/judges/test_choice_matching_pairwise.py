"""Choice scoring, CUPID preference matching and InterPref pass / win rate."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from core.judges.base import Judgment
from core.judges.choice import ChoiceJudge
from core.judges.pairwise import PairInput, PairwiseJudge, pass_summary, win_rates
from core.judges.preference_matching import PreferenceMatchingJudge, micro_prf
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

GOLD = "Wants live calls with written notes afterwards."
INFERRED = "Prefers live calls; likes emojis."
DECOMPOSED = {
    GOLD: ["Proposes live calls?", "Sends written notes afterwards?"],
    INFERRED: ["Proposes live calls?", "Uses emojis?"],
}
# how far the OTHER preference covers each item
COVER = {
    "Proposes live calls?": "Fully Covered",
    "Sends written notes afterwards?": "Not Covered",
    "Uses emojis?": "Not Covered",
}


def _matching_model(spec, messages):
    text = user_text(messages)
    for pref, items in DECOMPOSED.items():
        if text.startswith("Preference:\n" + pref):
            return json.dumps({"checklist": items})
    items = re.findall(r"^\d+\. (.+)$", text.split("#### Checklist")[1], re.M)
    results = [{"index": i + 1, "entry": it, "label": COVER[it]} for i, it in enumerate(items)]
    # the Fully item in the gold list is only partially covered by the inferred preference
    if "Sends written notes afterwards?" in items:
        results[0]["label"] = "Partially Covered"
    return "```json\n" + json.dumps({"results": results}) + "\n```"


async def test_preference_matching_precision_recall_f1(priya):
    q = priya.query("p1-open").model_copy(update={"gold_preference": GOLD})
    bundle = priya.model_copy(update={"queries": [q]})
    model = ScriptedJudgeModel(_matching_model)
    out = await PreferenceMatchingJudge("openai:gpt-4o").judge(
        item_for(bundle, "p1-open", INFERRED, method="cupid-infer"), model
    )
    by = {j.dimension: j for j in out}
    assert len(model.calls) == 4  # two decompositions, two matches
    # precision: inferred items covered by gold = [1, 0] -> 0.5; recall: gold items covered = [0.5, 0] -> 0.25
    assert by["precision"].score == pytest.approx(0.5)
    assert by["recall"].score == pytest.approx(0.25)
    assert by["f1"].score == pytest.approx(2 * 0.5 * 0.25 / 0.75)
    assert by["precision"].extra["inferred_labels"] == ["fully", "not"]
    assert micro_prf([by["precision"].extra, by["precision"].extra]).precision == pytest.approx(0.5)


async def test_matching_with_a_short_label_list_fails_without_guessing(priya):
    q = priya.query("p1-open").model_copy(update={"gold_preference": GOLD})
    bundle = priya.model_copy(update={"queries": [q]})

    def answer(spec, messages):
        out = _matching_model(spec, messages)
        if "#### Checklist" in user_text(messages):
            data = json.loads(out.strip("`json\n"))
            data["results"] = data["results"][:1]
            return json.dumps(data)
        return out

    out = await PreferenceMatchingJudge("openai:gpt-4o").judge(
        item_for(bundle, "p1-open", INFERRED, method="cupid-infer"), ScriptedJudgeModel(answer)
    )
    assert all(not j.parse_ok and j.score is None for j in out)
    assert "labelled 1 items but the checklist has 2" in out[0].error


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
