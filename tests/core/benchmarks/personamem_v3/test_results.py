"""PersonaMem-v3 results.csv (run_eval.py's columns, PROTOCOL.md §3) read into imported answers:
one per row, failed rows kept, the 4,096-byte cut marked, numeric metrics_json keys recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.benchmarks.personamem_v3 import results
from core.formats import FormatError
from core.results import detect_result_format

CSV = Path(__file__).parents[3] / "fixtures" / "personamem_v3" / "runs" / "gpt-5.5-longctx" / "results.csv"
HEADER = "query_id,seq,user_id,task_type,ts,metrics_json,status,duration_ms,error,agent_response\n"


def test_detected_by_its_header(tmp_path):
    assert detect_result_format(CSV) == "personamem-v3"
    other = tmp_path / "results.csv"
    other.write_text("query_id,user_id,agent_response\nq,7,hi\n")
    assert results.detect(other) is False


def test_one_answer_per_row_on_the_importers_ids():
    out = results.load(CSV)
    a1, a2, a3 = out.answers
    assert [(a.user_id, a.query_id) for a in out.answers] == [("personamem-v3-7", f"7-q{i}") for i in (1, 2, 3)]
    assert a1.model == "gpt-5.5-longctx" and a1.method == "personamem-v3-run_eval"
    assert a1.answer == "How about a sunrise trail run, then fresh sourdough?" and a1.meta["status"] == "ok"
    # the error row is kept as a failed answer
    assert a2.answer == "" and a2.meta["status"] == "error"
    assert a2.meta["error"] == "TimeoutError: the call timed out | run_eval.py:412"
    assert any("failed answer, kept" in n for n in a2.prompt_notes)
    # the runner's cut is kept and marked (a newline inside the quoted cell survives)
    assert a3.answer.endswith("…[truncated]") and "\n" in a3.answer and a3.meta["truncated"] is True


def test_numeric_metrics_are_recorded_scores():
    a1 = results.load(CSV).answers[0]
    got = {(r.kind, r.dimension, r.judge): r.score for r in a1.recorded}
    # numbers and booleans only: avoid_leak_indices (a list), judge_model and note (strings) are not scores
    assert got == {
        ("pmv3-slice", "held_out_hit", "personamem-v3"): 1.0,
        ("pmv3-slice", "held_out_score", "personamem-v3"): 0.71,
        ("pmv3-slice", "avoid_leak_rate", "personamem-v3"): 0.5,
        ("pmv3-slice", "avoid_leak_flag", "personamem-v3"): 1.0,  # true -> 1
        ("personamem-v3", "input_tokens", "personamem-v3:gpt-5.5"): 1234.0,
        ("personamem-v3", "cost_usd", "personamem-v3:gpt-5.5"): 0.0125,
        ("personamem-v3", "pr_combined_personalization_score", "personamem-v3:gpt-5.5"): 2.5,
    }


def test_placeholder_user_holds_every_query_of_the_file():
    a1 = results.load(CSV).answers[0]
    assert a1.fallback is not None and a1.fallback.user.id == "personamem-v3-7"
    assert [q.id for q in a1.fallback.queries] == ["7-q1", "7-q2", "7-q3"]
    assert [q.meta["restraint"] for q in a1.fallback.queries] == [False, True, False]


def test_missing_columns_and_bad_metrics_are_named(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("query_id,user_id,agent_response\nq,7,hi\n")
    with pytest.raises(FormatError, match="missing column\\(s\\) seq, task_type, ts, metrics_json"):
        results.load(path)
    path.write_text(HEADER + 'q1,0,7,chatbot_personalized_response,1,"[1, 2]",ok,1,,hi\n')
    with pytest.raises(FormatError) as info:
        results.load(path)
    assert str(info.value) == "results.csv: line 2: metrics_json: expected a JSON object, got list"
