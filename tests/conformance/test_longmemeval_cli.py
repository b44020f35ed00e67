"""End to end through the real CLI, SQLite and a loopback OpenAI server (real openai SDK): import a
LongMemEval-format file, answer with the longmemeval reader prompt, judge with the longmemeval judge,
check every judge prompt received byte for byte against the reference files, and read the metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conformance.longmemeval_reference import official_reader_prompt, ref_text
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
FIXTURE = Path(__file__).parents[1] / "core" / "formats" / "fixtures" / "longmemeval_small.json"
REPLIES = ["Yes.", "no", "yes", "No"]


def test_import_answer_judge_and_report(tmp_path):
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    db = str(tmp_path / "p.db")
    cli(db, "import", str(FIXTURE))
    run_ids = []
    with OpenAIServer([Reply.text(r) for r in REPLIES]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        for item in raw:
            qid = item["question_id"]
            r = CliRunner().invoke(
                main,
                ["--db", db, "--config", str(cfg), "run", f"longmemeval-{qid}", qid, "--method", "longmemeval",
                 "--model", "demo:generic", "--judge", "longmemeval:local:gpt-4o-2024-08-06", "--plain"],
                catch_exceptions=False,
            )  # fmt: skip
            assert r.exit_code == 0, r.output
            run_ids.append(re.search(r"stored as run (\S+)", r.output).group(1))
        requests = [req.body for req in server.requests]
    assert len(requests) == len(raw)
    conn = open_db(db)
    try:
        runs = [load_run(conn, rid) for rid in run_ids]
    finally:
        conn.close()
    for item, run, body, reply in zip(raw, runs, requests, REPLIES, strict=True):
        assert run.plan.steps[0].messages[0].content == official_reader_prompt(item, cot=False)
        (final,) = run.final_responses()
        hypothesis = final.text
        kind = "abstention" if "_abs" in item["question_id"] else item["question_type"]
        official = ref_text(f"src/evaluation/prompts/judge_{kind}.txt")
        assert body["messages"] == [
            {"role": "user", "content": official.format(item["question"], item["answer"], hypothesis)}
        ]
        assert (body["model"], body["temperature"], body["max_tokens"]) == ("gpt-4o-2024-08-06", 0, 10)
        (j,) = [j for j in run.judgments if j.kind == "longmemeval"]
        assert (j.score, j.raw, j.parse_ok) == (1.0 if "yes" in reply.lower() else 0.0, reply, True)
    out = cli(db, "report", "--json")
    (table,) = [t for t in json.loads(out)["tables"] if t["title"].startswith("LongMemEval")]
    rows = {r["metric"]: r for r in table["rows"]}
    assert rows["single-session-user"]["accuracy"] == 1.0 and rows["single-session-preference"]["accuracy"] == 0.0
    assert rows["multi-session"]["n"] == 1 and rows["abstention"] == {**rows["abstention"], "n": 1, "accuracy": 1.0}
    assert rows["overall"]["accuracy"] == 0.5 and rows["task-averaged"]["accuracy"] is None  # 2 types unjudged


def test_hypothesis_file_imported_judged_and_reported(tmp_path):
    """A hypothesis file as run_generation.py writes it becomes runs on the imported questions; the
    judge sees each hypothesis verbatim in the official prompt; a second import adds nothing."""
    raw = json.loads(FIXTURE.read_text(encoding="utf-8"))
    db = str(tmp_path / "p.db")
    cli(db, "import", str(FIXTURE))
    hyp = tmp_path / "generation_logs" / "full-history-session" / "gpt-4o" / "direct" / "hyp.jsonl"
    hyp.parent.mkdir(parents=True)
    hypotheses = {r["question_id"]: f"My answer to {r['question_id']}: {{not a placeholder}}\n" for r in raw}
    hyp.write_text("".join(json.dumps({"question_id": q, "hypothesis": h}) + "\n" for q, h in hypotheses.items()))
    assert "4 runs added" in cli(db, "import-results", str(hyp))
    assert "nothing new to store" in cli(db, "import-results", str(hyp))
    runs = json.loads(cli(db, "runs", "--json"))
    assert len(runs) == 4 and {tuple(r["models"]) for r in runs} == {("imported:gpt-4o",)}
    with OpenAIServer([Reply.text("yes")]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        for r in runs:
            out = CliRunner().invoke(
                main, ["--db", db, "--config", str(cfg), "judge", r["id"], "--judge", "longmemeval:local:gpt-4o"],
                catch_exceptions=False,
            )  # fmt: skip
            assert out.exit_code == 0, out.output
        sent = sorted(req.body["messages"][0]["content"] for req in server.requests)
    expected = []
    for item in raw:
        kind = "abstention" if "_abs" in item["question_id"] else item["question_type"]
        official = ref_text(f"src/evaluation/prompts/judge_{kind}.txt")
        expected.append(official.format(item["question"], item["answer"], hypotheses[item["question_id"]]))
    assert sent == sorted(expected)
    table = next(t for t in json.loads(cli(db, "report", "--json"))["tables"] if t["title"].startswith("LongMemEval"))
    rows = {r["metric"]: r for r in table["rows"]}
    assert rows["overall"]["n"] == 4 and rows["overall"]["accuracy"] == 1.0 and rows["abstention"]["n"] == 1
