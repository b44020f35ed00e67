"""`export_eee` (storage/export_eee.py): a demo batch written as Every Eval Ever 0.3.0 validates
against the 0.3.0 schemas in ../shared/reference/formats/every_eval_ever/schemas_ref (skipped cleanly
without them), aggregate and every instance line,
and imports back through `prefscope import-results` onto the stored users and queries."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from storage.db import open_db
from storage.export import RunFilter
from storage.export_eee import export_eee
from storage.output_files import OutputRefused
from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA, reference

jsonschema = pytest.importorskip("jsonschema")

#: The schemas as the reference folder keeps them (the every-eval-ever 0.3.0 package's, MIT).
SCHEMA_FILES = {
    "eval.schema.0.3.0.json": "eval.schema.pkg0.3.0.json",
    "instance_level_eval.schema.0.3.0.json": "instance_level_eval.schema.pkg0.3.0.json",
}


def _validator(name: str):
    schema = json.loads(reference("formats", "every_eval_ever", "schemas_ref", SCHEMA_FILES[name]).read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _demo_db(tmp_path: Path, monkeypatch) -> str:
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    db = str(tmp_path / "p.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    cli(db, "import", str(SAMPLE_DATA / "filler"))
    cli(
        db,
        "batch",
        *("--name", "eee-demo", "--user", "maya", "--user", "priya", "--query-kind", "open"),
        *("--expression", "1", "--context", "simple", "--model", "demo:oracle", "--model", "demo:forgetful"),
        *("--judge", "demo:heuristic", "--yes"),
    )
    return db


def _export(db: str, out: Path, **kw) -> list:
    conn = open_db(db)
    try:
        return export_eee(conn, out, RunFilter(labels=["eee-demo"]), organization="test lab", now=1_800_000_000, **kw)
    finally:
        conn.close()


def test_demo_batch_export_validates_against_the_0_3_0_schema(tmp_path, monkeypatch):
    db = _demo_db(tmp_path, monkeypatch)
    written = _export(db, tmp_path / "out")
    assert sorted(w.model for w in written) == ["demo:forgetful", "demo:oracle"]
    aggregate_schema = _validator("eval.schema.0.3.0.json")
    instance_schema = _validator("instance_level_eval.schema.0.3.0.json")
    n_judged = (
        sqlite3.connect(db)
        .execute(
            "SELECT count(*) FROM judgments j JOIN runs r ON r.id = j.run_id WHERE r.label = 'eee-demo' AND j.parse_ok = 1"
        )
        .fetchone()[0]
    )
    total = 0
    for w in written:
        agg = json.loads(w.aggregate.read_text())
        errors = [e.message for e in aggregate_schema.iter_errors(agg)]
        assert errors == [], errors
        body = w.samples.read_bytes()
        lines = [json.loads(x) for x in body.decode().splitlines()]
        for line in lines:
            errors = [e.message for e in instance_schema.iter_errors(line)]
            assert errors == [], errors
            assert line["evaluation_id"] == agg["evaluation_id"] and line["model_id"] == agg["model_info"]["id"]
            assert line["evaluation_result_id"] in {r["evaluation_result_id"] for r in agg["evaluation_results"]}
            assert line["messages"][-1]["role"] == "assistant"
            assert line["input"]["raw"] and line["messages"][-1]["content"] not in line["input"]["raw"]
        detail = agg["detailed_evaluation_results"]
        assert detail["checksum"] == hashlib.sha256(body).hexdigest() and detail["total_rows"] == len(lines)
        # datastore layout: data/<collection>/<developer>/<model>/<uuid>.json, the sidecar's path as stated
        assert w.aggregate.relative_to(tmp_path / "out").parts[:2] == ("data", "eee-demo")
        assert (tmp_path / "out" / detail["file_path"]) == w.samples
        # the aggregate score is the mean of its instance scores
        for r in agg["evaluation_results"]:
            mine = [x["evaluation"]["score"] for x in lines if x["evaluation_result_id"] == r["evaluation_result_id"]]
            assert r["score_details"]["score"] == pytest.approx(sum(mine) / len(mine))
            assert r["score_details"]["uncertainty"]["num_samples"] == len(mine)
        total += len(lines)
    assert total == n_judged > 0
    # idempotent: the same selection gives the same file names and bytes; an existing file is
    # replaced only when forced
    before = {w.samples: w.samples.read_bytes() for w in written}
    with pytest.raises(OutputRefused, match="already exists"):
        _export(db, tmp_path / "out")
    again = _export(db, tmp_path / "out", force=True)
    assert {w.samples: w.samples.read_bytes() for w in again} == before


def test_export_format_eee_through_the_cli(tmp_path, monkeypatch):
    db = _demo_db(tmp_path, monkeypatch)
    out = tmp_path / "records"
    cli(db, "export", "--batch", "eee-demo", "--format", "eee", "--out", str(out))
    aggregates = sorted(out.rglob("*.json"))
    assert len(aggregates) == 2  # one per model
    aggregate_schema = _validator("eval.schema.0.3.0.json")
    for path in aggregates:
        aggregate_schema.validate(json.loads(path.read_text()))


def test_single_file_export_and_several_models_refused(tmp_path, monkeypatch):
    db = _demo_db(tmp_path, monkeypatch)
    with pytest.raises(ValueError, match="2 models"):
        _export(db, tmp_path / "one.json")
    conn = open_db(db)
    try:
        [w] = export_eee(conn, tmp_path / "one.json", RunFilter(labels=["eee-demo"], models=["demo:oracle"]))
    finally:
        conn.close()
    assert w.aggregate == tmp_path / "one.json" and w.samples == tmp_path / "one_samples.jsonl"
    errors = list(_validator("eval.schema.0.3.0.json").iter_errors(json.loads(w.aggregate.read_text())))
    assert errors == []


def test_nothing_judged_is_refused(tmp_path):
    db = str(tmp_path / "empty.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    conn = open_db(db)
    try:
        with pytest.raises(ValueError, match="no judged answers"):
            export_eee(conn, tmp_path / "out", RunFilter())
    finally:
        conn.close()


def test_exported_records_import_back_onto_the_stored_users(tmp_path, monkeypatch):
    db = _demo_db(tmp_path, monkeypatch)
    written = _export(db, tmp_path / "out")
    out = cli(db, "import-results", str(tmp_path / "out"))
    assert "runs added" in out
    conn = sqlite3.connect(db)
    stored = set(
        conn.execute(
            "SELECT user_id, query_id, p.text FROM runs r JOIN responses p ON p.run_id = r.id "
            "WHERE r.label = 'eee-demo' AND p.is_final = 1"
        ).fetchall()
    )
    imported = set(
        conn.execute(
            "SELECT user_id, query_id, p.text FROM runs r JOIN responses p ON p.run_id = r.id "
            "WHERE r.id LIKE 'run-imported-%'"
        ).fetchall()
    )
    assert imported == stored  # the same answers, on the same stored users and queries
    assert conn.execute("SELECT count(*) FROM users WHERE source = 'eee'").fetchone()[0] == 0
    made = conn.execute(
        "SELECT j.kind, j.dimension, j.judge_model, j.score FROM judgments j JOIN runs r ON r.id = j.run_id "
        "WHERE r.label = 'eee-demo' AND j.parse_ok = 1"
    ).fetchall()
    recorded = conn.execute(
        "SELECT j.kind, j.dimension, j.judge_model, j.score FROM judgments j JOIN runs r ON r.id = j.run_id "
        "WHERE r.id LIKE 'run-imported-%'"
    ).fetchall()
    assert sorted((k, d, "recorded:" + m, s) for k, d, m, s in made) == sorted(recorded)
    assert sum(w.rows for w in written) == len(recorded)
