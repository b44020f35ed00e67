"""Every Eval Ever results (core/results/eee.py) through `prefscope import-results`: the reference
examples (0.3.0 and 0.2.0, ../shared/reference/formats/every_eval_ever/) import with their samples
and recorded scores on fallback users; a hand-made 0.2.x file (tests/fixtures/eee/v0_2/: integer
sample ids, boolean scores, `interactions`, string references, one sample scored by two metrics)
links to the stored user and query its metadata names."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from core.results import detect_result_format, load_results
from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA, reference

HANDMADE = Path(__file__).resolve().parents[1] / "fixtures" / "eee" / "v0_2"
SAMPLE = "3f1c2a9e-7b4d-4e8a-9c0f-5d6e7f8a9b0c"


def _rows(db: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT r.user_id, r.query_id, p.model, p.text, j.kind, j.dimension, j.judge_model, j.score, "
            "j.scale_min, j.scale_max, j.raw FROM runs r JOIN responses p ON p.run_id = r.id AND p.is_final = 1 "
            "LEFT JOIN judgments j ON j.response_id = p.id WHERE r.id LIKE 'run-imported-%' ORDER BY r.user_id, j.dimension"
        ).fetchall()


@pytest.mark.parametrize("folder", ["examples", "examples_v0.2.0"])
def test_reference_examples_import_with_recorded_scores(tmp_path, folder):
    root = reference("formats", "every_eval_ever", folder)
    assert detect_result_format(root) == "eee"
    db = str(tmp_path / "p.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    out = cli(db, "import-results", str(root))
    assert "2 runs added" in out
    rows = _rows(db)
    assert [(r[0], r[1]) for r in rows] == [
        ("eee-prefeval.explicit.travel-travel-001", "q"),
        ("eee-prefeval.explicit.travel-travel-002", "q"),
    ]
    assert {r[2] for r in rows} == {"imported:openai/gpt-4o-mini"}
    assert rows[0][3].startswith("Since you avoid overnight flights")
    assert [(r[4], r[5], r[6], r[7], r[8], r[9], r[10]) for r in rows] == [
        ("eee", "prefeval.preference_following", "recorded:openai/gpt-4o", 1.0, 0.0, 1.0, "FOLLOWED"),
        ("eee", "prefeval.preference_following", "recorded:openai/gpt-4o", 0.0, 0.0, 1.0, "VIOLATED"),
    ]
    with sqlite3.connect(db) as conn:  # the fallback user carries the sample's preference and question
        prefs = conn.execute("SELECT user_id, text FROM preferences WHERE user_id LIKE 'eee-%' ORDER BY user_id")
        assert [t for _, t in prefs] == ["never flies overnight", "vegetarian"]
    assert "0 runs added, 2 already stored" in cli(db, "import-results", str(root))
    # report reads the recorded scores: their mean is the aggregate's score_details.score (0.5)
    report = cli(db, "report", "--by", "model")
    assert "recorded" in report and "0.500" in report


def test_single_files_of_the_reference_example_import(tmp_path):
    side = reference("formats", "every_eval_ever", "examples", "data", "prefeval", "openai", "gpt-4o-mini")
    for path in (side / f"{SAMPLE}.json", side / f"{SAMPLE}_samples.jsonl"):
        result = load_results(path)
        assert result.format == "eee" and len(result.answers) == 2
        assert [len(a.messages or []) for a in result.answers] == [4, 3]
        assert [a.messages[-1].content for a in result.answers if a.messages][0].startswith("What's a good way")


def test_handmade_0_2_file_links_to_stored_ids_and_merges_metrics(tmp_path):
    db = str(tmp_path / "p.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    out = cli(db, "import-results", str(HANDMADE))
    assert "2 runs added" in out
    rows = _rows(db)
    linked = [r for r in rows if r[0] == "maya"]
    # sample 7: two instance lines (two metrics), one answer on maya/p1-open with two recorded scores
    assert [(r[1], r[3], r[5], r[6], r[7], r[8], r[9]) for r in linked] == [
        ("p1-open", "Keep your hot meal at 3 a.m.", "handmade.follow", "recorded:exact_match", 1.0, 0.0, 1.0),
        ("p1-open", "Keep your hot meal at 3 a.m.", "handmade.rubric", "recorded:acme/judge-9", 4.0, 1.0, 5.0),
    ]
    # sample 8: single-turn, no ids in its metadata: a fallback user, its boolean false score as 0
    [other] = [r for r in rows if r[0] != "maya"]
    assert other[0] == "eee-handmade.follow-8" and other[3] == "Take the day shift." and other[7] == 0.0
    assert other[6] == "recorded:eee"
