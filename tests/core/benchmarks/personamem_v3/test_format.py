"""Importing PersonaMem-v3 persona folders (tests/fixtures/personamem_v3/backend, hand-made from
PROTOCOL.md §1): users, time-ordered event sessions, the chatbot queries with their time mask,
slice, distance and restraint flag, and errors that name the instance fields they need."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.benchmarks.personamem_v3 import format as fmt
from core.formats import FormatError, detect_format, load_path
from core.model import EVIDENCE_DEPTH, HISTORY_END

BACKEND = Path(__file__).parents[3] / "fixtures" / "personamem_v3" / "backend"


@pytest.fixture(scope="module")
def bundle():
    return load_path(BACKEND).bundles[0]


def test_detected_as_a_backend_folder_a_persona_folder_or_its_test_file():
    for path in (BACKEND, BACKEND / "7", BACKEND / "7" / "test.json"):
        assert detect_format(path) == "personamem-v3"
    assert fmt.detect(BACKEND / "7" / "instagram.json") is False


def test_user_and_time_ordered_sessions(bundle):
    assert bundle.user.id == "personamem-v3-7" and bundle.user.persona.startswith("Rosa, 34")
    # every non-DM event of the four apps, by time; the DM ig-4 and calendar.json are left out
    assert [s.id for s in bundle.sessions] == [
        *("instagram-ig-1", "facebook-fb-1", "instagram-ig-2", "instagram-ig-3"),
        *("facebook-fb-2", "threads-th-2", "chatbot-cb-1", "threads-th-1"),
    ]
    line = json.loads(bundle.sessions[0].turns[0].content)
    assert line["hashtags"] == ["#TrailRunning"] and "preferences" not in line  # ground truth never shown
    assert [p.text for p in bundle.preferences] == [
        *("enjoys trail running", "loves live jazz", "bakes sourdough bread", "dislikes sushi", "reads sci-fi"),
    ]


def test_only_chatbot_task_instances_become_queries(bundle):
    assert [q.id for q in bundle.queries] == ["7-q1", "7-q2", "7-q3", "7-q5"]  # 7-q4 is an alert task


def test_queries_carry_mask_slice_distance_and_restraint(bundle):
    q1, q2, q3, q5 = bundle.queries
    # q1 at T: the last event before T is cb-1 (th-1 at T+3600 is after it)
    assert q1.meta[HISTORY_END] == "chatbot-cb-1"
    assert q1.meta["distance_tokens"] == 1200 and q1.meta["distance_bin"] == "[1024-2048)"
    assert q1.meta[EVIDENCE_DEPTH]["tokens"] == 1200 and q1.evidence_sessions == ["instagram-ig-1"]
    assert q1.meta["gt_slice_origin"].startswith("built") and len(q1.meta["gt_slice"]["avoid"]) == 2
    assert q1.meta["restraint"] is False and q1.gold_preference == "enjoys trail running"
    assert q1.meta["prior_conversation"][1] == {"role": "assistant", "content": "Hello Rosa, how can I help?"}
    # q2: over-personalization task, control arm (inside instance_full), frozen gt_slice used as given
    assert q2.meta["restraint"] is True and q2.meta["arm"] == "control"
    assert q2.meta["gt_slice_origin"] == "frozen gt_slice"
    assert [i["persona_item"] for i in q2.meta["gt_slice"]["avoid"]] == ["dislikes sushi"]
    assert q2.meta[HISTORY_END] == "threads-th-1"  # at T+7200 every event is before it
    # q3: the carve-out action makes it a restraint query; its string groundtruth_preference is the held-out
    assert q3.meta["restraint"] is True and q3.meta["action"] == "asked_not_to_personalize"
    assert q3.meta["gt_slice"]["target"][0]["persona_item"] == "loves live jazz"
    # q5: time from ts_iso; hashtags from the held-out object; no event shares #pottery -> -1, n/a
    assert q5.meta["ts"] == 1700100000 and q5.meta["source_hashtags"] == ["#pottery"]
    assert q5.meta["distance_tokens"] == -1 and q5.meta["distance_bin"] == "n/a"
    assert q5.meta[EVIDENCE_DEPTH]["tokens"] is None and q5.evidence_sessions == []


def test_a_query_without_time_names_the_fields_it_reads(tmp_path):
    folder = tmp_path / "backend" / "9"
    shutil.copytree(BACKEND / "7", folder)
    (folder / "test.json").write_text(
        json.dumps([{"query_id": "9-q1", "task_type": "chatbot_personalized_response", "user_query": "Hi"}])
    )
    with pytest.raises(FormatError) as info:
        load_path(tmp_path / "backend")
    assert str(info.value) == "9/test.json: record 0: missing ts / ts_iso (also looked for inside instance_full)"


def test_a_file_outside_a_persona_folder_is_refused(tmp_path):
    path = tmp_path / "test.json"
    path.write_text("[]")
    with pytest.raises(FormatError, match="expected a PersonaMem-v3 persona folder"):
        fmt.load(path)
