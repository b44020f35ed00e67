"""OP-Bench end to end through the CLI: import the hand-made task file, answer with the op-bench
prompt, and (1) the diagnosis funnel shows `misapplied` as its own column: demo:overeager drags the
stored preference into the irrelevance (restraint) questions where demo:oracle holds back;
(2) the op-bench judge through a loopback OpenAI server receives the official prompts and the report
prints per category and overall (higher = less over-personalization)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from core.analysis.diagnosis import HELD_BACK, MISAPPLIED
from core.history.retrieval import Embedder
from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conftest import REFERENCE
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
FIXTURE = Path(__file__).parents[2] / "fixtures" / "opbench" / "handmade_overpersonalized.json"
USER = "op-bench-0-Maren"
RESTRAINT = ["irrelevance_easy-0", "irrelevance_easy-1", "irrelevance_hard-0"]


def test_overeager_is_misapplied_where_the_oracle_holds_back(tmp_path):
    db = str(tmp_path / "p.db")
    assert "2 users added" in cli(db, "import", str(FIXTURE))
    for qid in RESTRAINT:
        out = cli(db, "run", USER, qid, "--method", "op-bench", "--model", "demo:oracle", "--model",
                  "demo:overeager", "--judge", "restraint", "--plain")  # fmt: skip
        run_id = re.search(r"stored as run (\S+)", out).group(1)
        assert MISAPPLIED in cli(db, "diagnose", run_id)
    (table,) = json.loads(cli(db, "report", "--diagnosis", "--by", "model", "--json"))["tables"]
    rows = {r["model"]: r for r in table["rows"]}
    assert (rows["demo:overeager"][MISAPPLIED], rows["demo:overeager"]["applied"]) == (3, 0)
    assert (rows["demo:oracle"][MISAPPLIED], rows["demo:oracle"]["applied"]) == (0, 3)
    assert rows["demo:overeager"]["misapplied_rate"] == 1.0 and rows["demo:oracle"]["misapplied_rate"] == 0.0
    assert rows["demo:oracle"]["restraint_n"] == 3
    lines = cli(db, "report", "--diagnosis", "--by", "model").splitlines()
    head = lines[2].split()
    assert lines[1].split()[-3:-1] == ["mis", "applied"] and head[head.index("appl") + 1] == "applied"
    counts = {line.split()[0]: line.split()[1:9] for line in lines if line.startswith("demo:")}
    # n, not in ctx, not retr., not known, known¬appl., misappl., applied, undet.
    assert counts["demo:over"] == ["3", "0", "0", "0", "0", "3", "0", "0"]
    assert counts["demo:orac"] == ["3", "0", "0", "0", "0", "0", "3", "0"]
    assert HELD_BACK in cli(db, "diagnose", run_id)


REPLIES = ["1", "0", "Output: 0.5", "0.8", "no", "no", "no", "0.4", "0.6"]


def test_op_bench_judge_and_report(tmp_path):
    db = str(tmp_path / "p.db")
    cli(db, "import", str(FIXTURE))
    ref = REFERENCE / "op-bench" / "prompts"
    queries = ["irrelevance_easy-0", "irrelevance_easy-1", "irrelevance_hard-0", "sycophancy-0", "sycophancy-1",
               "sycophancy-2", "sycophancy-3", "diversity-0", "diversity-1", "diversity-2"]  # fmt: skip
    run_ids = []
    with OpenAIServer([Reply.text(r) for r in REPLIES]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        for qid in queries:
            r = CliRunner().invoke(
                main,
                ["--db", db, "--config", str(cfg), "run", USER, qid, "--method", "op-bench", "--model",
                 "demo:overeager", "--judge", "op-bench:local:gpt-4o-mini", "--plain"],
                catch_exceptions=False,
            )  # fmt: skip
            # the value question's judge never gives a number: the run says so and exits 1 (stored all the same)
            assert r.exit_code == (1 if qid == "sycophancy-1" else 0), r.output
            run_ids.append(re.search(r"stored as run (\S+)", r.output).group(1))
        bodies = [req.body for req in server.requests]
    assert len(bodies) == len(REPLIES)  # diversity answers are embedded, not judged
    conn = open_db(db)
    try:
        runs = {qid: load_run(conn, rid) for qid, rid in zip(queries, run_ids, strict=True)}
    finally:
        conn.close()
    answers = {qid: run.final_responses()[0].text for qid, run in runs.items()}
    if ref.exists():  # the judge prompts, byte for byte against the reference files
        files = ["irrelevance"] * 3 + ["sycophancy_fact"] + ["sycophancy_value"] * 3 + ["sycophancy_memory"] * 2
        order = queries[:4] + [queries[4]] * 3 + queries[5:7]
        for body, file, qid in zip(bodies, files, order, strict=True):
            text = (ref / f"judge_{file}.txt").read_text(encoding="utf-8")
            question = runs[qid].plan.steps[0].messages[1].content.rsplit("User's Latest Input:\n", 1)[1].rstrip("\n")
            assert body["messages"] == [
                {"role": "user", "content": text.format(question=question, response=answers[qid])}
            ]
            assert (body["model"], body["temperature"], body["max_tokens"]) == ("gpt-4o-mini", 0, 256)
    vectors = Embedder().embed([answers[q] for q in queries[7:]])
    sims = vectors @ vectors.T
    diversity = min(1.0, max(0.0, 1 - float(np.mean([sims[0, 1], sims[0, 2], sims[1, 2]]))))
    (table,) = [t for t in json.loads(cli(db, "report", "--json"))["tables"] if t["title"].startswith("OP-Bench")]
    rows = {r["metric"]: r for r in table["rows"]}
    assert rows["irrelevance_easy"]["score"] == pytest.approx(0.5)
    assert rows["irrelevance_hard"]["score"] == pytest.approx(0.5)
    assert rows["sycophancy"]["score"] == pytest.approx((0.8 + 0.0 + 0.4 + 0.6) / 4)  # the failure counts 0
    assert (rows["sycophancy_fact"]["score"], rows["sycophancy_value"]["score"]) == (pytest.approx(0.8), 0.0)
    assert rows["sycophancy_memory"]["score"] == pytest.approx(0.5)
    assert rows["diversity"]["score"] == pytest.approx(diversity, abs=1e-4)
    assert rows["diversity"]["paper_column"] == "Repetition"
    assert rows["overall"]["score"] == pytest.approx((0.5 + 0.5 + 0.45 + diversity) / 4, abs=1e-4)
    assert rows["overall"]["n"] == 4 and rows["overall"]["failed"] == 1
    assert "OP-Bench over-personalization" in cli(db, "report")


def test_the_pane_border_shows_misapplied_in_its_own_colour():
    from core.analysis.diagnosis import Diagnosis, Step
    from tui.diagnosis_style import COLOURS
    from tui.widgets.response_pane import diagnosis_subtitle

    steps = tuple(Step(n, "pass", "") for n in ("in context", "retrieved", "known")) + (Step("applied", "fail", ""),)
    border = diagnosis_subtitle(Diagnosis(MISAPPLIED, steps, restraint=True))
    assert border.plain == MISAPPLIED and COLOURS[MISAPPLIED] in str(border.style)
    assert len(set(COLOURS.values())) == len(COLOURS)  # a colour of its own
    held = diagnosis_subtitle(Diagnosis(HELD_BACK, steps[:3] + (Step("applied", "pass", ""),), restraint=True))
    assert held.plain == HELD_BACK and COLOURS["applied"] in str(held.style)
