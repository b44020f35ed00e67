"""Judge outputs as real judges write them: every malformed one is a failure with a reason and
the text kept by the caller, never a silent number."""

from __future__ import annotations

import pytest

from core.judges.parsing import first_json, parse_label, parse_score

GOOD = [
    ('{"score": 4, "rationale": "Mentions the sleeper train."}', 4, "Mentions the sleeper train."),
    (
        'Here is my evaluation.\n```json\n{"score": 2, "rationale": "Suggests a flight."}\n```\nHope this helps!',
        2,
        "Suggests a flight.",
    ),
    ('Sure! {"rationale": "Centred on live calls", "score": "5"}', 5, "Centred on live calls"),
    ("Score: 3\nRationale: generic advice that fits anyone.", 3, None),
    ("**Score:** 4/5 — integrates the preference well.", 4, None),
    ("I would rate it 2 out of 5 because it ignores the taboo.", 2, None),
    ("Score (1-5): 5", 5, None),
    ("On a 1-5 scale I give it a 1.", 1, None),
    ("4", 4, None),
    ('{"score": 4, "rationale": "ok",}', 4, "ok"),  # trailing comma repaired
]


@pytest.mark.parametrize(("text", "value", "rationale"), GOOD)
def test_well_formed_outputs_parse(text, value, rationale):
    p = parse_score(text, 1, 5)
    assert p.ok, p.error
    assert p.value == value
    if rationale is not None:
        assert p.rationale == rationale


BAD = [
    ("The answer is decent and mostly follows the preference.", "no score found"),
    ('{"score": 7, "rationale": "excellent"}', "outside the 1–5 scale"),
    ("Score: 0", "outside the 1–5 scale"),
    ("I'd say the score is 3-4 since it is partly aligned.", "range"),
    ('{"score": "3-4"}', "range"),
    ('Score: 3\n\nOn reflection:\n```json\n{"score": 4, "rationale": "x"}\n```', "two different scores"),
    ("Awareness: score 2. Alignment score: 5.", "two different scores"),
    ("I'm sorry, but I can't evaluate responses about personal preferences.", "refused"),
    ("Rating: 8/10", "different scale"),
    ('{"score": 3.5, "rationale": "between"}', "not a whole number"),
    ('{"score": null, "rationale": "cannot tell"}', "null"),
    ("", "empty"),
]


@pytest.mark.parametrize(("text", "reason"), BAD)
def test_malformed_outputs_fail_with_a_reason(text, reason):
    p = parse_score(text, 1, 5)
    assert not p.ok
    assert p.value is None
    assert reason in p.error


def test_cupid_style_heading_score_on_a_1_to_10_scale():
    text = (
        "### Evaluation of AI Assistant's Response\n\n1. **Checklist item 1:** covers 2/3 of the asks.\n\n"
        "### Evaluation Score\n\n7"
    )
    p = parse_score(text, 1, 10)
    assert p.ok and p.value == 7


def test_labels_from_json_prose_and_conflicts():
    yn = {"yes": ("y", "true"), "no": ("n", "false")}
    assert (
        parse_label('Reasoning first. {"answer": "Yes", "explanation": "it says so"}', yn, key="answer").value == "yes"
    )
    assert parse_label("Answer: no", yn, key="answer").value == "no"
    both = parse_label("Answer: yes. Actually, Answer: no.", yn, key="answer")
    assert not both.ok and "several different labels" in both.error
    unknown = parse_label('{"answer": "maybe"}', yn, key="answer")
    assert not unknown.ok and "not one of" in unknown.error


def test_first_json_skips_objects_without_the_keys():
    text = 'Example: {"foo": 1}. Result: {"checklist": ["a", "b"]}'
    assert first_json(text, "checklist") == {"checklist": ["a", "b"]}
