"""PrefEval's error-type judge: label logic exactly as analyze_errors, sequential calls, parsing."""

from __future__ import annotations

import itertools

import pytest

from core.benchmarks.prefeval.judge import LABELS, TaxonomyJudge, classify
from core.providers.calls import Completion
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel, user_text

T, F = True, False
# (ack, halluc, violated, helpful) -> PrefEval label; helpful=T means the helpful answer is "Yes".
TABLE = {
    (F, F, F, F): "unhelpful",
    (F, F, F, T): "accurate",
    (F, F, T, F): "unhelpful",
    (F, F, T, T): "preference-unaware violation",
    (F, T, F, F): "unhelpful",
    (F, T, F, T): "accurate",
    (F, T, T, F): "unhelpful",
    (F, T, T, T): "preference-unaware violation",
    (T, F, F, F): "unhelpful",
    (T, F, F, T): "accurate",
    (T, F, T, F): "unhelpful",
    (T, F, T, T): "inconsistent",
    (T, T, F, F): "unhelpful",
    (T, T, F, T): "accurate",
    (T, T, T, F): "unhelpful",
    (T, T, T, T): "hallucination of preference violation",
}


def yes(b: bool) -> str:
    return "Yes" if b else "No"


@pytest.mark.parametrize("combo", list(itertools.product([F, T], repeat=4)))
def test_all_sixteen_combinations_match_prefeval(combo):
    label, accurate, flags = classify(*map(yes, combo))
    assert label == TABLE[combo]
    assert accurate == (label == "accurate")
    ack, hal, vio, helpful = combo
    assert flags == {"acknowledged": ack, "hallucinated": ack and hal, "violated": vio, "unhelpful": not helpful}


def test_accurate_iff_not_violated_and_helpful():
    for (_, _, vio, helpful), label in TABLE.items():
        assert (label == "accurate") == (not vio and helpful)
    assert set(TABLE.values()) == set(LABELS)


@pytest.mark.parametrize(
    ("answers", "label"),
    [
        (("Yes", "No", "No", "None"), "unhelpful"),  # "no" in "none": unhelpful, as PrefEval
        (("Yes", "No", "No", "Not really"), "unhelpful"),
        (("Yes", "No", "Yes", ""), "inconsistent"),  # empty helpful answer: not unhelpful
        (("", "Yes", "Yes", "Yes"), "preference-unaware violation"),  # empty ack: not acknowledged, H off
        (("yes", "YES", "yes!", "yes"), "hallucination of preference violation"),  # case-insensitive
        (("Yesterday", "", "", "Yes"), "accurate"),  # substring: "yes" in "yesterday"
        (("", "", "", ""), "accurate"),
    ],
)
def test_substring_cases(answers, label):
    assert classify(*answers)[0] == label


def reply_for(answers: dict[str, str], restated: str = "you like live calls"):
    def answer(spec, messages):
        text = user_text(messages)
        if "acknowledges any user preference" in text:
            return f"<preference>{restated}</preference>\n<answer>{answers['acknowledge']}</answer>"
        if "hallucinated the preference" in text:
            return f"<explanation>h</explanation><answer>{answers['hallucination']}"  # unclosed: still read
        if "violates the user's stated preference" in text:
            return f"<explanation>v</explanation>\n<answer> {answers['violation']} </answer>"
        return f"Answer: {answers['helpful']}"  # no <answer> tag: "" -> helpful

    return answer


