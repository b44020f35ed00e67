"""LongMemEval judge logs through the CLI: imported without their dataset (placeholder questions,
linked when the dataset comes), onto the runs of their hypothesis file, and never pooled across
releases; `report` gives the official numbers from the recorded labels without calling a model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli_runner import cli

FIXTURES = Path(__file__).parents[2] / "fixtures" / "longmemeval-cleaned"
DATASET = FIXTURES / "longmemeval_s_cleaned.json"
HYP = FIXTURES / "gpt-4o_s_cleaned.jsonl"
LOG = FIXTURES / "gpt-4o_s_cleaned.jsonl.eval-results-gpt-4o"
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session",
)


def lme_rows(db: str) -> list[dict]:
    tables = json.loads(cli(db, "report", "--json"))["tables"]
    (table,) = [t for t in tables if t["title"].startswith("LongMemEval")]
    return table["rows"]


def by_metric(rows: list[dict]) -> dict[str, tuple[int, float | None]]:
    return {r["metric"]: (r["n"], r["accuracy"]) for r in rows}


def run_ids(db: str) -> list[str]:
    return sorted(r["id"] for r in json.loads(cli(db, "runs", "--json")))


def test_a_judge_log_without_its_dataset_reports_the_share_of_true_labels_then_links_itself(tmp_path):
    db = str(tmp_path / "p.db")
    out = cli(db, "import-results", str(LOG))
    assert "7 runs added" in out and "7 answers name questions not stored" in out
    rows = lme_rows(db)
    assert {(r["release"], r["source"], r["judge"]) for r in rows} == {
        ("cleaned", "recorded", "recorded:gpt-4o-2024-08-06")
    }
    got = by_metric(rows)
    # Labels in the log: true, false, true, false, true, false, true -> 4 of 7.
    assert got["overall"] == (7, pytest.approx(4 / 7))
    assert got["abstention"] == (1, 1.0)  # c_ms_7_abs: true
    assert all(got[t] == (0, None) for t in TYPES) and got["task-averaged"][1] is None
    before = run_ids(db)
    cli(db, "import", str(DATASET))
    assert run_ids(db) == before  # the same answers, now on the real questions
    got = by_metric(lme_rows(db))
    assert [got[t] for t in TYPES] == [(1, 1.0), (1, 0.0), (1, 1.0), (1, 0.0), (1, 1.0), (2, 0.5)]
    assert got["task-averaged"][1] == pytest.approx((1 + 0 + 1 + 0 + 1 + 0.5) / 6)
    assert got["overall"] == (7, pytest.approx(4 / 7)) and got["abstention"] == (1, 1.0)


def test_a_log_adds_its_labels_to_the_runs_of_its_hypothesis_file(tmp_path):
    db = str(tmp_path / "p.db")
    cli(db, "import", str(DATASET))
    assert "7 runs added" in cli(db, "import-results", str(HYP))
    runs = run_ids(db)
    out = cli(db, "import-results", str(LOG))
    assert "0 runs added" in out and "7 answers of this file were stored before from another file" in out
    assert run_ids(db) == runs
    assert by_metric(lme_rows(db))["overall"] == (7, pytest.approx(4 / 7))
    out = cli(db, "import-results", str(LOG))  # again: nothing new, no label twice
    assert "7 already stored" in out
    assert by_metric(lme_rows(db))["overall"] == (7, pytest.approx(4 / 7))


def test_the_hypothesis_file_after_its_log_is_stored_as_its_own_runs(tmp_path):
    """The other order: the log's runs carry the labels; the plain hypotheses are runs of their own
    (nothing to attach), and the report still counts each label once."""
    db = str(tmp_path / "p.db")
    cli(db, "import-results", str(LOG))
    assert "7 runs added" in cli(db, "import-results", str(HYP))
    assert by_metric(lme_rows(db))["overall"] == (7, pytest.approx(4 / 7))


def test_cleaned_and_original_releases_are_never_pooled(tmp_path):
    db = str(tmp_path / "p.db")
    original = shutil.copy(DATASET, tmp_path / "longmemeval_s.json")
    cli(db, "import", str(DATASET))
    cli(db, "import", str(original))
    logs = tmp_path / "generation_logs" / "full-history-session" / "gpt-4o" / "direct"
    logs.mkdir(parents=True)
    cleaned_log = shutil.copy(LOG, logs / "out_cleaned.jsonl.eval-results-gpt-4o")
    lines = [json.loads(x) for x in LOG.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line["autoeval_label"]["label"] = True
    original_log = logs / "out.jsonl.eval-results-gpt-4o"
    original_log.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    assert "(longmemeval-cleaned)" in cli(db, "import-results", str(cleaned_log))
    assert "(longmemeval)" in cli(db, "import-results", str(original_log))
    rows = lme_rows(db)
    assert {r["model"] for r in rows} == {"imported:gpt-4o"}  # one model, two releases
    overall = {r["release"]: (r["n"], r["accuracy"]) for r in rows if r["metric"] == "overall"}
    assert overall == {"cleaned": (7, pytest.approx(4 / 7)), "original": (7, 1.0)}
