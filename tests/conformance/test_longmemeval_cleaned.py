"""LongMemEval cleaned release against ../shared/reference/longmemeval-cleaned/PROTOCOL.md: the
evaluation is unchanged (§2), so the cleaned questions get the official reader prompt and the
official judge prompts byte for byte (from ../shared/reference/longmemeval); a judge log in the §3
layout (as evaluate_qa.py writes it: json.dumps defaults, autoeval_label set last, the judge's
full id) imports as recorded labels that `report` keeps apart from judgments made here."""

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
from tests.conftest import reference
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
DATASET = Path(__file__).parents[1] / "fixtures" / "longmemeval-cleaned" / "longmemeval_s_cleaned.json"
#: The judge's replies, read as evaluate_qa.py reads them ('yes' in reply.strip().lower()).
REPLIES = ["Yes.", "no", "YES", "No.", "yesterday", "", "yes"]


def says_yes(reply: str) -> bool:
    return "yes" in reply.strip().lower()


def test_the_protocol_says_the_evaluation_did_not_change():
    text = reference("longmemeval-cleaned", "PROTOCOL.md").read_text(encoding="utf-8")
    assert "## 2. Did the official evaluation change? No." in text
    assert '`"autoeval_label": {"model": <full judge id>, "label": <true|false>}`' in text


def test_cleaned_questions_get_the_official_prompts_and_recorded_labels_stay_apart(tmp_path):
    raw = json.loads(DATASET.read_text(encoding="utf-8"))
    db = str(tmp_path / "p.db")
    cli(db, "import", str(DATASET))
    run_ids = []
    with OpenAIServer([Reply.text(r) for r in REPLIES]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        for item in raw:
            qid = item["question_id"]
            r = CliRunner().invoke(
                main,
                ["--db", db, "--config", str(cfg), "run", f"longmemeval-cleaned-{qid}", qid, "--method",
                 "longmemeval", "--model", "demo:generic", "--judge", "longmemeval:local:gpt-4o-2024-08-06", "--plain"],
                catch_exceptions=False,
            )  # fmt: skip
            assert r.exit_code == 0, r.output
            run_ids.append(re.search(r"stored as run (\S+)", r.output).group(1))
        bodies = [req.body for req in server.requests]
    conn = open_db(db)
    try:
        runs = [load_run(conn, rid) for rid in run_ids]
    finally:
        conn.close()
    hypotheses = {}
    for item, run, body, reply in zip(raw, runs, bodies, REPLIES, strict=True):
        assert run.plan.steps[0].messages[0].content == official_reader_prompt(item, cot=False)
        (final,) = run.final_responses()
        hypotheses[item["question_id"]] = final.text
        kind = "abstention" if "_abs" in item["question_id"] else item["question_type"]
        official = ref_text(f"src/evaluation/prompts/judge_{kind}.txt")
        assert body["messages"] == [
            {"role": "user", "content": official.format(item["question"], item["answer"], final.text)}
        ]
        (j,) = [j for j in run.judgments if j.kind == "longmemeval"]
        assert j.score == (1.0 if says_yes(reply) else 0.0)
    # The same hypotheses judged elsewhere: the log evaluate_qa.py writes (§3), every label true.
    log = tmp_path / "demo_cleaned.jsonl.eval-results-gpt-4o"
    log.write_text(
        "".join(
            json.dumps(
                {"question_id": q, "hypothesis": h, "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": True}}
            )
            + "\n"
            for q, h in hypotheses.items()
        ),
        encoding="utf-8",
    )
    assert "7 runs added" in cli(db, "import-results", str(log))
    tables = json.loads(cli(db, "report", "--json"))["tables"]
    (table,) = [t for t in tables if t["title"].startswith("LongMemEval")]
    overall = {(r["source"], r["judge"]): (r["n"], r["accuracy"]) for r in table["rows"] if r["metric"] == "overall"}
    judged_here = sum(says_yes(r) for r in REPLIES) / len(REPLIES)
    assert overall == {
        ("llm", "local:gpt-4o-2024-08-06"): (7, pytest.approx(judged_here)),
        ("recorded", "recorded:gpt-4o-2024-08-06"): (7, 1.0),
    }
