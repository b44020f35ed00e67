"""PrefEval MCQ answers: PrefEval's own parser (utils_mcq.extract_choice) and its scoring, where a
reply it cannot read is wrong, not excluded. Other families keep prefscope's parser."""

from __future__ import annotations

import pytest

from core.benchmarks.prefeval.answers import MCQ_ANSWER_FORMAT as PREFEVAL_MCQ
from core.benchmarks.prefeval.answers import parse_prefeval_choice
from core.judges.choice import ChoiceJudge, prefill_sent, score_choice
from core.model import Query, UserBundle
from core.plan import Message, PromptPlan, PromptStep
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel

# (reply after the prefill, letter PrefEval reads) — design §2.3, checked against bs4 4.15
PREFILLED = [
    ("B</choice>", "B"),
    ("B", "B"),
    ("<choice>B</choice>", "B"),  # the model repeats the tag: nested element, its single string
    (" b", None),  # case-sensitive
    ("Based on your taste I choose C", "B"),  # first capital A-D anywhere: "Based"
    ("B. Gemma</choice> extra", "B"),
    ("\n<b>B</b>", None),  # two children: no single string
    ("[B]</choice> because", "B"),
    ("A &amp; B", "A"),
    ("<choice>B</choice> because <b>x</b>", None),
    ("", None),
    ("None of these", None),
]


@pytest.mark.parametrize(("reply", "letter"), PREFILLED)
def test_parser_with_prefill(reply, letter):
    assert parse_prefeval_choice(reply, prefilled=True) == letter


@pytest.mark.parametrize(
    ("reply", "letter"),
    [("<choice>C</choice>", "C"), ("C", None), ("I pick <choice>D", "D"), ("<CHOICE>A</CHOICE>", "A")],
)
def test_parser_without_prefill_needs_the_tag(reply, letter):
    assert parse_prefeval_choice(reply, prefilled=False) == letter


def bs4_reference(reply: str, prefilled: bool) -> str | None:
    """extract_choice as the official code writes it, for a differential check."""
    import re

    from bs4 import BeautifulSoup

    element = BeautifulSoup(("<choice>" + reply) if prefilled else reply, "html.parser").find("choice")
    if element is None or element.string is None:
        return None
    found = re.search(r"[ABCD]", element.string)
    return found.group(0) if found else None


@pytest.mark.parametrize(
    "reply", [r for r, _ in PREFILLED] + ["<choice>\nD\n</choice>", "&lt;choice&gt;A", "<choice><i>C</i></choice>"]
)
def test_parser_equals_the_official_reading(reply):
    for prefilled in (True, False):
        assert parse_prefeval_choice(reply, prefilled) == bs4_reference(reply, prefilled)


def mcq_bundle(priya) -> UserBundle:
    q = Query(id="p1-pe", kind="mcq", text="Pick one", options=["a", "b", "c", "d"], answer="C", preference_id=None)
    return priya.model_copy(update={"queries": [*priya.queries, q]})


def plan(answer_format: str, prefill: str | None = "<choice>") -> PromptPlan:
    step = PromptStep(name="answer", messages=[Message(role="user", content="q")], prefill=prefill)
    return PromptPlan(method="prefeval-zero-shot", steps=[step], answer_format=answer_format)


async def judge(bundle, reply: str, fmt: str, model: str, prefill: str | None = "<choice>"):
    item = item_for(bundle, "p1-pe", reply, model=model)
    item = type(item)(item.bundle, item.query, item.expression_type, plan(fmt, prefill), reply, model)
    [j] = await ChoiceJudge().judge(item, ScriptedJudgeModel(lambda s, m: ""))
    return j


@pytest.mark.parametrize(
    ("reply", "model", "score", "parsed"),
    [
        ("C</choice>", "anthropic:claude-sonnet-4-5", 1.0, "C"),
        ("A</choice>", "anthropic:claude-sonnet-4-5", 0.0, "A"),
        ("c", "anthropic:claude-sonnet-4-5", 0.0, None),  # unread: WRONG, not excluded
        ("C", "openai:gpt-4o", 0.0, None),  # no prefill sent to OpenAI: a bare letter has no <choice>
        ("<choice>C</choice>", "openai:gpt-4o", 1.0, "C"),
        ("C</choice>", "replay:anthropic:claude-sonnet-4-5", 1.0, "C"),
    ],
)
async def test_prefeval_scoring_counts_unparsed_as_wrong(priya, reply, model, score, parsed):
    j = await judge(mcq_bundle(priya), reply, PREFEVAL_MCQ, model)
    assert j.score == score and j.parse_ok and j.extra["parsed"] == parsed
    assert j.prompt_version == "prefeval-choice-v1" and j.raw == reply
    if parsed is None:
        assert "wrong, as PrefEval" in j.rationale


async def test_other_families_keep_the_heuristic_parser_and_exclude_failures(priya):
    j = await judge(mcq_bundle(priya), "The answer is C.", "mcq", "anthropic:claude-sonnet-4-5")
    assert j.score == 1.0 and j.prompt_version == "choice-parser-v1"
    j = await judge(mcq_bundle(priya), "no idea", "mcq", "anthropic:claude-sonnet-4-5")
    assert not j.parse_ok and j.score is None
    assert score_choice("mcq", 4, "C", "no idea").parse_ok is False


def test_prefill_sent_follows_the_provider_and_the_plan():
    assert prefill_sent(plan(PREFEVAL_MCQ), "anthropic:claude-sonnet-4-5")
    assert not prefill_sent(plan(PREFEVAL_MCQ), "openai:gpt-4o")
    assert not prefill_sent(plan(PREFEVAL_MCQ), "demo:oracle")
    assert not prefill_sent(plan(PREFEVAL_MCQ, prefill=None), "anthropic:claude-sonnet-4-5")
