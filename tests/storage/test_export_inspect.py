"""Inspect logs written from a stored demo batch: valid against the vendored schema, every
judgment a named score, repeats as epochs, the stored prompt as the sample's input."""

from __future__ import annotations

import io
import json
import sqlite3
import zipfile

import pytest

from storage.db import open_db
from storage.export import RunFilter
from storage.export_inspect import inspect_logs, write_eval, write_json
from storage.prompt_messages import step_messages
from tests.conftest import reference
from tests.storage.stored_batches import batch, build_env, new_db

SCHEMA = ("formats", "inspect_ai", "schema", "inspect-log-schema-openapi-0.3.285.json")


def validator(name: str):
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(reference(*SCHEMA).read_text())
    schema = {"$ref": f"#/components/schemas/{name}", "components": {"schemas": doc["components"]["schemas"]}}
    return jsonschema.Draft202012Validator(schema)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    with build_env(root):
        db = new_db(root)
        batch(
            db,
            "insp",
            *("--user", "maya", "--query", "p1-open", "--query", "p2-open", "--expression", "1"),
            *("--context", "simple", "--model", "demo:oracle", "--model", "demo:forgetful", "--repeats", "2"),
        )
    return db


@pytest.fixture(scope="module")
def logs(demo_db):
    db = open_db(demo_db)
    try:
        return inspect_logs(db, RunFilter(labels=["insp"]))
    finally:
        db.close()


def test_one_log_per_model_with_repeats_as_epochs(logs):
    assert sorted(log.model for log in logs) == ["demo:forgetful", "demo:oracle"]
    for log in logs:
        keys = sorted((s["id"], s["epoch"]) for s in log.samples)
        assert keys == [("maya.p1-open", 1), ("maya.p1-open", 2), ("maya.p2-open", 1), ("maya.p2-open", 2)]
        assert log.header["eval"]["config"]["epochs"] == 2
        assert log.header["eval"]["model"] == log.model.replace(":", "/", 1)


def test_logs_are_valid_against_the_vendored_schema(logs):
    v_log, v_sample = validator("EvalLog"), validator("EvalSample")
    for log in logs:
        assert [e.message for e in v_log.iter_errors(log.as_json())] == []
        assert [e.message for e in v_log.iter_errors({**log.header, "samples": None})] == []  # header.json
        for s in log.samples:
            assert [e.message for e in v_sample.iter_errors(s)] == []


def test_input_is_the_stored_prompt_and_every_judgment_a_score(demo_db, logs):
    conn = sqlite3.connect(demo_db)
    db = open_db(demo_db)
    try:
        for log in logs:
            for s in log.samples:
                run_id, rid = s["metadata"]["run_id"], s["metadata"]["response_id"]
                sent = step_messages(db, run_id, 0)
                assert [(m["role"], m["content"]) for m in s["input"]] == [(m.role, m.content) for m in sent]
                text = conn.execute("SELECT text FROM responses WHERE id = ?", [rid]).fetchone()[0]
                assert s["output"]["completion"] == text == s["messages"][-1]["content"]
                stored = conn.execute(
                    "SELECT kind, dimension, score, rationale, judge_model FROM judgments WHERE response_id = ?", [rid]
                ).fetchall()
                assert stored
                got = {
                    (
                        sc["metadata"]["kind"],
                        sc["metadata"]["dimension"],
                        sc["value"],
                        sc["explanation"],
                        sc["metadata"]["judge_model"],
                    )
                    for sc in s["scores"].values()
                }
                assert got == set(stored)
                assert s["metadata"]["user_id"] == "maya" and s["metadata"]["query_id"] in ("p1-open", "p2-open")
    finally:
        db.close()
        conn.close()


def test_results_are_means_over_items_after_reducing_epochs(logs):
    for log in logs:
        for score in log.header["results"]["scores"]:
            per_id: dict[str, list[float]] = {}
            for s in log.samples:
                per_id.setdefault(s["id"], []).append(s["scores"][score["name"]]["value"])
            reduced = [sum(v) / len(v) for v in per_id.values()]
            assert score["metrics"]["mean"]["value"] == pytest.approx(sum(reduced) / len(reduced))
            assert score["reducer"] == "mean"


def test_eval_zip_layout_and_official_reader(logs, tmp_path):
    log = logs[0]
    buf = io.BytesIO()
    write_eval(log, buf)
    names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
    assert names[-1] == "header.json" and "summaries.json" in names and "reductions.json" in names
    assert sum(n.startswith("samples/") for n in names) == len(log.samples)
    read_eval_log = pytest.importorskip("inspect_ai.log").read_eval_log
    (tmp_path / "x.eval").write_bytes(buf.getvalue())
    with (tmp_path / "x.json").open("w", encoding="utf-8") as fh:
        write_json(log, fh)
    for name in ("x.eval", "x.json"):
        back = read_eval_log(str(tmp_path / name))
        assert back.status == "success"
        assert sorted((s.id, s.epoch) for s in back.samples) == sorted((s["id"], s["epoch"]) for s in log.samples)
        for s, mine in zip(
            sorted(back.samples, key=lambda s: (s.id, s.epoch)),
            sorted(log.samples, key=lambda s: (s["id"], s["epoch"])),
        ):
            assert {k: v.value for k, v in s.scores.items()} == {k: v["value"] for k, v in mine["scores"].items()}
            assert s.output.completion == mine["output"]["completion"]
