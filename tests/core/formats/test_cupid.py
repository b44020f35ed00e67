"""CUPID importer on a small hand-written fixture in CUPID's shape, and on broken copies of it."""

from __future__ import annotations

import json

import pytest

from core.formats import FormatError, detect_format, load_path
from tests.core.formats.builders import FIXTURES, cupid_instances, write_jsonl

FIXTURE = FIXTURES / "cupid_small.jsonl"


def test_fixture_is_detected_and_gives_one_user_per_instance():
    assert detect_format(FIXTURE) == "cupid"
    result = load_path(FIXTURE)
    assert [b.user.id for b in result.bundles] == [
        "cupid-teacher_017-consistent",
        "cupid-teacher_017-contrastive",
        "cupid-teacher_017-changing",
    ]
    assert result.notes == []


def test_prior_interactions_become_labelled_task_sessions_in_order():
    raw = cupid_instances()[0]
    bundle = load_path(FIXTURE).bundles[0]
    assert [s.kind for s in bundle.sessions] == ["task"] * 4
    for s, inter in zip(bundle.sessions, raw["prior_interactions"]):
        assert s.context_factor == inter["context_factor"]
        assert s.contextual_preference == inter["contextual_preference"]
        assert [(t.role, t.content) for t in s.turns] == [(m["role"], m["content"]) for m in inter["dialogue"]]
    assert bundle.sessions[3].meta == {"session_date": "2024-03-11"}  # unknown interaction field kept
    assert bundle.user.meta["extra"] == {"split": "test"}  # unknown instance field kept


def test_query_carries_the_gold_and_the_oracle_sessions():
    raw = cupid_instances()
    result = load_path(FIXTURE)
    for bundle, inst in zip(result.bundles, raw):
        (q,) = bundle.queries
        assert q.kind == "open" and q.text == inst["current_request"]
        assert q.gold_preference == inst["current_contextual_preference"]
        assert q.checklist == inst["current_checklist"]
        assert q.context_factor == inst["current_context_factor"]
        assert q.instance_type == inst["instance_type"].lower()  # "Contrastive" in the file
        expected = [
            f"{bundle.user.id}-s{k + 1:02d}"
            for k, s in enumerate(inst["prior_interactions"])
            if s["context_factor"] == inst["current_context_factor"]
            and s["contextual_preference"] == inst["current_contextual_preference"]
        ]
        assert q.evidence_sessions == expected and expected
        assert bundle.gold_evidence(q, None) == expected
        assert bundle.preference(q.preference_id).evidence == {0: expected}


def test_changing_instance_excludes_the_old_preference_from_the_evidence():
    changing = load_path(FIXTURE).bundles[2]
    first = changing.sessions[0]  # same context factor, earlier (changed) preference
    assert first.context_factor == changing.queries[0].context_factor
    assert first.id not in changing.queries[0].evidence_sessions


@pytest.mark.parametrize("container", ["list", "instances", "single", "folder"])
def test_json_containers(tmp_path, container):
    rows = cupid_instances()
    if container == "folder":
        for i, row in enumerate(rows):
            (tmp_path / f"p+{i}.json").write_text(json.dumps(row))
        path = tmp_path
    else:
        body = {"list": rows, "instances": {"instances": rows}, "single": rows[0]}[container]
        path = tmp_path / "cupid.json"
        path.write_text(json.dumps(body))
    assert detect_format(path) == "cupid"
    result = load_path(path)
    assert len(result.bundles) == (1 if container == "single" else 3)


def test_no_matching_session_is_noted(tmp_path):
    row = cupid_instances()[0]
    row["current_contextual_preference"] = "Something never seen before."
    result = load_path(write_jsonl(tmp_path / "c.jsonl", [row]))
    assert result.bundles[0].queries[0].evidence_sessions == []
    assert result.notes == [
        "1 instance(s) have no prior session with the current context factor and preference, "
        "so their query has no gold evidence session"
    ]


