"""The personamem method sends what PersonaMem's inference_standalone_openai.py (@041d82ac) sends,
and its replies are read as that script's ``extract_answer`` reads them: templates equal to the
reference prompt files, and the reading rules of ../shared/reference/personamem/PROTOCOL.md §4 on
hand-made replies (each expected verdict worked out by hand from the protocol text)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.benchmarks.personamem.answers import (
    PERSONAMEM_VERSION,
    options_of,
    predicted_answer,
    score_personamem_choice,
    score_reply,
)
from core.formats import load_path
from core.history.build import build_context
from core.methods import plan, prompts
from core.plan import Message
from tests.conftest import reference

FIXTURE = Path(__file__).parents[1] / "core" / "formats" / "fixtures" / "personamem"
TABLES = [k for k, t in prompts.family("personamem").items() if "official" in t]


@pytest.mark.parametrize("key", TABLES)
def test_template_equals_the_reference_file(key):
    table = prompts.template("personamem", key)
    official = reference("personamem", table["official"]["path"]).read_text(encoding="utf-8")
    assert table["text"] == official
    source = reference("personamem", "SOURCE.txt").read_text(encoding="utf-8")
    assert table["official"]["commit"] in source


def test_the_claude_only_layout_of_inference_py_is_not_the_one_reproduced():
    """inference.py's Claude branch puts the options before the instruction and sends no context;
    the standalone scorer (reproduced) does neither."""
    other = reference("personamem", "prompts", "user_message_claude_inference_py.txt").read_text(encoding="utf-8")
    assert other != prompts.template("personamem", "user_message")["text"]


#: (reply, correct_answer cell, right?) — by PROTOCOL.md §4: options of the text after the LAST
#: <final_answer> (a trailing </final_answer> removed), else of the whole reply; letters in
#: parentheses, else standalone letters a-d (the article "a" counts); right iff exactly {correct}.
CASES = [
    ("<final_answer>(c)", "(c)", True),
    ("I think (c) fits best. <final_answer>(c)</final_answer>", "(c)", True),
    ("(a) is tempting, but <final_answer>(c)", "(c)", True),  # the prediction decides first
    ("<final_answer>(a) or (c)", "(c)", False),  # two letters in both places
    ("The answer is c", "(c)", True),  # no tag: bare letters of the whole reply
    ("c is a good option", "(c)", False),  # the article "a" is a second letter
    ("<final_answer>c", "(c)", True),
    ("<final_answer> (C) ", "(c)", True),  # lower-cased
    ("I like (c). <final_answer>(b)", "(c)", False),  # prediction {b}; whole reply {b, c}
    ("My pick: (c). <final_answer>", "(c)", True),  # empty prediction: the whole reply decides
    ("<final_answer>(c)</final_answer> then <final_answer>(d)", "(c)", False),  # the last tag wins
    ("", "(c)", False),
    ("<final_answer>(d)", " (D) ", True),  # the correct cell is lower-cased and stripped of ( ) and spaces
    ("<final_answer>Option (c)</final_answer>", "(c)", True),
    ("<final_answer>(e)", "(c)", False),  # only a-d are letters
]


@pytest.mark.parametrize(("reply", "correct", "right"), CASES)
def test_extract_answer_rules(reply, correct, right):
    assert score_reply(reply, correct)[0] is right


def test_prediction_and_option_sets():
    assert predicted_answer("x <final_answer> (b) </final_answer>") == "(b)"
    assert predicted_answer("  no tag here  ") == "no tag here"
    assert options_of("A (B) c") == {"b"}  # parentheses win over bare letters
    assert options_of("a b") == {"a", "b"}


def test_the_choice_judge_applies_the_rule_and_calls_a_miss_wrong():
    j = score_personamem_choice("C", "(c)", "<final_answer>(a) or (c)")
    assert (j.score, j.parse_ok, j.prompt_version) == (0.0, True, PERSONAMEM_VERSION)
    assert j.extra["predicted_answer"] == "(a) or (c)"
    assert score_personamem_choice("C", None, "<final_answer>(c)").score == 1.0


def _lena():
    return load_path(FIXTURE).bundles[0]


def test_messages_are_the_cut_context_then_question_instruction_options():
    lena = _lena()
    q = lena.query("q-lena-2")
    p = plan("personamem", build_context(lena, query=q, config="full"), q)
    msgs = p.steps[0].messages
    context = [Message(role=t.role, content=t.content) for s in lena.sessions for t in s.turns][:10]
    instruction = (
        "Find the most appropriate model response and give your final answer (a), (b), (c), or (d) "
        "after the special token <final_answer>."
    )
    assert msgs[:-1] == context
    assert msgs[-1] == Message(role="user", content=f"{q.text}\n\n{instruction}\n\n{q.meta['all_options']}")
    step = p.steps[0]
    assert step.temperature is None and step.max_tokens is None and p.answer_format == "mcq-personamem"


def test_merged_variant_carries_system_text_and_joins_same_roles_with_one_newline():
    lena = _lena()
    q = lena.query("q-lena-1")  # end index 6: system, user, assistant, user, user, assistant
    msgs = plan("personamem-merged", build_context(lena, query=q, config="full"), q).steps[0].messages
    turns = [t.content for t in lena.sessions[0].turns]
    assert [m.role for m in msgs] == ["user", "assistant", "user", "assistant", "user"]
    assert msgs[0].content == f"[System]: {turns[0]}\n{turns[1]}"
    assert msgs[2].content == f"{turns[3]}\n{turns[4]}"
    assert msgs[3].content == turns[5]
    assert msgs[4].content.startswith(q.text + "\n\n")


def test_merged_variant_joins_the_question_to_a_context_that_ends_with_the_user():
    lena = _lena()
    q = lena.query("q-lena-2")  # end index 10: the context ends with a user message
    msgs = plan("personamem-merged", build_context(lena, query=q, config="full"), q).steps[0].messages
    # message 6 is a system message, carried into message 7 (user); message 9 (user) + the question
    assert msgs[-1].role == "user"
    assert msgs[-1].content.startswith("I changed my mind about hostels: I now prefer small guesthouses.\n" + q.text)
    assert any(m.content.startswith("[System]: The user now talks about travel plans.\n") for m in msgs)
