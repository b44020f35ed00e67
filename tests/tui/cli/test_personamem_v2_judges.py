"""PersonaMem-v2's two LLM judges end to end through `prefscope judge`, against the loopback OpenAI
server (OPENAI_BASE_URL + a dummy key): the demo oracle answers the open questions of the hand-made
fixture, then `personamem-v2-boxed:<model>` (one call, the "do not" template for a preference that
starts with it, the first \\boxed{number} clamped to [0, 1]) and `personamem-v2-vote:<model>` (three
calls, majority) judge them; a call the server keeps failing (HTTP 500 through the retries) is a
recorded failure, not a 0 / "no"; `report` prints both tables."""

from __future__ import annotations

import ast
import csv
import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.benchmarks.personamem_v2.rows import row_key
from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
FIXTURE = Path(__file__).parents[2] / "fixtures" / "personamem_v2" / "data"
CSV = FIXTURE / "benchmark" / "text" / "benchmark.csv"
PROMPTS = Path(__file__).parents[3] / "core" / "benchmarks" / "personamem_v2" / "prompts.toml"
DANA = "personamem-v2-32k-chat_history_250301_101500_persona3"
BREAKFAST, PODCAST = "Can you suggest a weekend breakfast for me?", "What's a good podcast for my commute?"
MODEL = "gpt-5-chat"
BOXED, VOTE = f"personamem-v2-boxed:openai:{MODEL}", f"personamem-v2-vote:openai:{MODEL}"


def _row(text: str) -> dict:
    with CSV.open(newline="", encoding="utf-8") as fh:
        return next(r for r in csv.DictReader(fh) if text in r["user_query"])


def _template(key: str, **values: str) -> str:
    text = tomllib.loads(PROMPTS.read_text(encoding="utf-8"))[key]["text"]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    path = str(tmp_path / "pm2.db")
    assert "11 queries" in cli(path, "import", str(CSV))
    out = cli(path, "batch", "--query-kind", "open", "--context", "full", "--model", "demo:oracle", "--name", "open",
              "--yes")  # fmt: skip
    assert "done: 6 ok, 0 failed" in out
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-dummy")
    return path


def _runs(db: str) -> dict[tuple[str, str], str]:
    """(user, query id) -> run id of the batch's open answers."""
    return {(r["user_id"], r["query_id"]): r["id"] for r in json.loads(cli(db, "runs", "--json"))}


def _run_of(db: str, text: str) -> str:
    row = _row(text)
    return _runs(db)[(DANA, f"{row_key(row['persona_id'], row['user_query'], row['correct_answer'])}-open")]


def _judge(db: str, monkeypatch, replies: list[Reply], *args: str) -> tuple[int, str, list[dict]]:
    with OpenAIServer(replies) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        r = CliRunner().invoke(main, ["--db", db, "judge", *args], catch_exceptions=False)
        bodies = [req.body or {} for req in server.requests]
    return r.exit_code, r.output, bodies


def _judgments(db: str, run_id: str, kind: str) -> tuple:
    conn = open_db(db)
    try:
        run = load_run(conn, run_id)
    finally:
        conn.close()
    return run, [j for j in run.judgments if j.kind == kind]


def test_boxed_judge_sends_the_template_and_clamps_the_boxed_score(db, monkeypatch):
    seen = {}
    for text, reply in (
        (BREAKFAST, "Fits the diet well. \\boxed{1.7}"),
        (PODCAST, "It brings up asthma. $\\boxed{-0.3}$"),
    ):
        run_id = _run_of(db, text)
        code, out, bodies = _judge(db, monkeypatch, [Reply.text(reply)], run_id, "--judge", BOXED)
        assert code == 0, out
        (body,) = bodies  # one call
        run, (j,) = _judgments(db, run_id, "personamem-v2-boxed")
        (answer,) = run.final_responses()
        row = _row(text)
        query = ast.literal_eval(row["user_query"])["content"]
        key = "boxed_negative" if text == PODCAST else "boxed_positive"
        assert row["preference"].lower().startswith("do not") == (text == PODCAST)
        expected = _template(key, user_query=query, preference=row["preference"], model_response=answer.text)
        # one user message, no system message; model and messages only (no temperature, no max_tokens)
        assert body["messages"] == [{"role": "user", "content": expected}]
        assert body["model"] == MODEL and "temperature" not in body and "max_tokens" not in body
        assert j.error is None and j.parse_ok and j.judge_model == f"openai:{MODEL}"
        assert j.extra["template"] == key and j.extra["parsed_by"] == "boxed"
        seen[text] = j.score
    assert seen == {BREAKFAST: 1.0, PODCAST: 0.0}  # 1.7 and -0.3 clamped to [0, 1]
    # the two templates differ: the "do not" one is not the positive one with another preference
    assert _template("boxed_negative") != _template("boxed_positive")


