"""`prefscope import-results` of lm-eval, OpenAI Batch and OpenAI Evals files, then `report`
from the recorded scores (lm-eval's per-doc metrics), hand-computed."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli
from tests.storage.stored_batches import new_db
from tui.cli import main

FIXTURES = Path(__file__).parents[2] / "fixtures"
TOY = FIXTURES / "lm_eval" / "toy"
JOB = FIXTURES / "openai_batch" / "job"
DATE = "2026-01-02T03-04-05.000001"


def recorded_mean(db: str, metric: str) -> tuple[int, float]:
    tables = json.loads(cli(db, "report", "--source", "recorded", "--metric", metric, "--json"))["tables"]
    ((row,),) = [t["rows"] for t in tables]
    assert (row["source"], row["judge"], row["model"]) == ("recorded", "recorded:lm-eval", "imported:org/toy-model")
    return row["n"], row["mean"]


def query(db: str, sql: str) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_lm_eval_samples_import_and_report_their_recorded_metric_per_filter(tmp_path):
    db = str(tmp_path / "p.db")
    out = cli(db, "import-results", str(TOY))
    assert "6 runs added" in out and "skipped 2 loglikelihood/multiple-choice lines" in out
    # exact_match per doc in samples_toy_gen: strict-match 1, 0, 0; flexible-extract 1, 1, 0
    assert recorded_mean(db, "lm-eval:exact_match,strict-match") == (3, pytest.approx(1 / 3))
    assert recorded_mean(db, "lm-eval:exact_match,flexible-extract") == (3, pytest.approx(2 / 3))
    assert "6 already stored" in cli(db, "import-results", str(TOY))


def test_an_openai_batch_folder_imports_answers_failures_and_links_a_stored_user(tmp_path):
    db = new_db(tmp_path)
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    request = {"custom_id": "exp1:maya:p1-open:e1", "method": "POST", "url": "/v1/chat/completions"}
    request["body"] = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello"}]}
    with (job / "requests.jsonl").open("a") as fh:
        fh.write(json.dumps(request) + "\n")
    line = json.loads((job / "output.jsonl").read_text().splitlines()[0])
    line["custom_id"] = "exp1:maya:p1-open:e1"
    with (job / "output.jsonl").open("a") as fh:
        fh.write(json.dumps(line) + "\n")
    out = cli(db, "import-results", str(job))
    assert "5 runs added" in out and "1 of 5 matched a stored user" in out
    rows = query(
        db,
        "SELECT r.user_id, r.query_id, p.text, p.status, r.status FROM runs r JOIN responses p ON p.run_id = r.id "
        "WHERE r.id LIKE 'run-imported-%' ORDER BY 1, 2, 3",
    )
    assert rows == [
        ("ana", "tea-1", "A chamomile tea.", "ok", "ok"),
        ("ana", "tea-1", "Try rooibos: no caffeine.", "ok", "ok"),
        ("bo", "run-2", "", "error", "error"),  # the HTTP 429: a failed answer, not an empty ok one
        ("maya", "p1-open", "Kyoto, early in the morning.", "ok", "ok"),
        ("openai-batch-plain-7", "q", "Kyoto, early in the morning.", "ok", "ok"),
    ]
    (error,) = query(db, "SELECT p.error FROM runs r JOIN responses p ON p.run_id = r.id WHERE r.user_id = 'bo'")
    assert error[0] == "HTTP 429: Rate limit reached for requests."
    tokens = query(db, "SELECT input_tokens, output_tokens FROM responses WHERE text = 'A chamomile tea.'")
    assert tokens == [(30, 5)], tokens  # the usage the file gives


def test_openai_evals_items_import(tmp_path):
    db = str(tmp_path / "p.db")
    out = cli(db, "import-results", str(FIXTURES / "openai_evals" / "items.jsonl"))
    assert "2 runs added" in out and "skipped 1 item without a sample" in out


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (lambda line: line[:30], f"org__toy-model/samples_toy_gen_{DATE}.jsonl: line 4: invalid JSON"),
        (lambda line: line.replace('"doc_id": 1, ', ""), f"samples_toy_gen_{DATE}.jsonl: line 4: doc_id: missing"),
    ],
)
def test_a_malformed_samples_file_names_file_and_line_and_stores_nothing(tmp_path, broken, message):
    root = tmp_path / "toy"
    shutil.copytree(TOY, root)
    path = root / "org__toy-model" / f"samples_toy_gen_{DATE}.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = broken(lines[3])
    path.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "p.db")
    cli(db, "import-results", str(FIXTURES / "openai_evals" / "items.jsonl"))
    before = query(db, "SELECT id FROM runs ORDER BY id")
    result = CliRunner().invoke(main, ["--db", db, "import-results", str(root)])
    assert result.exit_code != 0 and message in result.output
    assert query(db, "SELECT id FROM runs ORDER BY id") == before  # lines 1-3 were fine: still nothing stored
