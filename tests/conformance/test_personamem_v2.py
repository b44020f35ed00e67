"""PersonaMem-v2's parsers against the rules of ../shared/reference/personamem-v2/PROTOCOL.md, with
verdicts worked out by hand: the MCQ letter extraction (§3.5, its 11 ordered patterns and their
IGNORECASE quirks), option-text scoring, the score judge's reading of \\boxed{} and its "do not"
template choice, and the yes/no judge's reading and 3-vote majority (§4). The prompts are ours
(no licence): their tables name the official strings by length and SHA-256 as the notes give them."""

from __future__ import annotations

import pytest

from core.benchmarks.personamem_v2.answers import PATTERNS, extract_final_answer, is_correct
from core.benchmarks.personamem_v2.judge import boxed_template_key, extract_judge_decision, majority, parse_yes_no
from core.benchmarks.personamem_v2.rows import distance_bin, parse_user_query
from core.judges.templates import template
from core.methods import prompts
from tests.conftest import reference


@pytest.mark.parametrize(
    "reply,letter",
    [
        ("Reasoning... Final Answer: B", "B"),  # pattern 3
        ("final answer: c", "C"),  # upper-cased
        ("I pick $\\boxed{D}$ over Final Answer: A", "D"),  # pattern 1 before pattern 3
        ("\\boxed{a}", "A"),  # pattern 2, lower-case letter matched through IGNORECASE
        ("Answer: the second one", "T"),  # pattern 5 takes the T of "the" (the documented quirk)
        ("Final Answer: **B**", ""),  # '*' is not a letter: patterns 3-6 fail, nothing else matches
        ("Final Answer: **B**\nB.", "B"),  # ... and falls through to pattern 11
        ("The final answer is $\\boxed{C}$", "C"),  # pattern 1 ($\boxed{C}$) already matches
        ("The final answer is C", "C"),  # pattern 8
        ("so the answer is D, clearly", "D"),  # pattern 10
        ("Options considered.\nA.\n", "A"),  # pattern 11: a lone letter and a full stop
        ("A. is tempting but wrong", ""),  # pattern 11 needs only whitespace after the dot
        ("I cannot decide.", ""),
        ("", ""),
    ],
)
def test_extraction_verdicts_worked_by_hand(reply, letter):
    assert extract_final_answer(reply) == letter


def test_there_are_eleven_patterns_each_ignorecase_and_multiline():
    import re

    assert len(PATTERNS) == 11
    assert all(p.flags & re.IGNORECASE and p.flags & re.MULTILINE for p in PATTERNS)


def test_scoring_compares_option_texts_not_letters():
    options = ["red", "blue", "red"]
    assert is_correct("A", options, "red") and is_correct("C", options, "red")  # a duplicate text counts
    assert not is_correct("B", options, "red")
    assert not is_correct("", options, "red") and not is_correct("D", options, "red")  # empty, out of range


@pytest.mark.parametrize(
    "reply,score,how",
    [
        ("Good fit. \\boxed{0.8}", 0.8, "boxed"),
        ("\\boxed{1.5}", 1.0, "boxed"),  # clamped
        ("$\\boxed{0.25}$ and later \\boxed{0.9}", 0.25, "boxed"),  # the first match wins
        ("\\boxed{\\text{0.6}}", 0.6, "boxed"),
        ("Score: 0.7", 0.7, "score"),
        ("Score: 7 out of 10", 0.0, "unparsed"),  # outside [0, 1]: not accepted, nothing else: 0.0
        ("rating 0.4", 0.4, "rating"),
        ("I'd say 0.9 / 1.0", 0.9, "fraction"),
        ("no number at all", 0.0, "unparsed"),
    ],
)
def test_boxed_judge_reading_worked_by_hand(reply, score, how):
    assert extract_judge_decision(reply) == (score, how)


def test_do_not_preferences_get_the_negative_template():
    assert boxed_template_key("Do not mention my divorce") == "boxed_negative"
    assert boxed_template_key("do NOT bring up work") == "boxed_negative"
    assert boxed_template_key("Prefers tea; do not offer coffee") == "boxed_positive"  # only at the start


@pytest.mark.parametrize(
    "reply,yes",
    [
        ("It aligns. \\boxed{Yes}", True),
        ("\\boxed{no} even though yes, partly", False),  # boxed first
        ("Yes, it does.", True),  # starts with yes
        ("No. The reply ignores it.", False),
        ("The reply fits the preference well. So yes.", True),  # first sentence with exactly one of yes/no
        ("Hard to say. Neither yes nor no. Maybe.", False),  # both words in one sentence: read on, nothing: no
        ("Unclear.", False),
    ],
)
def test_yes_no_reading_worked_by_hand(reply, yes):
    assert parse_yes_no(reply)[0] is yes


def test_majority_of_three():
    assert majority([True, True, False]) and not majority([True, False, False])


def test_user_query_cell_is_read_as_a_literal_never_evaluated():
    assert parse_user_query("{'role': 'user', 'content': \"What's new?\"}") == {
        "role": "user",
        "content": "What's new?",
    }
    assert parse_user_query('{"role": "user", "content": "hi"}')["content"] == "hi"
    # code is not run: a call is not a literal, so the cell falls back to its text
    assert parse_user_query("__import__('os').getcwd()")["content"] == "__import__('os').getcwd()"


@pytest.mark.parametrize(
    "value,label", [(0, "0-1023"), (1023, "0-1023"), (1024, "1024-2047"), (2100.0, "2048-3071"), (None, "(none)")]
)
def test_distance_bins(value, label):
    assert distance_bin(value) == label


def test_our_prompts_are_marked_ours_and_name_the_official_strings_of_the_notes():
    notes = reference("personamem-v2", "PROTOCOL.md").read_text(encoding="utf-8")
    fam = prompts.family("personamem-v2")
    for key in ("recall_sentence", "mcq_header", "mcq_footer"):
        t = fam[key]
        assert not t["verbatim"] and t["source"].startswith("ours, after the official prompt")
        assert t["official"]["sha256"] in notes and f"{t['official']['length']} characters" in notes
    assert fam["recall_sentence"]["text"].startswith(" ")
    assert fam["mcq_header"]["text"].endswith("\n\n") and fam["mcq_footer"]["text"].startswith("\n\n")
    assert "Final Answer: [Letter]" in fam["mcq_footer"]["text"]
    for key in ("boxed_positive", "boxed_negative", "vote_narrow"):
        t = template("personamem-v2", key)
        assert not t.verbatim and t.source.startswith("ours, after the official prompt")
    assert "{related_conversation_snippet}" in template("personamem-v2", "vote_narrow").fields["text"]