# -- errors ----------------------------------------------------------------------------------
def _err(tmp_path, rows, name="cupid.jsonl") -> str:
    path = write_jsonl(tmp_path / name, rows)
    with pytest.raises(FormatError) as info:
        load_path(path, format="cupid")
    return str(info.value)


def test_error_bad_role_names_line_and_path(tmp_path):
    rows = cupid_instances()
    rows[1]["prior_interactions"][1]["dialogue"][0]["role"] = "usr"
    assert _err(tmp_path, rows) == (
        "cupid.jsonl: line 2: prior_interactions[1].dialogue[0].role: expected 'user', 'assistant' or 'system', got 'usr'"
    )


def test_error_instance_type(tmp_path):
    rows = cupid_instances()
    rows[0]["instance_type"] = "stable"
    assert _err(tmp_path, rows) == (
        "cupid.jsonl: line 1: instance_type: expected 'consistent', 'contrastive' or 'changing', got 'stable'"
    )


def test_error_missing_and_wrong_typed_fields(tmp_path):
    rows = cupid_instances()
    del rows[2]["current_request"]
    assert _err(tmp_path, rows) == "cupid.jsonl: line 3: current_request: required field is missing"
    rows = cupid_instances()
    rows[0]["current_checklist"] = ["ok", 7]
    assert _err(tmp_path, rows) == "cupid.jsonl: line 1: current_checklist[1]: expected a string, got a number"
    rows = cupid_instances()
    rows[0]["prior_interactions"][2]["dialogue"] = []
    assert _err(tmp_path, rows) == (
        "cupid.jsonl: line 1: prior_interactions[2].dialogue: expected at least one message, got an empty array"
    )
    rows = cupid_instances()
    rows[0]["prior_interactions"][0]["dialogue"][1]["content"] = {"text": "x"}
    assert _err(tmp_path, rows) == (
        "cupid.jsonl: line 1: prior_interactions[0].dialogue[1].content: expected a string, got an object"
    )


def test_error_in_a_json_array_names_the_record(tmp_path):
    rows = cupid_instances()
    rows[1]["prior_interactions"] = "none"
    path = tmp_path / "cupid.json"
    path.write_text(json.dumps({"instances": rows}))
    with pytest.raises(FormatError) as info:
        load_path(path, format="cupid")
    assert str(info.value) == "cupid.json: instances[1]: prior_interactions: expected an array, got a string"


def test_error_duplicate_instances(tmp_path):
    rows = cupid_instances()
    rows[1]["instance_type"] = "consistent"
    assert _err(tmp_path, rows) == (
        "cupid.jsonl: line 2: persona_id: duplicate instance 'cupid-teacher_017-consistent', "
        "also at cupid.jsonl: line 1 (give each instance an 'id' to keep both)"
    )
    rows[0]["id"], rows[1]["id"] = "x", "x"
    assert _err(tmp_path, rows) == "cupid.jsonl: line 2: id: duplicate instance 'cupid-x', also at cupid.jsonl: line 1"
    rows[1]["id"] = "y"
    assert [b.user.id for b in load_path(write_jsonl(tmp_path / "ok.jsonl", rows)).bundles][:2] == [
        "cupid-x",
        "cupid-y",
    ]


def test_error_a_line_that_is_not_an_object(tmp_path):
    assert _err(tmp_path, [cupid_instances()[0], ["not", "an", "instance"]]) == (
        "cupid.jsonl: line 2: expected an object, got an array"
    )


def test_error_line_numbers_count_blank_lines(tmp_path):
    rows = cupid_instances()
    rows[1]["persona_id"] = None
    path = tmp_path / "gaps.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n\n" + json.dumps(rows[1]) + "\n")
    with pytest.raises(FormatError) as info:
        load_path(path, format="cupid")
    assert str(info.value) == "gaps.jsonl: line 3: persona_id: expected a string or a number, got null"
