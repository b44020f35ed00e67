"""The hand-made LoCoMo / mem0 examples of ../shared/reference/formats/locomo_mem0/ (scored there
with LoCoMo's and mem0's own code): they import, and prefscope's LoCoMo F1 (with LoCoMo's stored
rounding) and mem0 F1 / BLEU-1 reproduce every recorded score; mem0's judge prompt is verbatim."""

from __future__ import annotations

import json

import pytest

from core.benchmarks.locomo import results_locomo, results_mem0
from core.benchmarks.locomo.judge_mem0 import judge_prompt
from core.benchmarks.locomo.metrics import locomo_score
from core.benchmarks.locomo.metrics_mem0 import matches_recorded, mem0_bleu1, mem0_f1
from core.judges.templates import template
from tests.conftest import reference


def _example(name: str):
    return reference("formats", "locomo_mem0", "examples", name)


def test_locomo_example_predictions_reproduce_their_recorded_f1():
    result = results_locomo.load(_example("locomo_mini_qa.json"))
    assert len(result.answers) == 8  # 4 questions x 2 model keys
    assert {a.model for a in result.answers} == {"gpt-4o-mini", "gpt-4o-mini_dialog_top_5"}
    assert any("agrees with the recorded _f1" in n for n in result.notes)  # _stats.json beside it
    for a in result.answers:
        f1 = next(r for r in a.recorded if r.dimension == "f1")
        gold = next(q.answer for q in a.fallback.queries if q.id == a.query_id)  # type: ignore[union-attr]
        category = f1.meta["category"]
        assert matches_recorded(f1.score, locomo_score(category, a.answer, gold), category), a.record_label
    # by hand: "A beagle named Pepper" vs "a beagle" -> [beagl, name, pepper] vs [beagl]: 0.5
    first = result.answers[0]
    assert (first.answer, first.recorded[0].score) == ("A beagle named Pepper", 0.5)


@pytest.mark.parametrize(
    "name", ["mem0_evaluation_metrics.json", "mem0_search_results.json", "mem0_llm_judge_results.json"]
)
def test_mem0_example_files_import(name):
    result = results_mem0.load(_example(name))
    raw = json.loads(_example(name).read_text(encoding="utf-8"))
    assert len(result.answers) == sum(len(v) for v in raw.values())


def test_mem0_example_scores_are_reproduced_by_mem0_metrics():
    result = results_mem0.load(_example("mem0_evaluation_metrics.json"))
    # by hand, record 1: {he, ran, it, on, 19, may, 2023, the, day, before, their, chat} vs {19, may, 2023}:
    # P 3/12, R 1 -> 0.4
    hand = {"What kind of dog did Ana adopt?": 0.5, "When did Ben run the half marathon?": 0.4}
    for a in result.answers:
        gold = next(q.answer for q in a.fallback.queries if q.id == a.fallback_query_id)  # type: ignore[union-attr]
        scores = {r.kind: r.score for r in a.recorded}
        assert mem0_f1(a.answer, gold) == pytest.approx(scores["mem0-f1"])
        assert mem0_bleu1(a.answer, gold) == pytest.approx(scores["mem0-bleu1"])
        assert scores["mem0"] == 1.0
        if a.query_text in hand:
            assert scores["mem0-f1"] == pytest.approx(hand[a.query_text])


def test_mem0_judge_prompt_is_verbatim():
    raw = reference("formats", "locomo_mem0", "mem0_llm_judge_prompt.txt").read_text(encoding="utf-8")
    begin, end = "# ----- BEGIN PROMPT -----\n", "# ----- END PROMPT -----"
    text = raw[raw.index(begin) + len(begin) : raw.index(end)]
    t = template("mem0", "accuracy")
    assert t.fields["text"] == text and t.verbatim and t.fields["licence"] == "Apache-2.0"
    assert judge_prompt("q", "g", "a") == text.format(question="q", gold_answer="g", generated_answer="a")
