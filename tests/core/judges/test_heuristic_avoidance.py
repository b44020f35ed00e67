"""demo:heuristic tells mentioning a disliked thing in order to avoid it from recommending it, and
says "no target preference" as a verdict, not as a parse failure."""

from __future__ import annotations

import pytest

from core.judges.aggregate import score_summary
from core.judges.heuristic import VERSION, HeuristicJudge, score_heuristic
from core.text import lexical

PREF = "Prefers live video calls over recorded Loom updates."
QUERY = "How should I keep my remote team in sync this quarter?"


@pytest.mark.parametrize(
    "answer",
    [
        "Skip the Loom updates and hold two live video calls a week.",
        "Avoid recorded Loom updates; hold two live video calls a week.",
        "Hold two live video calls a week instead of recorded Loom updates.",
        "Hold two live video calls a week, without any recorded Loom updates.",
        "Hold two live video calls a week. No recorded Loom updates.",
        "Hold two live video calls a week; do not send recorded Loom updates.",
        "Since you dislike recorded Loom updates, hold two live video calls a week.",
        'You said "live video calls over recorded Loom updates", so hold two live video calls a week.',
        "Everything here fits your preference: live video calls over recorded Loom updates. Hold two a week.",
    ],
)
def test_mentioning_the_disliked_thing_to_avoid_it_is_not_a_violation(answer):
    scores = score_heuristic(PREF, QUERY, answer)
    assert scores["alignment"][0] >= 4, scores["alignment"]
    assert "rules out" not in scores["alignment"][1]
    assert "steers away from" in scores["awareness"][1]


@pytest.mark.parametrize(
    "answer",
    [
        "Record a short Loom update every Friday so people watch at their own pace.",
        # Citing the preference does not excuse recommending the disliked thing elsewhere.
        "Since you dislike recorded Loom updates, noted. Still, record a Loom update every Friday.",
        # A negator reaches to the end of its clause only ("skip X and record Y" is still read as
        # skipping Y: a known limit of a lexical smoke test).
        "Skip the Monday meeting. Record Loom updates instead.",
    ],
)
def test_recommending_the_disliked_thing_is_a_violation(answer):
    scores = score_heuristic(PREF, QUERY, answer)
    assert scores["alignment"][0] <= 2, scores["alignment"]
    assert "rules out" in scores["alignment"][1]


def test_a_negative_preference_that_turns_positive_splits_in_two():
    favoured, disfavoured = lexical.split_polarity(
        "Dislikes social plans locked in weeks ahead with bookings or deposits, and would rather keep things "
        "loose and call them on the day, because her rota changes at short notice."
    )
    assert {"loose", "call"} <= favoured
    assert {"booking", "deposit", "locked"} <= disfavoured
    assert "weeks" not in favoured | disfavoured and "rota" not in favoured | disfavoured  # a stopword; the reason


def test_an_opening_since_clause_is_not_the_whole_preference():
    favoured, _ = lexical.split_polarity(
        "Since the reorganisation, updates for Marieke open with a short narrative paragraph and a table."
    )
    assert {"narrative", "paragraph", "table"} <= favoured and "reorganisation" not in favoured


def test_if_you_want_is_filler_not_a_reference_to_the_user():
    scores = score_heuristic(PREF, QUERY, "Hold a weekly meeting. Let me know if you want more detail.")
    assert "never refers to the user's preference" in scores["awareness"][1]
    assert scores["awareness"][0] == 1


def test_no_target_preference_is_a_verdict_not_a_parse_failure():
    judgments = HeuristicJudge().judge_text(None, QUERY, "Hold a weekly live call and keep notes in a shared doc.")
    by = {j.dimension: j for j in judgments}
    assert list(by) == ["awareness", "alignment", "quality"]
    assert all(
        j.parse_ok and j.error is None and j.prompt_version == VERSION == "heuristic-lexical-v6" for j in judgments
    )
    for d in ("awareness", "alignment"):
        assert by[d].score is None and by[d].extra == {"not_applicable": True}
        assert by[d].rationale.startswith("not applicable: no target preference")
    assert by["quality"].score is not None and "words" in by["quality"].rationale


def test_not_applicable_is_neither_a_score_nor_a_failure_in_aggregates():
    judgments = HeuristicJudge().judge_text("", QUERY, "Hold a weekly live call and keep notes in a shared doc.")
    awareness = score_summary(j for j in judgments if j.dimension == "awareness")
    assert (awareness.n, awareness.failed, awareness.mean) == (0, 0, None)
    quality = score_summary(j for j in judgments if j.dimension == "quality")
    assert (quality.n, quality.failed) == (1, 0)
