"""LongMemEval's cleaned release: the same layout, imported under its own source name so a report
never pools cleaned and original haystacks (../shared/reference/longmemeval-cleaned §1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.formats import detect_format, load_path

FIXTURES = Path(__file__).parents[2] / "fixtures" / "longmemeval-cleaned"
CLEANED = FIXTURES / "longmemeval_s_cleaned.json"


def test_the_cleaned_file_has_users_of_its_own_and_the_same_questions(tmp_path):
    original = shutil.copy(CLEANED, tmp_path / "longmemeval_s.json")
    assert (detect_format(CLEANED), detect_format(Path(original))) == ("longmemeval-cleaned", "longmemeval")
    cleaned, plain = load_path(CLEANED), load_path(Path(original))
    ids = [r["question_id"] for r in json.loads(CLEANED.read_text(encoding="utf-8"))]
    assert [b.user.id for b in cleaned.bundles] == [f"longmemeval-cleaned-{q}" for q in ids]
    assert [b.user.id for b in plain.bundles] == [f"longmemeval-{q}" for q in ids]
    assert {b.user.source for b in cleaned.bundles} == {
        "longmemeval-cleaned"
    } and cleaned.format == "longmemeval-cleaned"
    assert {b.user.source for b in plain.bundles} == {"longmemeval"}
    # A data revision, not a format change: the questions and haystacks read the same.
    for c, p in zip(cleaned.bundles, plain.bundles, strict=True):
        assert c.queries == p.queries and c.sessions == p.sessions


def test_a_filler_session_repeated_in_one_history_is_kept_under_its_own_id():
    """The cleaned S file repeats a filler haystack_session_id within 13 histories (upstream #54)."""
    result = load_path(CLEANED)
    (ku,) = [b for b in result.bundles if b.queries[0].id == "c_ku_5"]
    assert [s.id for s in ku.sessions] == ["answer_c5a", "ultrachat_f2", "answer_c5b", "ultrachat_f2~2"]
    assert result.notes == [
        "longmemeval_s_cleaned.json: record 4 (c_ku_5): session id 'ultrachat_f2' repeats; stored as 'ultrachat_f2~2'"
    ]


def test_a_numeric_answer_is_kept_as_python_prints_it_and_abstention_by_containment():
    result = load_path(CLEANED)
    by_id = {b.queries[0].id: b.queries[0] for b in result.bundles}
    assert by_id["c_tr_4"].answer == "9"
    assert [q for q, query in by_id.items() if query.meta["abstention"]] == ["c_ms_7_abs"]


@pytest.mark.parametrize("name", ["longmemeval_m_cleaned.json", "LongMemEval_S_Cleaned.json"])
def test_either_cleaned_file_name_is_detected(tmp_path, name):
    assert detect_format(Path(shutil.copy(CLEANED, tmp_path / name))) == "longmemeval-cleaned"