def test_vote_judge_makes_three_calls_and_takes_the_majority(db, monkeypatch):
    cases = (
        (BREAKFAST, ["It fits. \\boxed{yes}", "No, it is generic.", "\\boxed{YES}"], 1.0, [True, False, True]),
        (PODCAST, ["Yes.", "\\boxed{no}", "It ignores the wish. \\boxed{no}"], 0.0, [True, False, False]),
    )
    history = json.loads((FIXTURE / "chat_history_32k" / f"{DANA.split('-32k-')[1]}.json").read_text())["chat_history"]
    context = "\n".join(f"{m['role']}: {m['content']}" for m in history[-5:])
    for text, replies, score, votes in cases:
        run_id = _run_of(db, text)
        code, out, bodies = _judge(db, monkeypatch, [Reply.text(r) for r in replies] + [Reply.text("\\boxed{yes}")],
                                   run_id, "--judge", VOTE)  # fmt: skip
        assert code == 0, out
        assert len(bodies) == 3 and bodies[0] == bodies[1] == bodies[2]  # exactly three calls, the same prompt
        run, (j,) = _judgments(db, run_id, "personamem-v2-vote")
        (answer,) = run.final_responses()
        row = _row(text)
        expected = _template(
            "vote_narrow",
            related_conversation_snippet=context,
            user_query=row["user_query"],  # the raw cell, as the earlier official judge
            preference=row["preference"],
            correct_answer=row["correct_answer"],
            model_response=answer.text,
        )
        assert bodies[0]["messages"] == [{"role": "user", "content": expected}]
        assert "temperature" not in bodies[0] and "max_tokens" not in bodies[0]
        assert (j.score, j.extra["votes"], j.error) == (score, votes, None)
        assert j.raw.count("\n\n---\n\n") == 2


def test_a_call_failing_after_the_retries_is_a_failure_and_report_shows_the_tables(db, monkeypatch):
    fail = Reply.http_error(500, "the backend fell over", retry_after="0")
    breakfast, podcast = _run_of(db, BREAKFAST), _run_of(db, PODCAST)
    # boxed: every attempt fails -> three requests (first + 2 retries), no score, an error
    code, out, bodies = _judge(db, monkeypatch, [fail], breakfast, "--judge", BOXED)
    assert code == 1, out  # every judgment failed
    assert len(bodies) == 3
    _, (j,) = _judgments(db, breakfast, "personamem-v2-boxed")
    assert j.score is None and not j.parse_ok and "judge call failed" in j.error and "500" in j.error
    # vote: the first call says yes, the second keeps failing -> the verdict is a failure, not "no"
    code, out, bodies = _judge(db, monkeypatch, [Reply.text("\\boxed{yes}"), fail], breakfast, "--judge", VOTE)
    assert code == 1, out
    assert len(bodies) == 1 + 3  # the third vote is never asked
    _, (j,) = _judgments(db, breakfast, "personamem-v2-vote")
    assert j.score is None and not j.parse_ok and "judge call failed" in j.error
    # the podcast answer judged fine by both
    assert _judge(db, monkeypatch, [Reply.text("\\boxed{0.4}")], podcast, "--judge", BOXED)[0] == 0
    assert _judge(db, monkeypatch, [Reply.text("no")], podcast, "--judge", VOTE)[0] == 0
    tables = json.loads(cli(db, "report", "--json"))["tables"]
    (boxed,) = [t for t in tables if t["title"].startswith("PersonaMem-v2 open-ended score")]
    (vote,) = [t for t in tables if t["title"].startswith("PersonaMem-v2 open-ended vote")]
    for table, what, value in ((boxed, "mean", 0.4), (vote, "accuracy", 0.0)):
        (row,) = [r for r in table["rows"] if r["distance_bin"] == "all"]
        assert (row["judge"], row["n"], row["failed"], row[what]) == (f"openai:{MODEL}", 1, 1, pytest.approx(value))
        assert {r["distance_bin"] for r in table["rows"]} == {"0-1023", "1024-2047", "all"}  # 300 and 1500
    text = cli(db, "report")
    assert "PersonaMem-v2 open-ended score" in text and "PersonaMem-v2 open-ended vote" in text


def test_the_whole_batch_is_judged_through_its_label(db, monkeypatch):
    code, out, bodies = _judge(db, monkeypatch, [Reply.text("\\boxed{0.5}")], "--label", "open", "--judge", BOXED)
    assert code == 0, out
    assert len(bodies) == 6
    negatives = [b for b in bodies if b["messages"][0]["content"].startswith(_template("boxed_negative")[:60])]
    assert len(negatives) == 2  # the podcast row at 32k and at 128k
    (table,) = [t for t in json.loads(cli(db, "report", "--json"))["tables"] if "open-ended score" in t["title"]]
    (row,) = [r for r in table["rows"] if r["distance_bin"] == "all"]
    assert (row["n"], row["failed"], row["mean"]) == (6, 0, pytest.approx(0.5))
