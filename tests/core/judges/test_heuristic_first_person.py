"""demo:heuristic reads preferences as imported benchmarks write them (issue 36): PrefEval's first-person
"I strictly avoid X" / "I'm allergic to X", CUPID's "…, with no X", and an answer that waves a wanted
thing away. Before, "I strictly avoid restaurants that serve gluten" counted "gluten" as wanted, so an
answer recommending gluten scored as well as one that avoided it."""

from __future__ import annotations

import pytest

from core.judges.heuristic import score_heuristic
from core.text import lexical

QUESTION = "What are some must-try local dishes in Rome?"


@pytest.mark.parametrize(
    "preference, ruled_out",
    [
        ("I strictly avoid restaurants that serve foods containing gluten.", {"gluten"}),
        ("I strongly dislike eating spicy food.", {"spicy"}),
        ("I'm allergic to peanuts.", {"peanut"}),
        ("I have a severe peanut and tree nut allergy.", {"peanut", "nut"}),
        ("I follow a strict vegan diet and refuse to consume any animal-derived products.", {"animal-derived"}),
        ("Emails to Dana lead with decisions, then open questions, with no exclamation marks.", {"exclamation"}),
    ],
)
def test_what_a_preference_rules_out_is_disfavoured(preference, ruled_out):
    favoured, disfavoured = lexical.split_polarity(preference)
    assert ruled_out <= disfavoured and not ruled_out & favoured, (favoured, disfavoured)


def test_an_aversion_to_a_comparison_leaves_its_other_side_neutral():
    """The places ruled out "prioritise trends over quality": quality is neither liked nor ruled out."""
    favoured, disfavoured = lexical.split_polarity(
        "I have a strong aversion to restaurants that prioritize trendy dining over quality food."
    )
    assert "trendy" in disfavoured and "quality" not in favoured | disfavoured


def test_recommending_the_ruled_out_thing_scores_below_avoiding_it():
    pref = "I strictly avoid restaurants that serve foods containing gluten due to a severe gluten intolerance."
    against = score_heuristic(pref, QUESTION, "Make a point of trying foods containing gluten; fresh pasta is a must.")
    follows = score_heuristic(pref, QUESTION, "Since you avoid gluten, skip foods containing gluten and ask first.")
    assert against["alignment"][0] == 1 and "rules out" in against["alignment"][1]
    assert follows["alignment"][0] >= 4


def test_waving_a_wanted_thing_away_is_a_conflict():
    pref = "I follow a strict halal diet."
    waved = score_heuristic(pref, QUESTION, "There is no need to stick to a strict halal diet; most people don't.")
    kept = score_heuristic(pref, QUESTION, "Pick places that fit a strict halal diet, and ask about the kitchen.")
    assert waved["alignment"][0] < 3 < kept["alignment"][0]
