"""Native bundle format: load, round trip, and the error messages the operator sees."""

from __future__ import annotations

import copy
import json

import pytest

from core.formats import FormatError, detect_format, load_path, native
from tests.core.formats.builders import FIXTURES, native_user


def test_user_fixture_loads():
    path = FIXTURES / "native_user.json"
    assert detect_format(path) == "native"
    (bundle,) = load_path(path).bundles
    assert bundle.user.id == "alex"
    assert bundle.gold_evidence(bundle.query("q1"), 1) == ["s2"]
    assert bundle.query("q1-mcq").answer == "B"


def test_filler_fixture_loads():
    (pool,) = load_path(FIXTURES / "native_filler.json").fillers
    assert [s.id for s in pool.sessions] == ["f1", "f2"]


def test_dump_and_parse_round_trip():
    (bundle,) = load_path(FIXTURES / "native_user.json").bundles
    again = native.parse("again.json", json.loads(native.dump_bundle(bundle)))
    assert again.bundles == [bundle]


def test_folder_of_native_files(tmp_path):
    for name in ("native_user.json", "native_filler.json"):
        (tmp_path / name).write_text((FIXTURES / name).read_text(encoding="utf-8"))
    result = load_path(tmp_path)
    assert (len(result.bundles), len(result.fillers)) == (1, 1)


def _err(mutate) -> str:
    data = native_user()
    mutate(data)
    with pytest.raises(FormatError) as info:
        native.parse("alex.json", data)
    return str(info.value)


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (
            lambda d: d["sessions"][1]["turns"].__setitem__(0, {"role": "usr", "content": "x"}),
            "alex.json: user 'alex': sessions[1].turns[0].role: expected 'user', 'assistant' or 'system', got 'usr'",
        ),
        (
            lambda d: d["sessions"][1].__setitem__("preference_ids", ["p9"]),
            "alex.json: user 'alex': sessions[1].preference_ids: unknown preference 'p9'",
        ),
        (
            lambda d: d["sessions"].append(copy.deepcopy(d["sessions"][0])),
            "alex.json: user 'alex': sessions[2].id: duplicate id 's1'",
        ),
        (
            lambda d: d["sessions"][0].__setitem__("colour", 2),
            "alex.json: user 'alex': sessions[0].colour: unknown field (check its spelling against `prefscope schema`)",
        ),
        (
            lambda d: d["queries"][0].__setitem__("evidence_turns", ["s1#7"]),
            "alex.json: user 'alex': queries[0].evidence_turns: session 's1' has no turn 7",
        ),
        (lambda d: d.__setitem__("version", 2), "alex.json: version: expected version 1, got 2"),
        (
            lambda d: d.__setitem__("format", "other"),
            "alex.json: format: expected 'prefscope.user' or 'prefscope.filler', got 'other'",
        ),
    ],
)
def test_error_messages(mutate, expected):
    assert _err(mutate) == expected


def test_error_message_folds_validator_field_into_the_path():
    assert _err(lambda d: d["queries"][1].__setitem__("answer", "E")) == (
        "alex.json: user 'alex': queries[1].answer: expected one of A, B, C, D, got 'E'"
    )


def test_error_message_for_a_non_filler_session_in_a_pool():
    data = json.loads((FIXTURES / "native_filler.json").read_text(encoding="utf-8"))
    data["sessions"][1]["kind"] = "life_event"
    with pytest.raises(FormatError) as info:
        native.parse("pool.json", data)
    assert str(info.value) == "pool.json: sessions[1].kind: a filler pool holds only kind 'filler', got 'life_event'"
