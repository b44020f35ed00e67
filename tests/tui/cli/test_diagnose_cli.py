"""`run --probe`, `prefscope diagnose` and `report --diagnosis` on real demo runs in a real SQLite
file: each label the acceptance names (applied, not known / known, not applied consistent with
the stored probes, not in context), the funnel with its Wilson intervals and PNG, and imported
PrefEval answers that have no probe."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.metrics import wilson_ci
from storage.db import open_db
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tests.conftest import dataset
from tui.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data"


@pytest.fixture
def db(tmp_path, unpaced_demo_models):  # noqa: F811
    path = str(tmp_path / "d.db")
    cli(path, "import", str(SAMPLE / "users"))
    cli(path, "import", str(SAMPLE / "filler"))
    return path


def diagnose_json(db: str, *args: str) -> list[dict]:
    result = CliRunner().invoke(main, ["--db", db, "diagnose", "--json", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def run_id(output: str) -> str:
    return output.split("stored as run ")[1].split()[0]


def probe_scores(db: str, run: str, model: str) -> list[float]:
    conn = open_db(db)
    try:
        rows = conn.execute(
            "SELECT j.score FROM runs r JOIN responses p ON p.run_id = r.id JOIN judgments j ON j.response_id = p.id "
            "WHERE r.probe_of = ? AND p.model = ? AND j.kind = 'choice'",
            [run, model],
        ).fetchall()
    finally:
        conn.close()
    return [score for (score,) in rows]


def test_run_probe_labels_oracle_applied_and_generic_by_its_probes(db):
    out = cli(
        db, "run", "maya", "p1-open", "--plain", "--probe", "--judge", "demo:heuristic",
        "--model", "demo:generic", "--model", "demo:oracle",
    )  # fmt: skip
    assert "probing: p1-mcq, p1-tf-yes, p1-tf-no" in out
    run = run_id(out)
    by_model = {d["model"]: d for d in diagnose_json(db, run)}
    assert by_model["demo:oracle"]["label"] == "applied"
    assert probe_scores(db, run, "demo:oracle") == [1.0, 1.0, 1.0]
    generic = by_model["demo:generic"]
    scores = probe_scores(db, run, "demo:generic")
    assert len(scores) == 3
    # the label follows the stored probes: all right -> known, not applied; any wrong -> not known
    assert generic["label"] == ("known, not applied" if all(s == 1.0 for s in scores) else "not known")
    steps = {s["name"]: s for s in generic["steps"]}
    assert steps["applied"]["status"] == "fail" and "awareness" in steps["applied"]["evidence"]
    assert steps["in context"]["status"] == "pass"
    # the one-line form names the model, the label and the deciding evidence
    line = next(ln for ln in cli(db, "diagnose", run).splitlines() if "demo:generic" in ln)
    assert generic["label"] in line and "known:" in line


def test_a_custom_context_without_the_gold_sessions_is_not_in_context(db):
    out = cli(
        db, "run", "maya", "p1-open", "--plain", "--judge", "demo:heuristic", "--model", "demo:generic",
        "--expression", "1", "--context", "custom", "--sessions", "maya-p2-e1,maya-p3-e1",
    )  # fmt: skip
    (generic,) = diagnose_json(db, run_id(out))
    assert generic["label"] == "not in context"
    step = next(s for s in generic["steps"] if s["name"] == "in context")
    assert "maya-p1-e1" in step["evidence"] and "among the 2 sent" in step["evidence"]


def test_a_failed_answer_without_probes_says_what_is_missing(db):
    out = cli(db, "run", "maya", "p1-open", "--plain", "--model", "demo:generic", "--judge", "demo:heuristic")
    (generic,) = diagnose_json(db, run_id(out))
    assert generic["label"] == "undetermined: no probe"
    known = next(s for s in generic["steps"] if s["name"] == "known")
    assert known["status"] == "unknown" and "--probe" in known["evidence"]


def test_a_generated_probe_for_cupid_data(db):
    out = cli(
        db, "run", "dana", "q-consistent-1", "--plain", "--probe", "--judge", "demo:heuristic",
        "--model", "demo:generic", "--model", "demo:oracle",
    )  # fmt: skip
    assert "probing: probe:q-consistent-1" in out
    by_model = {d["model"]: d for d in diagnose_json(db, run_id(out))}
    oracle_known = next(s for s in by_model["demo:oracle"]["steps"] if s["name"] == "known")
    generic_known = next(s for s in by_model["demo:generic"]["steps"] if s["name"] == "known")
    assert oracle_known["status"] == "pass" and "checklist items" in oracle_known["evidence"]
    assert generic_known["status"] == "fail"


def test_batch_probe_then_report_diagnosis_with_png_and_csv(db, tmp_path):
    cli(
        db, "batch", "--name", "dg", "--user", "maya", "--query-kind", "open", "--expression", "1",
        "--model", "demo:generic", "--model", "demo:oracle", "--judge", "demo:heuristic", "--probe", "--yes",
    )  # fmt: skip
    conn = open_db(db)
    try:
        (cells,) = conn.execute("SELECT count(*) FROM runs WHERE label = 'dg'").fetchone()
        (probes,) = conn.execute(
            "SELECT count(*) FROM runs WHERE label = 'probe:dg' AND probe_of IS NOT NULL"
        ).fetchone()
    finally:
        conn.close()
    assert cells == 16  # 8 open queries (6 original, 2 generalized) x 2 models
    assert probes >= cells  # maya's originals have 3 probes each, her generalized ones 1
    png, table = tmp_path / "funnel.png", tmp_path / "funnel.csv"
    out = cli(db, "report", "--diagnosis", "--batch", "dg", "--png", str(png), "--csv", str(table))
    assert "find → know → apply" in out and "generalized" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = list(csv.DictReader(table.open()))
    assert sum(int(r["n"]) for r in rows) == 16
    oracle = [r for r in rows if r["model"].startswith("demo:oracle") and r["origin"] == "original"]
    (row,) = oracle
    assert int(row["applied"]) == 6
    low, high = wilson_ci(6, 6)
    assert float(row["ci_low"]) == pytest.approx(low) and float(row["ci_high"]) == pytest.approx(high)
    # the report reads exactly what `diagnose` reads
    labels = [d["label"] for d in diagnose_json(db, "--batch", "dg")]
    assert len(labels) == 16
    for label in ("not in context", "not retrieved", "not known", "known, not applied", "applied"):
        assert sum(int(r[label]) for r in rows) == labels.count(label)


def test_imported_prefeval_answers_without_a_probe_say_so(tmp_path, unpaced_demo_models):  # noqa: F811
    source = dataset("prefeval", "SFT", "single_pref_remind", "travel_restaurant")
    db = str(tmp_path / "i.db")
    one = next(iter(sorted(source.glob("*.json"))))
    cli(db, "import-results", str(one))
    runs = json.loads(cli(db, "runs", "--json", "--limit", "3"))
    for r in runs:
        cli(db, "judge", r["id"], "--judge", "demo:heuristic")
    for d in diagnose_json(db, *(r["id"] for r in runs)):
        assert d["label"] == "applied" or d["label"] == "undetermined: no probe"
        known = next(s for s in d["steps"] if s["name"] == "known")
        assert known["status"] == "unknown" and "probes need a model" in known["evidence"]


def test_a_batch_without_an_expression_type_finds_the_gold_evidence_its_context_used(db):
    """A cell asked without --expression stores none; its context used the user's most implicit
    type, and the diagnosis reads that type's evidence (it said "the data marks no gold evidence")."""
    cli(
        db, "batch", "--name", "noexpr", "--user", "maya", "--query-kind", "open", "--context", "normal",
        "--model", "demo:oracle", "--judge", "demo:heuristic", "--yes",
    )  # fmt: skip
    cases = diagnose_json(db, "--batch", "noexpr")
    assert cases
    steps = [s for c in cases for s in c["steps"] if s["name"] == "in context"]
    assert len(steps) == len(cases) and all(s["status"] == "pass" for s in steps), steps[:2]
