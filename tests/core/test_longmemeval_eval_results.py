"""evaluate_qa.py judge logs (``<hyp_file>.eval-results-<judge>``, JSON Lines with
``autoeval_label``) read as recorded judgments of the named judge
(../shared/reference/longmemeval-cleaned/PROTOCOL.md §3), on placeholder questions until the
dataset is imported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.benchmarks.longmemeval.results import judge_log, origin
from core.formats import FormatError
from core.results import detect_result_format, load_results

FIXTURES = Path(__file__).parents[1] / "fixtures" / "longmemeval-cleaned"
LOG = FIXTURES / "gpt-4o_s_cleaned.jsonl.eval-results-gpt-4o"
#: The fixture's labels, written by hand (README of the fixture folder).
LABELS = {
    "c_ssu_1": 1.0,
    "c_ssa_2": 0.0,
    "c_ssp_3": 1.0,
    "c_tr_4": 0.0,
    "c_ku_5": 1.0,
    "c_ms_6": 0.0,
    "c_ms_7_abs": 1.0,
}


def test_each_label_is_a_recorded_score_of_the_full_judge_id():
    assert detect_result_format(LOG) == "longmemeval-cleaned"
    answers = load_results(LOG).answers
    assert [a.query_id for a in answers] == list(LABELS)
    for a in answers:
        (r,) = a.recorded
        assert (r.kind, r.dimension, r.judge, r.score) == (
            "longmemeval",
            "accuracy",
            "gpt-4o-2024-08-06",
            LABELS[a.query_id],
        )
        assert (r.scale_min, r.scale_max, r.raw) == (0.0, 1.0, "true" if LABELS[a.query_id] else "false")
        assert r.meta == {
            "question_id": a.query_id,
            "abstention": a.query_id.endswith("_abs"),
            "judge_short_name": "gpt-4o",
        }
        assert a.user_id == f"longmemeval-cleaned-{a.query_id}" and a.meta == {}  # the label is not kept twice
    # the model is the hypothesis file's stem, as for the hypothesis file itself
    assert (
        {a.model for a in answers}
        == {"gpt-4o_s_cleaned"}
        == {a.model for a in load_results(LOG.with_name("gpt-4o_s_cleaned.jsonl")).answers}
    )


def test_answers_carry_a_placeholder_of_their_own_ids():
    a = load_results(LOG).answers[-1]
    assert a.fallback is not None and (a.fallback.user.id, a.fallback_query_id) == (
        "longmemeval-cleaned-c_ms_7_abs",
        "c_ms_7_abs",
    )
    (q,) = a.fallback.queries
    assert q.id == "c_ms_7_abs" and q.answer is None and "question_type" not in q.meta and q.meta["abstention"] is True
    assert a.fallback.user.meta["placeholder"] is True and a.fallback.sessions == []


def test_a_log_without_cleaned_in_its_name_links_to_the_original_release(tmp_path):
    log = Path(shutil.copy(LOG, tmp_path / "hyp.jsonl.eval-results-gpt-4o-mini"))
    assert detect_result_format(log) == "longmemeval"
    a = load_results(log).answers[0]
    assert (a.user_id, a.model, a.recorded[0].meta["judge_short_name"]) == ("longmemeval-c_ssu_1", "hyp", "gpt-4o-mini")
    forced = load_results(log, format="longmemeval-cleaned").answers[0]
    assert forced.user_id == "longmemeval-cleaned-c_ssu_1"


def test_judge_log_names_and_origin():
    assert judge_log("out.jsonl.eval-results-llama-3.1-70b-instruct") == ("out.jsonl", "llama-3.1-70b-instruct")
    assert judge_log("out.jsonl") is None
    assert origin(Path("/x/generation_logs/full-history-session/gpt-4o/con/o.jsonl.eval-results-gpt-4o"))[:2] == (
        "gpt-4o",
        "longmemeval-cot",
    )


def _log(tmp_path, *lines) -> Path:
    path = tmp_path / "h.jsonl.eval-results-gpt-4o"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_a_label_that_is_not_a_boolean_is_kept_without_a_score(tmp_path):
    path = _log(tmp_path, {"question_id": "q1", "hypothesis": "h", "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": "yes"}},
                {"question_id": "q2", "hypothesis": "h"})  # fmt: skip
    result = load_results(path)
    (r,) = result.answers[0].recorded
    assert (r.score, r.raw) == (None, '"yes"') and result.answers[1].recorded == []
    assert result.notes == [
        "h.jsonl.eval-results-gpt-4o: 1 of 2 lines have no autoeval_label (imported as hypotheses only)"
    ]


@pytest.mark.parametrize(
    ("label", "message"),
    [
        (True, "line 1: autoeval_label: expected an object, got bool"),
        ({"label": True}, "line 1: autoeval_label.model: required field is missing"),
    ],
)
def test_a_malformed_label_fails_naming_the_line(tmp_path, label, message):
    with pytest.raises(FormatError) as err:
        load_results(_log(tmp_path, {"question_id": "q1", "hypothesis": "h", "autoeval_label": label}))
    assert message in str(err.value)
