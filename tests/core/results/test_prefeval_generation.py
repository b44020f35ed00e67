"""PrefEval generation results: the SFT folder's layout and benchmark_generation.py's output."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError
from core.results import detect_result_format, load_results
from tests.conftest import dataset

SFT_TURNS = {2: 0, 5: 3, 10: 8, 30: 28, 50: 48, 70: 68}


def _record(i: int, **over) -> dict:
    rec = {
        "preference": f"I never eat dish {i}.",
        "question": f"Where should I have dinner tonight, {i}?",
        "explanation": "It must avoid the dish.",
        "response_to_pref": "Noted.",
        "response_to_q": f"Try the place without dish {i}.",
    }
    return {**rec, **over}


def _generation_file(tmp_path, records, *, task="remind", name="gpt4o-mini_travel_hotel_10interturn.json"):
    folder = tmp_path / "benchmark_results" / "explicit" / "generation_results" / task / "travel_hotel"
    folder.mkdir(parents=True)
    path = folder / name
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_benchmark_generation_output_without_shared(tmp_path):
    path = _generation_file(tmp_path, [_record(0), _record(1)], task="rag_5")
    assert detect_result_format(path) == "prefeval"
    answers = load_results(path).answers
    assert [a.record for a in answers] == [0, 1]
    first = answers[0]
    assert (first.model, first.method, first.method_options, first.turns) == (
        "gpt4o-mini",
        "prefeval-rag",
        {"k": 5},
        10,
    )
    assert first.context == "prefeval-turns"
    assert first.expression_type == 1
    assert first.match == {"preference": "I never eat dish 0.", "question": "Where should I have dinner tonight, 0?"}
    assert first.answer == "Try the place without dish 0."
    assert first.meta["topic"] == "travel_hotel" and first.meta["file_turns"] is None
    # The fallback user: the preference turn, the model's reply, the question as an open query.
    bundle = first.fallback
    assert bundle is not None and first.fallback_query_id == bundle.queries[0].id
    assert [t.content for t in bundle.sessions[0].turns] == ["I never eat dish 0.", "Noted."]
    assert bundle.queries[0].preference_id == bundle.preferences[0].id


def test_a_whole_results_folder_and_unfinished_records(tmp_path):
    _generation_file(tmp_path, [_record(0), {k: v for k, v in _record(1).items() if k != "response_to_q"}])
    result = load_results(tmp_path)
    assert len(result.answers) == 1
    assert "1 record(s) without response_to_q" in result.notes[0]


@pytest.mark.parametrize(
    ("record", "field", "message"),
    [
        ({"question": "q?", "response_to_q": "a"}, "preference", "required field is missing"),
        (_record(1, response_to_q=3), "response_to_q", "expected a string"),
        (_record(1, question=""), "question", "non-empty"),
    ],
)
def test_a_bad_record_names_file_record_and_field(tmp_path, record, field, message):
    path = _generation_file(tmp_path, [_record(0), record])
    with pytest.raises(FormatError) as err:
        load_results(path)
    assert (err.value.source, err.value.record, err.value.path) == (path.name, "record 1", field)
    assert message in str(err.value)


def test_sft_folder_layout():
    root = dataset("prefeval", "SFT")
    answers = load_results(root).answers
    assert len(answers) == 6 * 56
    per_file = {}
    for a in answers:
        per_file.setdefault(a.source_file, []).append(a)
    assert len(per_file) == 6
    for name, items in per_file.items():
        label = int(name.rsplit("_", 1)[1].removesuffix("turn.json"))
        assert {a.turns for a in items} == {SFT_TURNS[label]}
        assert {a.meta["file_turns"] for a in items} == {label}
        assert {(a.model, a.method) for a in items} == {("mistral8x7b", "prefeval-remind")}
        assert [a.record for a in items] == list(range(56))
    # Three records field by field, against the file itself.
    for name, index in [
        ("mistral8x7b_travel_restaurant_2turn.json", 0),
        ("mistral8x7b_travel_restaurant_30turn.json", 33),
        ("mistral8x7b_travel_restaurant_70turn.json", 55),
    ]:
        raw = json.loads((root / "single_pref_remind" / "travel_restaurant" / name).read_text())[index]
        got = next(a for a in per_file[f"single_pref_remind/travel_restaurant/{name}"] if a.record == index)
        assert got.match == {"preference": raw["preference"], "question": raw["question"]}
        assert got.answer == raw["response_to_q"]
        assert got.meta["response_to_pref"] == raw["response_to_pref"]
        assert got.query_text == raw["question"]
