"""The one tokenizer, stopword list and stemmer (core/text/words.py) and that every lexical
feature uses it: BM25, the heuristic judge, evidence mentions and the demo models."""

from __future__ import annotations

import pytest

from core.analysis.mentions import distinctive_words
from core.history.retrieval import TurnUnit, rank_units
from core.providers import demo_text
from core.text import lexical, words


def test_words_keep_compounds_possessives_and_contractions_whole():
    text = "Maya’s batch-cook plan: don't skip the 3 a.m. meal!"
    assert words.words(text) == ["maya's", "batch-cook", "plan", "don't", "skip", "the", "3", "a", "m", "meal"]


@pytest.mark.parametrize(
    "word,stem",
    [
        ("restaurants", "restaurant"),
        ("stories", "story"),
        ("classes", "class"),
        ("glass", "glass"),
        ("bus", "bus"),
        ("analysis", "analysis"),
        ("maya's", "maya"),
        ("screen-shares", "screen-share"),
        ("ties", "tie"),  # too short for ies -> y
    ],
)
def test_stem_folds_plurals_and_possessives_only(word, stem):
    assert words.stem(word) == stem


def test_content_words_drop_stopwords_contractions_negators_and_short_words():
    text = "I'd really prefer quiet restaurants, not loud bars; I'm avoiding 5k runs and it's the UK."
    assert words.content_words(text) == ["quiet", "restaurants", "loud", "bars", "runs"]
    assert words.terms(text) == ["quiet", "restaurant", "loud", "bar", "run"]
    assert words.NEGATORS <= words.STOPWORDS


def test_tokens_keep_positions_among_all_words():
    toks = words.tokens("the sleeper train over a flight")
    assert [(t.surface, t.index) for t in toks] == [("sleeper", 1), ("train", 2), ("flight", 5)]
    assert lexical.phrases("the sleeper train over a flight") == {("sleeper", "train"): "sleeper train"}


def test_every_lexical_feature_reads_the_same_terms():
    """BM25, demo overlap, the heuristic judge and mentions agree on what the words of a text are."""
    a, b = "Loves the quiet restaurants near York", "A quiet restaurant in York? Lovely."
    assert words.content_stems(a) == {"quiet", "restaurant", "near", "york"}
    assert demo_text.overlap(a, b) == pytest.approx(3 / 4)  # all but "near"
    others = ["Night shifts again.", "The rota changed.", "Rain in the forecast.", "Booked the dentist."]
    units = [TurnUnit(f"s{i}", f"s{i}", 0, t, "") for i, t in enumerate([*others, b])]
    assert [r.session_id for r in rank_units(a, units, method="bm25", k=1)] == ["s4"]
    found = distinctive_words({"s1": "night shift", "s2": b}, ["s2"], max_share=1.0)
    assert sorted(stem for stem, _ in found["s2"]) == ["lovely", "quiet", "restaurant", "york"]
