"""Judge bias audits on hand-made data: position flips, length bias with a length-controlled
score, self-preference, and the model-family table."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from core.analysis.judge_audit import (
    answer_words,
    difference_ci,
    family_of,
    length_audit,
    position_audit,
    self_preference_audit,
)
from core.metrics import wilson_ci

# -- position ------------------------------------------------------------------------------------


def test_a_judge_that_always_answers_a_flips_every_pair():
    audit = position_audit([(1.0, 0.0)] * 4)
    assert (audit.n_pairs, audit.decided, audit.undecided, audit.flips) == (4, 4, 0, 4)
    assert audit.flip_rate == 1.0 and audit.first_shown_wins == 1.0
    assert (audit.flips_to_first, audit.flips_to_second, audit.ties) == (4, 0, 0)
    assert audit.flip_ci == wilson_ci(4, 4) and audit.first_shown_ci == wilson_ci(8, 8)


def test_always_b_flips_every_pair_towards_the_second():
    audit = position_audit([(0.0, 1.0)] * 3)
    assert audit.flip_rate == 1.0 and audit.first_shown_wins == 0.0
    assert (audit.flips_to_first, audit.flips_to_second) == (0, 3)


def test_a_consistent_judge_never_flips_and_is_exactly_fair():
    audit = position_audit([(1.0, 1.0), (0.0, 0.0), (1.0, 1.0)])
    assert audit.flips == 0 and audit.flip_rate == 0.0 and audit.first_shown_wins == 0.5


def test_position_arithmetic_on_a_mixed_hand_example():
    pairs = [(1.0, 1.0), (1.0, 0.0), (1.0, 0.5), (0.5, 0.5), (None, 1.0), (0.0, None)]
    human = [1.0, 1.0, 0.0, 0.5, 1.0, None]
    audit = position_audit(pairs, human)
    assert (audit.n_pairs, audit.decided, audit.undecided) == (6, 4, 2)
    # (1, 0) names different winners, and so does (1, 0.5): a win against a tie.
    assert (audit.flips, audit.flip_rate, audit.flip_ci) == (2, 0.5, wilson_ci(2, 4))
    assert (audit.flips_to_first, audit.flips_to_second) == (1, 0)
    # Order 1 (answer 1 first) winners 1, 1, 1, tie: 3 first-shown wins; order 2 (answer 2 first)
    # winners 1, 2, tie, tie: 1 of 2 non-ties picked the first shown. 4 of 5 non-tie verdicts.
    assert audit.ties == 3 and audit.first_shown_wins == pytest.approx(0.8)
    assert audit.first_shown_ci == wilson_ci(4, 5)
    # Human-labelled decided pairs: 4; consistent AND the human's winner: pair 1 (1) and pair 4 (tie).
    assert audit.human_n == 4 and audit.consistent_and_agrees_with_human == 0.5
    assert audit.human_ci == wilson_ci(2, 4)


def test_nothing_decided_gives_no_rates():
    audit = position_audit([(None, 1.0), (None, None)])
    assert (audit.decided, audit.undecided, audit.flip_rate, audit.first_shown_wins) == (0, 2, None, None)
    assert audit.flip_ci == (None, None) and audit.consistent_and_agrees_with_human is None


def test_human_labels_must_match_the_pairs():
    with pytest.raises(ValueError, match="2 pairs but 1 human"):
        position_audit([(1.0, 1.0), (0.0, 0.0)], [1.0])


# -- length --------------------------------------------------------------------------------------


def test_length_slope_matches_scipy_linregress():
    rng = np.random.default_rng(7)
    lengths = rng.integers(20, 600, size=60)
    scores = 2.5 + 0.004 * lengths + rng.normal(0, 0.6, size=60)
    models = rng.choice(["m1", "m2", "m3"], size=60)
    audit = length_audit(zip(models.tolist(), scores.tolist(), lengths.tolist()))
    ref = stats.linregress(lengths / 100, scores)
    half = stats.t.ppf(0.975, 58) * ref.stderr
    assert audit.n == 60 and audit.reason is None
    assert audit.slope == pytest.approx(ref.slope) and audit.intercept == pytest.approx(ref.intercept)
    assert audit.slope_ci == pytest.approx((ref.slope - half, ref.slope + half))
    assert audit.r == pytest.approx(ref.rvalue) and audit.p_value == pytest.approx(ref.pvalue)
    assert audit.mean_length == pytest.approx(lengths.mean())
    assert [m.model for m in audit.models] == ["m1", "m2", "m3"] and sum(m.n for m in audit.models) == 60


def test_length_controlled_scores_equal_when_a_model_only_writes_longer():
    # Same judge behaviour for both models: 1 + 0.8 per 100 words; "long" just writes longer answers.
    short = [("short", 1 + 0.8 * n / 100, n) for n in (100, 150, 200, 250)]
    long = [("long", 1 + 0.8 * n / 100, n) for n in (400, 450, 500, 550)]
    audit = length_audit(short + long)
    by = {m.model: m for m in audit.models}
    assert by["long"].mean_score - by["short"].mean_score == pytest.approx(2.4)
    assert by["long"].lc_score == pytest.approx(by["short"].lc_score)
    assert by["short"].lc_score == pytest.approx(1 + 0.8 * 3.25)  # at the overall mean length, 325 words
    assert audit.lc_slope == pytest.approx(0.8) and audit.lc_reason is None
    assert (by["short"].mean_length, by["long"].n) == (175.0, 4)


def test_length_controlled_scores_keep_a_real_difference():
    # "better" scores 1 point higher at every length, and its answers are also longer.
    a = [("plain", 2 + 0.5 * n / 100, n) for n in (100, 200, 300)]
    b = [("better", 3 + 0.5 * n / 100, n) for n in (300, 400, 500)]
    by = {m.model: m for m in length_audit(a + b).models}
    assert by["better"].lc_score - by["plain"].lc_score == pytest.approx(1.0)
    assert by["better"].mean_score - by["plain"].mean_score == pytest.approx(2.0)


def test_length_degenerate_cases_say_why():
    few = length_audit([("m", 3.0, 100), ("m", 4.0, 200)])
    assert few.slope is None and few.slope_ci == (None, None) and "at least 3" in few.reason
    flat = length_audit([("a", 3.0, 100), ("a", 4.0, 100), ("b", 5.0, 100)])
    assert flat.slope is None and "same length" in flat.reason
    assert flat.lc_slope is None and "same length" in flat.lc_reason
    assert {m.model: m.lc_score for m in flat.models} == {"a": None, "b": None}
    confounded = length_audit([("a", 3.0, 100), ("a", 3.5, 100), ("b", 5.0, 300), ("b", 4.0, 300)])
    assert confounded.slope is not None and confounded.lc_slope is None
    assert "does not vary within any model" in confounded.lc_reason
    empty = length_audit([])
    assert (empty.n, empty.slope, empty.mean_length, empty.models) == (0, None, None, ())


def test_answer_words_counts_words():
    assert answer_words("Short live calls, then written notes.") == 6


# -- self-preference -----------------------------------------------------------------------------


def test_self_preference_on_a_hand_example():
    rows = [
        ("openai:gpt-4o", 5.0, 4.0),
        ("openai:o3-mini", 4.0, 4.0),
        ("anthropic:claude-3-haiku", 3.0, 3.0),
        ("vllm:meta-llama/Llama-3.1-8B-Instruct", 2.0, None),
        ("litellm:anthropic/claude-3-haiku", 4.0, 4.0),
    ]
    audit = self_preference_audit("gpt", rows)
    assert (audit.n_own, audit.n_other, audit.mean_own, audit.mean_other) == (2, 3, 4.5, 3.0)
    assert audit.difference == pytest.approx(1.5) and audit.reason is None
    low, high = audit.difference_ci
    assert low is not None and high is not None and low <= 1.5 <= high
    assert self_preference_audit("gpt", rows).difference_ci == audit.difference_ci  # seeded
    # judge − human: own (1, 0) → 0.5, others (0, 0) → 0: half a point humans do not see.
    assert (audit.human_n_own, audit.human_n_other) == (2, 2)
    assert (audit.gap_own, audit.gap_other, audit.gap_difference) == (0.5, 0.0, 0.5)
    assert audit.gap_difference_ci == difference_ci([1.0, 0.0], [0.0, 0.0])
    assert audit.human_reason is None


def test_self_preference_with_one_side_empty_says_why():
    mine = self_preference_audit("gpt", [("openai:gpt-4o", 5.0, None), ("openai:o1", 4.0, None)])
    assert mine.difference is None and mine.difference_ci == (None, None)
    assert mine.reason == "every answer is from the judge's family (gpt)"
    assert mine.mean_own == 4.5 and mine.mean_other is None
    assert mine.gap_difference is None and mine.human_reason == "no human-scored answers"
    theirs = self_preference_audit("claude", [("openai:gpt-4o", 5.0, 4.0)])
    assert theirs.reason == "no answer is from the judge's family (claude)"


def test_difference_interval_edge_cases():
    assert difference_ci([1.0], [0.0, 1.0]) == (None, None)
    assert difference_ci([2.0, 2.0], [1.0, 1.0, 1.0]) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("openai:gpt-4o-mini", "gpt"),
        ("openai:o3-mini", "gpt"),
        ("openai:o1", "gpt"),
        ("anthropic:claude-sonnet-4-5", "claude"),
        ("litellm:anthropic/claude-3-haiku", "claude"),
        ("vllm:meta-llama/Llama-3.1-8B-Instruct", "llama"),
        ("ollama:llama3.1:8b", "llama"),
        ("imported:mistral8x7b", "mistral"),
        ("together:mistralai/Mixtral-8x7B-Instruct", "mistral"),
        ("ollama:qwen3", "qwen"),
        ("google:gemini-2.5-flash", "gemini"),
        ("ollama:gemma3:4b", "gemma"),
        ("demo:oracle", "demo"),
        ("demo:heuristic", "demo"),
        ("vllm:some-org/Foo-Bar-7B", "foo"),
    ],
)
def test_family_of(model_id, family):
    assert family_of(model_id) == family