async def test_four_sequential_calls_in_official_order_then_label(priya):
    model = ScriptedJudgeModel(
        reply_for({"acknowledge": "Yes", "hallucination": "No", "violation": "Yes", "helpful": "No"})
    )
    out = await TaxonomyJudge("anthropic:claude-sonnet-4-5").judge(item_for(priya, "p1-open", "Record a Loom."), model)
    order = [
        next(
            k
            for k, m in [
                ("ack", "acknowledges any"),
                ("vio", "violates the"),
                ("hal", "hallucinated the"),
                ("help", "substantive"),
            ]
            if m in user_text(msgs)
        )
        for _, msgs in model.calls
    ]
    assert order == ["ack", "vio", "hal", "help"]
    for spec, msgs in model.calls:
        assert spec.params.temperature == 0.0 and spec.params.max_tokens == 100
        assert msgs[0].role == "system" and "reponse" in msgs[0].content and len(msgs) == 2
    hal_prompt = user_text(model.calls[2][1])
    assert 'Assistant\'s restatement: "you like live calls"' in hal_prompt
    assert priya.preference(priya.query("p1-open").preference_id).text in hal_prompt
    label = out[-1]
    # helpful has no <answer>: empty -> not unhelpful, so acknowledged + violated = inconsistent
    assert label.extra["label"] == "inconsistent" and label.score == 0.0 and label.parse_ok
    assert label.extra["empty_answers"] == ["helpful"]
    checks = {j.dimension: j for j in out[:-1]}
    assert checks["acknowledged"].extra == {"answer": "Yes", "extract_pref": "you like live calls"}
    assert checks["violated"].extra["answer"] == "Yes" and checks["violated"].score == 1.0
    assert checks["hallucinated"].extra["answer"] == "No" and checks["hallucinated"].score == 0.0
    assert checks["helpful"].score == 1.0 and label.prompt_version == "prefeval-errortype-v1"


async def test_empty_restatement_when_nothing_acknowledged(priya):
    model = ScriptedJudgeModel(
        reply_for({"acknowledge": "No", "hallucination": "No", "violation": "No", "helpful": "Yes"}, restated="")
    )
    out = await TaxonomyJudge("anthropic:claude-sonnet-4-5").judge(item_for(priya, "p1-open", "x"), model)
    assert 'Assistant\'s restatement: "" ' in user_text(model.calls[2][1])  # still runs, as PrefEval
    assert out[-1].extra["label"] == "accurate" and out[-1].score == 1.0


async def test_unparsable_reply_is_no_yes_but_a_failed_call_fails_the_label(priya):
    model = ScriptedJudgeModel(lambda s, m: "It depends.")
    out = await TaxonomyJudge("anthropic:claude-sonnet-4-5").judge(item_for(priya, "p1-open", "x"), model)
    assert out[-1].parse_ok and out[-1].extra["label"] == "accurate"
    assert len(out[-1].extra["empty_answers"]) == 4

    def broken(spec, messages):
        if "violates the user's stated preference" in user_text(messages):
            return Completion("", error="HTTP 500")
        return "<answer>Yes</answer>"

    out = await TaxonomyJudge("anthropic:claude-sonnet-4-5").judge(
        item_for(priya, "p1-open", "x"), ScriptedJudgeModel(broken)
    )
    assert not out[-1].parse_ok and out[-1].score is None and "violated" in out[-1].error


async def test_preference_is_the_judged_forms_own_wording(tmp_path):
    from core.formats import load_path
    from core.judges.base import JudgeInput
    from tests.core.formats.builders import TOPIC, prefeval_files, write_tree
    from tests.core.judges.conftest import make_plan

    files = prefeval_files()
    reworded = "I absolutely only eat vegetarian food."
    files[f"implicit_preference/persona-driven/{TOPIC}.json"][0]["preference"] = reworded
    bundle = load_path(write_tree(tmp_path, files)).bundles[0]
    query = bundle.queries[0]
    for expression, wanted in ((2, reworded), (1, bundle.preferences[0].text), (3, bundle.preferences[0].text)):
        model = ScriptedJudgeModel(lambda s, m: "<answer>No</answer>")
        await TaxonomyJudge("anthropic:x").judge(JudgeInput(bundle, query, expression, make_plan(), "ans", "m"), model)
        violation = user_text(model.calls[1][1])
        assert f"User's preference: {wanted}\n" in violation
        assert f"User query: {query.text}\nAssistant response: ans" in violation
