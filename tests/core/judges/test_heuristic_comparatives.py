"""A preference that says "A far more than B" dislikes B: recommending B is a violation, not a match."""

from __future__ import annotations

from core.judges.heuristic import score_heuristic
from core.text import lexical

PREF = (
    "When travelling, enjoys technical and railway museums, broadcasting heritage and flea markets — places "
    "with old machines and objects with a history — far more than palaces, art galleries or shopping streets."
)
QUERY = "I'll have two free days in Vienna in April. What should I do?"


def test_more_than_splits_a_preference():
    favoured, disfavoured = lexical.split_polarity(PREF)
    assert {"railway", "museum", "flea", "market"} <= favoured
    assert {"palace", "gallery", "shopping"} <= disfavoured and not ({"palace", "gallery"} & favoured)


def test_recommending_the_less_liked_side_is_a_violation():
    answer = "Spend a morning at Schönbrunn Palace, then the art galleries of the Belvedere, then go shopping."
    scores = score_heuristic(PREF, QUERY, answer)
    assert scores["alignment"][0] <= 2 and "rules out" in scores["alignment"][1]
    liked = score_heuristic(PREF, QUERY, "Spend a day at the railway museum, then browse the flea market.")
    assert liked["alignment"][0] > scores["alignment"][0]
