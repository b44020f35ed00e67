"""LongMemEval hypothesis files: read as evaluate_qa.py reads them, mapped to the imported questions."""

from __future__ import annotations

import json

import pytest

from core.benchmarks.longmemeval.results import origin
from core.formats import FormatError
from core.results import detect_result_format, load_results


def _write(path, records, *, as_list=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    body = json.dumps(records) if as_list else "\n".join(json.dumps(r) for r in records) + "\n"
    path.write_text(body, encoding="utf-8")
    return path


def test_lines_map_to_the_importers_user_and_query_ids(tmp_path):
    path = _write(
        tmp_path / "generation_logs" / "full-history-session" / "gpt-4o" / "con" / "out.jsonl",
        [
            {"question_id": "q_user_1", "hypothesis": "A border collie."},
            {"question_id": "q_ms_3_abs", "hypothesis": "", "x": 1},
        ],
    )
    assert detect_result_format(path) == "longmemeval"
    a, b = load_results(path).answers
    assert (a.user_id, a.query_id, a.answer, a.record_label) == (
        "longmemeval-q_user_1",
        "q_user_1",
        "A border collie.",
        "line 1",
    )
    assert (a.model, a.method, a.context) == ("gpt-4o", "longmemeval-cot", "full-history-session")
    assert b.answer == "" and b.meta == {"x": 1}


def test_a_json_list_is_read_too_and_the_model_defaults_to_the_stem(tmp_path):
    path = _write(tmp_path / "my_system.json", [{"question_id": "q1", "hypothesis": "h"}], as_list=True)
    assert detect_result_format(path) == "longmemeval"
    (a,) = load_results(path).answers
    assert (a.record_label, a.model, a.method) == ("record 0", "my_system", "unknown")
    assert origin(tmp_path / "x.jsonl")[0] == "x"


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"question_id": "q1", "hypothesis": 3}], "h.jsonl: line 1: hypothesis: expected a string, got a number"),
        (
            [{"question_id": "q1", "hypothesis": "a"}, {"hypothesis": "b"}],
            "h.jsonl: line 2: question_id: required field is missing",
        ),
        (
            [{"question_id": "q1", "hypothesis": "a"}, {"question_id": "q1", "hypothesis": "b"}],
            "h.jsonl: line 2: question_id: duplicate question_id 'q1', also line 1",
        ),
    ],
)
def test_bad_lines_name_file_line_and_field(tmp_path, records, message):
    with pytest.raises(FormatError) as err:
        load_results(_write(tmp_path / "h.jsonl", records), format="longmemeval")
    assert str(err.value) == message
