"""LoCoMo's scoring as task_eval/evaluation.py computes it, and the cat-5 reply decoding."""

from __future__ import annotations

import asyncio

import pytest

from core.benchmarks.locomo.judge import cat5_prediction, score_locomo
from core.benchmarks.locomo.methods import cat5_options
from core.benchmarks.locomo.metrics import locomo_multi_f1, locomo_normalize, locomo_score, locomo_token_f1
from core.judges import make_judge
from core.judges.base import JudgeInput
from core.model import Query
from core.plan import Message, PromptPlan, PromptStep


def test_normalize_answer():
    assert locomo_normalize("The cat, and a dog!") == "cat dog"
    assert locomo_normalize("  7 May,  2023. ") == "7 may 2023"
    assert locomo_normalize("Anand theatre") == "anand theatre"  # whole words only


def test_token_f1_stems_and_counts_a_multiset():
    assert locomo_token_f1("running fast", "runs") == pytest.approx(2 / 3)  # run, fast vs run
    assert locomo_token_f1("", "anything") == 0.0 and locomo_token_f1("x", "") == 0.0
    assert locomo_token_f1("the Cat", "cats") == 1.0
    assert locomo_token_f1("run run", "run") == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_multi_answer_f1_category_1():
    assert locomo_multi_f1("Paris, Rome", "Rome, Paris, Oslo") == pytest.approx(2 / 3)
    assert locomo_score(1, "Paris, Rome", "Rome, Paris, Oslo") == pytest.approx(2 / 3)


def test_category_rules():
    assert locomo_score(3, "x", "x; y") == 1.0 and locomo_score(3, "y", "x; y") == 0.0
    assert locomo_score(2, "7 May 2023", "7 May, 2023") == 1.0
    assert locomo_score(4, "blue", "red") == 0.0
    assert locomo_score(5, "Not mentioned in the conversation", "ignored") == 1.0
    assert locomo_score(5, "No information available.", "") == 1.0
    assert locomo_score(5, "Tosca", "Not mentioned in the conversation") == 0.0
    with pytest.raises(ValueError):
        locomo_score(6, "a", "a")


OPTS = ("Not mentioned in the conversation", "Tosca")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("a", OPTS[0]),
        (" B ", OPTS[1]),
        ("(a)", OPTS[0]),
        ("(b)", OPTS[1]),
        ("x", OPTS[1]),  # one character without "a": option (b), as the code
        ("(a) Not mentioned", "(a) not mentioned"),  # any other length: the lower-cased reply
    ],
)
def test_cat5_reply_decoding(reply, expected):
    assert cat5_prediction(reply, OPTS) == expected


def _query(category: int, answer: str | None, **meta) -> Query:
    return Query(
        id=f"locomo-x-qa{category}", kind="open", text="Q?", answer=answer, meta={"category": category, **meta}
    )


def test_cat5_with_locomo_prompt_decodes_the_letter_against_the_seeded_order():
    q = _query(5, "Not mentioned in the conversation", adversarial_answer="Tosca")
    a, b = cat5_options(q)
    letter = "a" if a.startswith("Not mentioned") else "b"
    j = score_locomo(q, letter, "locomo-qa")
    assert j.parse_ok and j.score == 1.0 and j.extra["prediction"] == "Not mentioned in the conversation"
    other = "b" if letter == "a" else "a"
    assert score_locomo(q, other, "locomo-qa").score == 0.0
    # Another method offered no options: a bare letter is just a wrong answer.
    assert score_locomo(q, letter, "zero-shot").score == 0.0


def test_judge_through_the_registry():
    q = _query(4, "Porto")
    plan = PromptPlan(
        method="locomo-qa", steps=[PromptStep(name="answer", messages=[Message(role="user", content="x")])]
    )
    item = JudgeInput(bundle=None, query=q, expression_type=None, plan=plan, response_text=" Porto\n", model_id="m")  # type: ignore[arg-type]
    (j,) = asyncio.run(make_judge("locomo").judge(item, None))  # type: ignore[arg-type]
    assert (j.kind, j.dimension, j.score, j.parse_ok, j.heuristic) == ("locomo", "f1", 1.0, True, False)
    assert j.judge_model == "metric:locomo" and j.extra["category_name"] == "single-hop"
    bad = score_locomo(Query(id="q", kind="open", text="Q?", answer="x"), "x", "zero-shot")
    assert not bad.parse_ok and bad.score is None
