"""LoCoMo prediction files and mem0 results files (core.benchmarks.locomo.results_locomo /
results_mem0), mem0's metrics and judge reading, and LoCoMo's stored rounding: on hand-made
fixtures (tests/fixtures/locomo_mem0/), every expected number computed by hand in the comments."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from core.benchmarks.locomo import results_locomo, results_mem0
from core.benchmarks.locomo.judge_mem0 import judge_prompt, read_label, score_bleu1, score_f1
from core.benchmarks.locomo.metrics import locomo_score
from core.benchmarks.locomo.metrics_mem0 import locomo_round, matches_recorded, mem0_bleu1, mem0_f1, mem0_tokens
from core.formats.errors import FormatError
from core.model import Query
from core.results import detect_result_format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mem0"


# -- LoCoMo's rounding ---------------------------------------------------------------------------


def test_locomo_round_is_numpy_for_category_1_and_python_otherwise():
    # 0.2625 is stored as 0.26250000000000001: Python's round (correct decimal rounding) gives 0.263;
    # category 1's score is an np.float64 (np.mean), whose round scales and rounds half to even: 0.262.
    assert round(0.2625, 3) == 0.263
    assert locomo_round(0.2625, 1) == 0.262
    assert locomo_round(0.2625, 2) == 0.263
    assert locomo_round(2 / 3, 4) == 0.667 and locomo_round(1, 5) == 1.0
    assert matches_recorded(0.262, 0.2625, 1) and not matches_recorded(0.263, 0.2625, 1)
    assert matches_recorded(0.263, 0.2625, 3)


# -- mem0's metrics --------------------------------------------------------------------------------


def test_mem0_f1_is_a_token_set_f1_without_stemming():
    assert mem0_tokens("He's here, at 10:30. Yes!") == ["he's", "here", "at", "10:30", "yes"]
    # {mia, plays, the, violin} vs {the, violin}: P 2/4, R 2/2 -> 2/3
    assert mem0_f1("Mia plays the violin.", "the violin") == pytest.approx(2 / 3)
    # duplicates collapse: {the} vs {the}: 1.0 (a multiset F1 would give 2/3)
    assert mem0_f1("the the", "the") == 1.0
    # no stemming: plays != play
    assert mem0_f1("plays", "play") == 0.0
    assert mem0_f1("", "x") == 0.0 and mem0_f1("x", "") == 0.0


def test_mem0_bleu1_is_clipped_unigram_precision_times_brevity_penalty():
    # [mia, plays, the, violin, .] vs [the, violin]: 2/5 matched, longer than the reference: BP 1
    assert mem0_bleu1("Mia plays the violin.", "the violin") == pytest.approx(0.4)
    # [oslo] vs [oslo, ",", bergen]: precision 1, BP exp(1 - 3/1)
    assert mem0_bleu1("Oslo", "Oslo, Bergen") == pytest.approx(math.exp(-2))
    assert mem0_bleu1("", "x") == 0.0


def test_mem0_metric_judges_skip_category_5_like_evals_py():
    q4 = Query(id="q", kind="open", text="?", answer="the violin", meta={"category": 4})
    q5 = Query(id="q5", kind="open", text="?", answer="Not mentioned in the conversation", meta={"category": 5})
    j = score_f1(q4, "Mia plays the violin.")
    assert j.judge_model == "metric:mem0-f1" and j.score == pytest.approx(2 / 3) and j.extra["category"] == 4
    assert score_bleu1(q4, "Mia plays the violin.").score == pytest.approx(0.4)
    skipped = score_f1(q5, "not mentioned")
    assert skipped.score is None and not skipped.parse_ok and "category 5" in skipped.error


def test_mem0_llm_judge_reads_the_json_label_as_mem0_does():
    assert read_label('{"label": "CORRECT"}') == (1.0, "CORRECT")
    assert read_label('{"label": "WRONG"}') == (0.0, "WRONG")
    assert read_label('{"label": "correct"}')[0] == 0.0  # exact match only, as mem0
    assert read_label("CORRECT")[0] is None  # not JSON: a parse failure, never a 0
    prompt = judge_prompt("Q1?", "G1", "A1")
    assert "Question: Q1?\nGold answer: G1\nGenerated answer: A1\n" in prompt
    assert prompt.startswith("\nYour task is to label") and prompt.endswith('with the key as "label".\n')


def test_mem0_llm_judge_calls_the_model_once_with_the_prompt():
    from core.benchmarks.locomo.judge_mem0 import Mem0Judge
    from core.judges.base import JudgeInput

    sent = []

    class _C:
        ok, error, text = True, None, '{"label": "CORRECT"}'

    async def complete(spec, messages):
        sent.append((spec, messages))
        return _C()

    q = Query(id="q", kind="open", text="What instrument?", answer="the violin", meta={"category": 4})
    item = JudgeInput(bundle=None, query=q, expression_type=None, plan=None, response_text="violin", model_id="m")  # type: ignore[arg-type]
    judge = Mem0Judge("openai:gpt-4o-mini")
    (j,) = asyncio.run(judge.judge(item, complete))
    assert j.score == 1.0 and j.kind == "mem0" and j.dimension == "accuracy" and judge.name == "mem0:openai:gpt-4o-mini"
    (spec, msgs), = sent  # fmt: skip
    assert spec.params.temperature == 0.0 and [m.role for m in msgs] == ["user"]
    assert msgs[0].content == judge_prompt("What instrument?", "the violin", "violin")


# -- LoCoMo predictions ----------------------------------------------------------------------------


def test_locomo_predictions_are_keyed_as_the_official_code_keys_them():
    path = FIXTURES / "predictions.json"
    assert detect_result_format(path) == "locomo"
    result = results_locomo.load(path)
    assert [(a.user_id, a.query_id, a.model, a.answer) for a in result.answers] == [
        ("locomo-fx-1", "locomo-fx-1-qa000", "toy-model", "She plays the violin"),
        ("locomo-fx-1", "locomo-fx-1-qa001", "toy-model", "Oslo"),
        ("locomo-fx-1", "locomo-fx-1-qa002", "toy-model", "Not mentioned in the conversation"),
    ]
    for a in result.answers:
        (r,) = a.recorded
        assert (r.kind, r.dimension, r.judge) == ("locomo", "f1", "locomo-eval")
        # the placeholder user has the importer's ids and every question, gold as the importer sets it
        assert a.fallback is not None and a.fallback.user.id == a.user_id and a.fallback_query_id == a.query_id
    golds = [q.answer for q in result.answers[0].fallback.queries]  # type: ignore[union-attr]
    assert golds == ["the violin", "Oslo, Bergen", "Not mentioned in the conversation"]


def test_recorded_locomo_f1_is_reproduced_by_prefscope_locomo_f1():
    result = results_locomo.load(FIXTURES / "predictions.json")
    for a, gold in zip(
        result.answers, ["the violin", "Oslo, Bergen", "Not mentioned in the conversation"], strict=True
    ):
        category = a.recorded[0].meta["category"]
        # by hand: [she, play, violin] vs [violin]: 2*(1/3)*1/(4/3) = 0.5; mean(1, 0) = 0.5; "not mentioned": 1
        assert matches_recorded(a.recorded[0].score, locomo_score(category, a.answer, gold), category)


def test_rag_keys_set_context_and_options_and_stats_file_is_refused(tmp_path):
    rec = {"question": "Q?", "answer": "x", "category": 4, "m_dialog_top_5_prediction": "x",
           "m_dialog_top_5_prediction_context": ["D1:1"], "m_dialog_top_5_f1": 1.0, "m_dialog_top_5_recall": 0.5}  # fmt: skip
    path = tmp_path / "out.json"
    path.write_text(json.dumps([{"sample_id": "s", "qa": [rec]}]))
    (a,) = results_locomo.load(path).answers
    assert a.model == "m_dialog_top_5" and a.context == "locomo-rag-dialog"
    assert a.method_options == {"rag_mode": "dialog", "top_k": 5} and a.meta["prediction_context"] == ["D1:1"]
    assert sorted((r.dimension, r.score) for r in a.recorded) == [("f1", 1.0), ("recall", 0.5)]
    stats = tmp_path / "out_stats.json"
    stats.write_text(json.dumps({"m": {"category_counts": {"4": 1}, "cum_accuracy_by_category": {"4": 1.0}}}))
    with pytest.raises(FormatError, match="_stats.json"):
        results_locomo.load(stats)


# -- mem0 results ----------------------------------------------------------------------------------


def test_mem0_results_import_with_their_recorded_scores():
    path = FIXTURES / "mem0_metrics.json"
    assert detect_result_format(path) == "mem0"
    result = results_mem0.load(path)
    a0, a1 = result.answers
    assert a0.answer == "Mia plays the violin." and a0.model == "mem0_metrics"
    assert a0.fallback is not None and a0.fallback is a1.fallback and a0.fallback.user.source == "locomo"
    q0 = a0.fallback.queries[0]
    assert (q0.id, q0.answer, q0.meta["category"]) == (a0.fallback_query_id, "the violin", 4)
    got = {(r.kind, r.dimension, r.judge): r.score for r in a1.recorded}
    assert got == {
        ("mem0", "accuracy", "mem0-evals:gpt-4o-mini"): 0.0,
        ("mem0-f1", "f1", "mem0-evals"): pytest.approx(2 / 3),
        ("mem0-bleu1", "bleu1", "mem0-evals"): pytest.approx(math.exp(-2)),
    }
    # reproduced by prefscope's own mem0 metrics
    for a in result.answers:
        gold = next(q.answer for q in a.fallback.queries if q.id == a.fallback_query_id)  # type: ignore[union-attr]
        scores = {r.kind: r.score for r in a.recorded}
        assert mem0_f1(a.answer, gold) == pytest.approx(scores["mem0-f1"])
        assert mem0_bleu1(a.answer, gold) == pytest.approx(scores["mem0-bleu1"])


def test_a_locomo_predictions_file_is_not_read_as_mem0_and_back():
    assert not results_mem0.detect(FIXTURES / "predictions.json")
    assert not results_locomo.detect(FIXTURES / "mem0_metrics.json")
    assert not results_locomo.detect(FIXTURES / "annotations.json")
