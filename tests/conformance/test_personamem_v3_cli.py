"""PersonaMem-v3 end to end through the real CLI and SQLite (demo models, offline): import the
hand-made persona folder, print the time-masked official prompt, answer with demo:oracle and
demo:overeager, score with the no-model pmv3-slice judge, read the per-bin report, and import a
results.csv whose rows link to the stored queries (or to placeholders when none is stored)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
FIXTURES = Path(__file__).parents[1] / "fixtures" / "personamem_v3"
BACKEND = FIXTURES / "backend"
CSV = FIXTURES / "runs" / "gpt-5.5-longctx" / "results.csv"


def _rows(db: str, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def run(db: str, query: str, model: str) -> str:
    out = cli(db, "run", "personamem-v3-7", query, "--model", model, "--judge", "pmv3-slice", "--plain")
    return re.search(r"stored as run (\S+)", out).group(1)


def table(db: str) -> list[dict]:
    tables = json.loads(cli(db, "report", "--json"))["tables"]
    (found,) = [t for t in tables if t["title"].startswith("PersonaMem-v3 chatbot held-out hit")]
    return found["rows"]


def test_import_prompt_run_judge_report(tmp_path):
    db = str(tmp_path / "p.db")
    assert "4 queries" in cli(db, "import", str(BACKEND))
    prompt = cli(db, "prompt", "personamem-v3-7", "7-q1", "--full")  # the benchmark's profile: method personamem-v3
    assert "# Task: produce a chatbot response" in prompt and "Kind of Blue" in prompt
    assert "Best nigiri" not in prompt  # th-1 is after the query's time: masked out
    runs = {
        (model, query): run(db, query, model)
        for query in ("7-q1", "7-q2")
        for model in ("demo:oracle", "demo:overeager")
    }
    rows = {(r["model"], r["distance_bin"]): r for r in table(db)}
    # 7-q1 sits in [1024-2048), the restraint query 7-q2 in [0-1024): the oracle holds jazz back there
    assert rows[("demo:oracle [demo]", "[0-1024)")]["held_out_hit"] == 0.0
    assert rows[("demo:overeager [demo]", "[0-1024)")]["held_out_hit"] == 1.0
    assert rows[("demo:oracle [demo]", "all")]["n"] == 2
    # the diagnosis reads pmv3-slice: on the restraint query the oracle holds back, overeager misapplies
    labels = {}
    for key, run_id in runs.items():
        (answer,) = json.loads(cli(db, "diagnose", "--json", run_id))
        labels[key] = answer["label"]
    assert labels[("demo:oracle", "7-q2")] == "applied: held back", labels
    assert labels[("demo:overeager", "7-q2")] == "misapplied", labels


def test_results_csv_links_to_the_stored_queries_and_is_judged_again(tmp_path):
    db = str(tmp_path / "p.db")
    cli(db, "import", str(BACKEND))
    out = cli(db, "import-results", str(CSV))
    assert "3 runs added" in out and "3 of 3 matched a stored user" in out
    recorded = [r for r in table(db) if r["source"] == "recorded"]
    assert {r["distance_bin"] for r in recorded} == {"(not recorded)", "all"}
    assert recorded[-1]["held_out_hit"] == 0.5  # rows 1 and 3 recorded 1 and 0
    cli(db, "judge", "--label", "imported:results.csv", "--judge", "pmv3-slice")
    ours = [r for r in table(db) if r["source"] == "parser" and r["distance_bin"] == "all"]
    assert ours and ours[0]["n"] == 2  # the failed row is a failed answer: not judged, not a 0
    (status,) = {r[0] for r in _rows(db, "SELECT p.status FROM responses p WHERE p.error LIKE 'error:%'")}
    assert status == "error"


def test_results_csv_without_its_persona_goes_on_placeholders(tmp_path):
    db = str(tmp_path / "p.db")
    out = cli(db, "import-results", str(CSV))
    assert "3 runs added" in out and "placeholder" in out
    assert "persona 7" in cli(db, "users")
