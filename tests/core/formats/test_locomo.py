"""LoCoMo importer: the real conv-30 sample, and a small sample of our own in its shape."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from core.benchmarks.locomo import format as locomo
from core.formats import FormatError, detect_format, load_path
from tests.conftest import dataset
from tests.core.formats.builders import locomo_sample

REAL = ("locomo", "locomo10_conv-30.json")


@pytest.fixture(scope="module")
def real_raw():
    return json.loads(dataset(*REAL).read_text(encoding="utf-8"))[0]


@pytest.fixture(scope="module")
def real():
    return load_path(dataset(*REAL))


def test_real_file_is_detected_and_gives_one_user(real, real_raw):
    assert detect_format(dataset(*REAL)) == "locomo"
    (bundle,) = real.bundles
    conv = real_raw["conversation"]
    assert bundle.user.id == "locomo-conv-30" and bundle.user.name == conv["speaker_a"]
    assert bundle.user.meta["other_speaker"] == conv["speaker_b"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and not k.endswith("date_time"))
    assert len(bundle.sessions) == len(numbers)
    assert [s.meta["session_number"] for s in bundle.sessions] == numbers  # numeric, not "1, 10, 11, …"
    assert all(s.kind == "life_event" for s in bundle.sessions)
    assert sum(len(s.turns) for s in bundle.sessions) == sum(len(conv[f"session_{n}"]) for n in numbers)


def test_real_turns_keep_dia_ids_roles_and_dates(real, real_raw):
    bundle = real.bundles[0]
    conv = real_raw["conversation"]
    for s in bundle.sessions:
        n = s.meta["session_number"]
        assert s.meta["date_time"] == conv[f"session_{n}_date_time"]
        assert s.date is not None
        for t, item in zip(s.turns, conv[f"session_{n}"]):
            assert t.source_id == item["dia_id"]
            assert t.role == ("user" if item["speaker"] == conv["speaker_a"] else "assistant")
            assert t.content.startswith(item["text"])
    assert bundle.sessions[0].date == dt.date(2023, 1, 20)  # "4:04 pm on 20 January, 2023"


def test_real_qa_evidence_resolves_to_the_cited_turns(real, real_raw):
    bundle = real.bundles[0]
    assert len(bundle.queries) == len(real_raw["qa"])
    for q, item in zip(bundle.queries, real_raw["qa"]):
        assert q.text == item["question"] and q.meta["category"] == item["category"]
        assert [bundle.turn(ref).source_id for ref in q.evidence_turns] == item["evidence"]
        assert bundle.gold_evidence(q, None)  # every real QA item has evidence sessions
    first = bundle.queries[0]
    assert "Lost my job as a banker" in bundle.turn(first.evidence_turns[0]).content
    adversarial = [q for q in bundle.queries if q.meta["category"] == 5]
    assert adversarial and all(q.answer == locomo.UNANSWERABLE and "adversarial_answer" in q.meta for q in adversarial)
    assert real.notes == []


def test_real_observations_become_gold_attributes_for_the_user_speaker(real, real_raw):
    bundle = real.bundles[0]
    user = real_raw["conversation"]["speaker_a"]
    expected = [item for block in real_raw["observation"].values() for item in block.get(user, [])]
    assert len(bundle.attributes) == len(expected)
    for attr, (text, ids) in zip(bundle.attributes, expected):
        assert attr.text == text and attr.source == "gold"
        assert [bundle.turn(r).source_id for r in attr.evidence_turns] == ([ids] if isinstance(ids, str) else ids)
    assert bundle.user.life_events and bundle.user.life_events[0].date == dt.date(2023, 1, 20)


def test_real_user_speaker_b_swaps_the_roles(real_raw):
    bundle = locomo.load(dataset(*REAL), user_speaker="b").bundles[0]
    assert bundle.user.name == real_raw["conversation"]["speaker_b"]
    assert bundle.user.id == "locomo-conv-30-b"  # distinct from speaker a's view of the same sample
    first = real_raw["conversation"]["session_1"][0]
    assert bundle.sessions[0].turns[0].role == ("user" if first["speaker"] == bundle.user.name else "assistant")
    assert bundle.sessions[0].turns[0].role == "user"  # Gina opens session 1


# -- own sample --------------------------------------------------------------------------------
def write(tmp_path, sample, name="sample.json"):
    path = tmp_path / name
    path.write_text(json.dumps(sample))
    return path


def test_sample_mapping_details(tmp_path):
    result = load_path(write(tmp_path, [locomo_sample()]))
    b = result.bundles[0]
    assert [len(s.turns) for s in b.sessions] == [2, 3]
    # consecutive turns by one speaker stay separate, with the same role
    assert [t.role for t in b.sessions[1].turns] == ["assistant", "user", "user"]
    assert b.sessions[0].turns[1].content == "Welcome back! Any photos?\n[shares an image: a photo of blue tiles]"
    assert b.sessions[0].meta["images"]["D1:2"]["img_url"] == ["https://example.invalid/porto.jpg"]
    assert b.queries[1].answer == "2022"  # numbers become text
    assert [b.turn(r).source_id for r in b.queries[1].evidence_turns] == ["D2:2", "D2:3"]
    assert [a.text for a in b.attributes] == ["Ana travelled to Porto.", "Ana has a cat named Miso."]
    assert b.user.life_events[0].event == "Ana returns from Porto."


def test_single_sample_object_and_joined_evidence_ids(tmp_path):
    sample = locomo_sample()
    sample["qa"][0]["evidence"] = ["D1:1; D2:1"]  # the released data sometimes joins ids like this
    b = load_path(write(tmp_path, sample), format="locomo").bundles[0]
    assert [b.turn(r).source_id for r in b.queries[0].evidence_turns] == ["D1:1", "D2:1"]


def test_unresolvable_evidence_is_dropped_with_a_note(tmp_path):
    sample = locomo_sample()
    sample["qa"][1]["evidence"] = ["D2:2", "D9:99", 5]
    result = load_path(write(tmp_path, [sample]))
    q = result.bundles[0].queries[1]
    assert [result.bundles[0].turn(r).source_id for r in q.evidence_turns] == ["D2:2"]
    assert result.notes == [
        "sample.json: record 0: dropped malformed 1 QA evidence id(s) (qa[1]: 5)",
        "sample.json: record 0: dropped unknown (no such turn) 1 QA evidence id(s) (qa[1]: D9:99)",
    ]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("4:04 pm on 20 January, 2023", dt.date(2023, 1, 20)),
        ("12:48 am on 1 February, 2023", dt.date(2023, 2, 1)),
        ("9:00 am on 3 march 2021", dt.date(2021, 3, 3)),
        ("on 31 February, 2023", None),
        ("yesterday", None),
    ],
)
def test_parse_date(raw, expected):
    assert locomo.parse_date(raw) == expected


def test_undated_session_is_noted(tmp_path):
    sample = locomo_sample()
    sample["conversation"]["session_2_date_time"] = "sometime"
    result = load_path(write(tmp_path, [sample]))
    assert result.bundles[0].sessions[1].date is None
    assert result.notes == ["sample.json: record 0: 1 session(s) without a readable date_time were left undated"]


def _err(tmp_path, data) -> str:
    with pytest.raises(FormatError) as info:
        load_path(write(tmp_path, data), format="locomo")
    return str(info.value)


def test_error_unknown_speaker(tmp_path):
    sample = locomo_sample()
    sample["conversation"]["session_2"][1]["speaker"] = "Bob"
    assert _err(tmp_path, [sample]) == (
        "sample.json: record 0: conversation.session_2[1].speaker: expected 'Ana' or 'Ben', got 'Bob'"
    )


def test_error_duplicate_dia_id_and_sample_id(tmp_path):
    sample = locomo_sample()
    sample["conversation"]["session_2"][0]["dia_id"] = "D1:1"
    assert (
        _err(tmp_path, [sample]) == "sample.json: record 0: conversation.session_2[0].dia_id: duplicate dia_id 'D1:1'"
    )
    assert _err(tmp_path, [locomo_sample(), locomo_sample()]) == (
        "sample.json: record 1: sample_id: duplicate sample id 'demo-1', also record 0"
    )


def test_error_shapes(tmp_path):
    sample = locomo_sample()
    sample["conversation"] = []
    assert _err(tmp_path, [sample]) == "sample.json: record 0: conversation: expected an object, got an array"
    sample = locomo_sample()
    del sample["qa"][2]["question"]
    assert _err(tmp_path, [sample]) == "sample.json: record 0: qa[2].question: required field is missing"
    sample = locomo_sample()
    sample["conversation"]["session_1"][0]["text"] = 12
    assert _err(tmp_path, [sample]) == (
        "sample.json: record 0: conversation.session_1[0].text: expected a string, got a number"
    )
    sample = locomo_sample()
    sample["qa"][0]["category"] = "four"
    assert _err(tmp_path, [sample]) == "sample.json: record 0: qa[0].category: expected a number, got a string"
    assert _err(tmp_path, "conv") == "sample.json: expected an array or an object, got a string"
    assert _err(tmp_path, [{"conversation": {"speaker_a": "A", "speaker_b": "B"}}]) == (
        "sample.json: record 0: conversation: expected at least one session_<N> list, found none"
    )


def test_error_bad_user_speaker(tmp_path):
    with pytest.raises(FormatError, match=r"^sample.json: user_speaker: expected 'a' or 'b', got 'c'$"):
        locomo.load(write(tmp_path, [locomo_sample()]), user_speaker="c")


def test_malformed_observations_are_skipped_with_a_note(tmp_path):
    sample = locomo_sample()
    sample["observation"]["session_2_observation"]["Ana"].append({"text": "not a pair"})
    sample["observation"]["session_1_observation"]["Ana"][0][1] = "D7:7"
    result = load_path(write(tmp_path, [sample]))
    assert [a.text for a in result.bundles[0].attributes] == ["Ana travelled to Porto.", "Ana has a cat named Miso."]
    assert result.bundles[0].attributes[0].evidence_turns == []
    assert result.notes == [
        "sample.json: record 0: dropped unknown (no such turn) 1 observation evidence id(s)"
        " (observation.session_1_observation.Ana[0]: D7:7)",
        "sample.json: record 0: skipped 1 observation(s) that are not [statement, dia_ids]",
    ]


def test_error_evidence_of_the_wrong_type(tmp_path):
    sample = locomo_sample()
    sample["qa"][0]["evidence"] = {"D1:1": True}
    assert (
        _err(tmp_path, [sample])
        == "sample.json: record 0: qa[0].evidence: expected an array or a string, got an object"
    )
