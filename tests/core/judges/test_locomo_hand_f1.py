"""The ``locomo`` judge against F1 values worked out by hand from PROTOCOL.md §3 (normalise: drop
commas, lower-case, drop punctuation, articles/"and" -> space; Porter-stem each token; F1 of the
multiset overlap; category 1: mean over gold parts of the best part-F1; category 3: gold before the
first ';'; category 5: 1 iff the prediction says "not mentioned" / "no information available").
The expected numbers are written as fractions, never computed by the code under test."""

from __future__ import annotations

from fractions import Fraction

import pytest

from core.benchmarks.locomo.judge import score_locomo
from core.model import Query

CASES = [
    # (category, gold, reply, expected F1)
    # pred "she went to porto" = 4 tokens, gold "porto" = 1; overlap 1: P 1/4, R 1, F1 = 2(1/4)/(5/4) = 2/5
    (4, "Porto", "She went to Porto.", Fraction(2, 5)),
    # pred "The cats" -> "cats" ("the" dropped) -> stem "cat"; gold "cat": P = R = 1
    (4, "cat", " The cats\n", Fraction(1)),
    # pred "run run" -> stems [run, run]; gold "running" -> [run]; overlap min(2, 1) = 1: P 1/2, R 1, F1 = 2/3
    (4, "running", "run run", Fraction(2, 3)),
    # both normalise to "7 may 2023" (the comma is deleted): 1
    (2, "7 May, 2023", "7 May 2023", Fraction(1)),
    # pred [may, 2023], gold [19, may, 2023]; overlap 2: P 1, R 2/3, F1 = 2(2/3)/(5/3) = 4/5
    (2, "19 May, 2023", "May 2023", Fraction(4, 5)),
    # category 1, parts split on ',': gold Rome -> best 1 (pred part Rome), Paris -> 1, Oslo -> 0; mean 2/3
    (1, "Rome, Paris, Oslo", "Paris, Rome", Fraction(2, 3)),
    # category 1: gold "hiking" [hike] vs pred part "hiking in Alps" [hike, in, alp]: P 1/3, R 1, F1 1/2
    # (vs "running" [run]: 0), so best 1/2; gold "swimming" [swim] matches no part: 0; mean (1/2 + 0)/2 = 1/4
    (1, "hiking, swimming", "hiking in Alps, running", Fraction(1, 4)),
    # category 3: gold before ';' is "teacher"; pred "a teacher" -> "teacher" ("a" dropped): 1
    (3, "teacher; she likes kids", "a teacher", Fraction(1)),
    # category 3: the alternative after ';' does not count: pred [she, like, kid] vs gold [teacher]: 0
    (3, "teacher; she likes kids", "she likes kids", Fraction(0)),
    # category 5 (adversarial): the gold is not used; "not mentioned" in the lower-cased prediction: 1
    (5, "Not mentioned in the conversation", "Not mentioned in the conversation.", Fraction(1)),
    # category 5: answering with the trap answer scores 0
    (5, "Not mentioned in the conversation", "Tosca", Fraction(0)),
    # category 5: "no information available" also counts: 1
    (5, "Not mentioned in the conversation", "No information available", Fraction(1)),
]


@pytest.mark.parametrize(("category", "gold", "reply", "expected"), CASES)
def test_locomo_judge_f1_matches_the_hand_computation(category, gold, reply, expected):
    query = Query(id=f"locomo-h-qa{category}", kind="open", text="Q?", answer=gold, meta={"category": category})
    j = score_locomo(query, reply, "zero-shot")
    assert j.parse_ok and j.judge_model == "metric:locomo"
    assert j.score == pytest.approx(float(expected), abs=1e-12)


def test_per_category_and_overall_of_the_hand_cases():
    """LoCoMo's aggregation of the cases above, also by hand: category 4 = (2/5 + 1 + 2/3)/3 = 31/45,
    2 = (1 + 4/5)/2 = 9/10, 1 = (2/3 + 1/4)/2 = 11/24, 3 = (1 + 0)/2 = 1/2, 5 = (1 + 0 + 1)/3 = 2/3;
    overall (micro) = the sum of all 12 scores / 12 = (467/60)/12 = 467/720."""
    total = sum((c[3] for c in CASES), Fraction(0))
    # fractions 2/5 + 2/3 + 4/5 + 2/3 + 1/4 = (24 + 40 + 48 + 40 + 15)/60 = 167/60, plus five 1s = 467/60
    assert total == Fraction(467, 60)
    scores = {}
    for category, gold, reply, _ in CASES:
        q = Query(id="q", kind="open", text="Q?", answer=gold, meta={"category": category})
        scores.setdefault(category, []).append(score_locomo(q, reply, "zero-shot").score)
    means = {c: sum(s) / len(s) for c, s in scores.items()}
    assert means == pytest.approx({4: 31 / 45, 2: 9 / 10, 1: 11 / 24, 3: 1 / 2, 5: 2 / 3}, abs=1e-12)
    assert sum(sum(s) for s in scores.values()) / len(CASES) == pytest.approx(467 / 720, abs=1e-12)
