"""LongMemEval importer: a small fixture written in the README's format, and bad records."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from core.formats import FormatError, detect_format, load_path

FIXTURE = Path(__file__).parent / "fixtures" / "longmemeval_small.json"


@pytest.fixture(scope="module")
def raw():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def result():
    return load_path(FIXTURE)


def test_detected_and_one_user_per_question(result, raw):
    assert detect_format(FIXTURE) == "longmemeval"
    assert [b.user.id for b in result.bundles] == [f"longmemeval-{r['question_id']}" for r in raw]
    assert all(len(b.queries) == 1 and b.user.source == "longmemeval" for b in result.bundles)
    assert result.notes == []


def test_sessions_keep_ids_order_turns_and_dates(result, raw):
    bundle, item = result.bundles[0], raw[0]
    assert [s.id for s in bundle.sessions] == item["haystack_session_ids"]  # file order, not sorted
    assert [s.meta["haystack_date"] for s in bundle.sessions] == item["haystack_dates"]
    assert bundle.sessions[1].date == dt.date(2023, 5, 20)
    for s, turns in zip(bundle.sessions, item["haystack_sessions"], strict=True):
        assert [(t.role, t.content) for t in s.turns] == [(t["role"], t["content"]) for t in turns]


def test_query_gold_and_meta(result, raw):
    q = result.bundles[0].query("q_user_1")
    assert q.kind == "open" and q.text == raw[0]["question"] and q.answer == "A border collie"
    assert q.evidence_sessions == ["answer_q1_1"] and q.evidence_turns == ["answer_q1_1#0"]
    assert q.meta == {
        "question_id": "q_user_1",
        "question_type": "single-session-user",
        "question_date": "2023/06/02 (Fri) 09:15",
        "abstention": False,
        "answer_session_ids": ["answer_q1_1"],
    }
    pref = result.bundles[1].queries[0]
    assert pref.meta["question_type"] == "single-session-preference" and pref.answer.startswith("The user would prefer")
    abs_q = result.bundles[2].queries[0]
    assert abs_q.meta["abstention"] is True and abs_q.evidence_turns == []
    temporal = result.bundles[3].queries[0]
    assert temporal.answer == "12"  # str() of the number, as the judge prompt prints it
    assert temporal.evidence_turns == ["answer_q4_1#0", "answer_q4_2#0"]


def _write(tmp_path, items) -> Path:
    p = tmp_path / "lme.json"
    p.write_text(json.dumps(items), encoding="utf-8")
    return p


def _one(raw, **change):
    item = json.loads(json.dumps(raw[0]))
    item.update(change)
    return item


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"question_type": "open-domain"}, "record 0 (q_user_1): question_type: expected one of"),
        ({"question": 5}, "record 0 (q_user_1): question: expected a string, got a number"),
        (
            {"haystack_dates": ["2023/05/21 (Sun) 14:02"]},
            "record 0 (q_user_1): haystack_sessions: haystack_session_ids (3)",
        ),
        ({"answer": None}, "record 0 (q_user_1): answer: expected a string or a number, got null"),
    ],
)
def test_bad_records_name_file_record_and_field(tmp_path, raw, change, expected):
    with pytest.raises(FormatError) as err:
        load_path(_write(tmp_path, [_one(raw, **change)]), format="longmemeval")
    assert str(err.value).startswith(f"lme.json: {expected}")


def test_bad_turn_and_missing_field(tmp_path, raw):
    item = _one(raw)
    item["haystack_sessions"][1][0]["role"] = "system"
    with pytest.raises(
        FormatError,
        match=r"^lme.json: record 0 \(q_user_1\): haystack_sessions\[1\]\[0\]\.role: expected 'user' or 'assistant'",
    ):
        load_path(_write(tmp_path, [item]), format="longmemeval")
    del item["answer_session_ids"]
    with pytest.raises(
        FormatError, match=r"record 0: answer_session_ids: required field is missing|answer_session_ids"
    ):
        load_path(_write(tmp_path, [_one(raw), {k: v for k, v in item.items()}]), format="longmemeval")


def test_duplicate_question_ids_and_unknown_answer_sessions(tmp_path, raw):
    with pytest.raises(
        FormatError, match=r"record 1 \(q_user_1\): question_id: duplicate question_id 'q_user_1', also record 0"
    ):
        load_path(_write(tmp_path, [raw[0], raw[0]]), format="longmemeval")
    item = _one(raw, answer_session_ids=["answer_q1_1", "noans_zz"])
    result = load_path(_write(tmp_path, [item]), format="longmemeval")
    assert result.bundles[0].queries[0].evidence_sessions == ["answer_q1_1"]
    assert result.notes == ["lme.json: record 0 (q_user_1): answer_session_ids not in the haystack: noans_zz"]


def test_a_locomo_or_chat_file_is_not_taken_for_longmemeval(tmp_path):
    p = tmp_path / "chat.json"
    p.write_text(json.dumps([{"role": "user", "content": "question_id haystack_sessions"}]), encoding="utf-8")
    assert detect_format(p) == "chatlog"
