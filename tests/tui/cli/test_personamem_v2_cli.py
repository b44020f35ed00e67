"""PersonaMem-v2 end to end through the commands a researcher types, on a real SQLite file: import
the released layout (benchmark CSV + history JSON files), print the official messages, run the demo
models, report accuracy per distance bin, and bring in an official result CSV with its recorded
verdicts, re-scored by the official extraction."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from core.benchmarks.personamem_v2.rows import row_key
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401

FIXTURE = Path(__file__).parents[2] / "fixtures" / "personamem_v2" / "data"
CSV = FIXTURE / "benchmark" / "text" / "benchmark.csv"
DANA = "personamem-v2-32k-chat_history_250301_101500_persona3"


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "pm2.db")
    out = cli(path, "import", str(CSV))
    assert "(personamem-v2): 3 users added" in out and "11 queries" in out
    return path


def _history(name: str) -> list[dict]:
    return json.loads((FIXTURE / "chat_history_32k" / name).read_text(encoding="utf-8"))["chat_history"]


def _rows() -> list[dict]:
    with CSV.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _messages(db: str, user: str, query: str, *extra: str) -> tuple[list[dict], dict]:
    out = json.loads(cli(db, "prompt", user, query, "--json", *extra))
    plan = out.get("plan", out)
    return plan["steps"][-1]["messages"], plan


def _mcq_id(db: str, user: str, text: str) -> str:
    """The stored id of a row's MCQ question: its key (persona, query cell, correct answer) + -mcq."""
    row = next(r for r in _rows() if text in r["user_query"])
    return f"{row_key(row['persona_id'], row['user_query'], row['correct_answer'])}-mcq"


def test_the_profile_prompt_is_the_history_then_the_query_then_the_mcq_instruction_as_system(db):
    qid = _mcq_id(db, DANA, "Can you suggest a weekend breakfast for me?")
    messages, plan = _messages(db, DANA, qid)
    history = _history("chat_history_250301_101500_persona3.json")
    assert plan["method"] == "personamem-v2" and plan["answer_format"] == "mcq-personamem-v2"
    assert [{"role": m["role"], "content": m["content"]} for m in messages[:-2]] == history  # persona first
    user, instruction = messages[-2], messages[-1]
    assert user["role"] == "user" and user["content"].startswith("Can you suggest a weekend breakfast for me? ")
    assert instruction["role"] == "system"
    lines = instruction["content"].split("\n\n")[1].split("\n")
    row = _rows()[0]
    assert sorted(line[3:] for line in lines) == sorted([row["correct_answer"], *json.loads(row["incorrect_answers"])])
    assert [line[:3] for line in lines] == ["A. ", "B. ", "C. ", "D. "]
    assert instruction["content"].rstrip().endswith("Final Answer: [Letter].")
    # the open-ended (generative) prompt: the same without the instruction
    open_messages, open_plan = _messages(db, DANA, qid.replace("-mcq", "-open"))
    assert open_messages == messages[:-1] and open_plan["answer_format"] == "open"


@pytest.mark.usefixtures("unpaced_demo_models")
def test_demo_models_answer_and_report_gives_accuracy_per_distance_bin(db):
    base = ["--query-kind", "mcq", "--context", "full", "--model", "demo:oracle", "--model", "demo:generic", "--yes"]
    assert "done: 10 ok, 0 failed" in cli(db, "batch", *base, "--method", "personamem-v2", "--name", "pm2")
    assert "done: 10 ok, 0 failed" in cli(db, "batch", *base, "--method", "personamem-v2-user-roles", "--name", "cl")
    tables = json.loads(cli(db, "report", "--batch", "cl", "--by", "model", "--json"))["tables"]
    (table,) = [t for t in tables if t["title"].startswith("PersonaMem-v2 MCQ accuracy by distance bin")]
    got = {(r["model"].removesuffix(" [demo]"), r["distance_bin"]): (r["n"], r["accuracy"]) for r in table["rows"]}
    # distances 300 (32k), 1500, 2100.0 and the 128k ones 2047, 1024 -> their 1,024-token bins
    assert {b for _, b in got} == {"0-1023", "1024-2047", "2048-3071", "all"}
    assert got[("demo:oracle", "1024-2047")] == (3, 1.0) and got[("demo:oracle", "all")] == (5, 1.0)
    assert got[("demo:generic", "all")][0] == 5
    # the official layout puts the options in a trailing system message: the demo models read it there
    tables = json.loads(cli(db, "report", "--batch", "pm2", "--by", "model", "--json"))["tables"]
    (table,) = [t for t in tables if t["title"].startswith("PersonaMem-v2 MCQ accuracy")]
    assert {r["failed"] for r in table["rows"]} == {0}
    official = {(r["model"].removesuffix(" [demo]"), r["distance_bin"]): r["accuracy"] for r in table["rows"]}
    assert official[("demo:oracle", "all")] == 1.0


@pytest.mark.usefixtures("unpaced_demo_models")
def test_run_one_open_question_with_a_demo_model(db):
    qid = _mcq_id(db, DANA, "Can you suggest a weekend breakfast for me?").replace("-mcq", "-open")
    out = cli(db, "run", DANA, qid, "--model", "demo:oracle", "--plain")
    assert "stored as run" in out


def test_official_result_csv_imports_with_recorded_verdicts_and_is_rescored(db, tmp_path):
    rows = _rows()
    folder = tmp_path / "results" / "multimodal" / "gpt-5-chat"
    folder.mkdir(parents=True)
    path = folder / "evaluation_results_both_10012025_120000.csv"
    replies = [  # (mcq reply, predicted, is_correct, open reply, narrow), worked by hand
        ("Reasoning. Final Answer: B", "B", "True", "Try a tofu scramble.", "0.9"),
        ("Final Answer: **C**", "", "False", "ERROR: timeout", ""),
        ("I choose \\boxed{A}", "A", "False", "A printed guide.", "True"),
        ("ERROR: rate limited", "", "", "", ""),
    ]
    cols = list(rows[0]) + [
        f"{c}_{s}"
        for s in ("32k", "128k")
        for c in ("model_response_mcq", "predicted_answer_mcq", "is_correct_mcq", "model_response_openended")
    ]
    cols += ["is_correct_openended_32k_narrow", "judge_responses_32k_narrow"]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for row, (mcq, pred, ok, open_reply, narrow) in zip(rows, replies, strict=True):
            w.writerow(
                {
                    **row,
                    "model_response_mcq_32k": mcq,
                    "predicted_answer_mcq_32k": pred,
                    "is_correct_mcq_32k": ok,
                    "model_response_openended_32k": open_reply,
                    "is_correct_openended_32k_narrow": narrow,
                    "judge_responses_32k_narrow": f"Judge 1 (score: {narrow}): ok" if narrow else "",
                }
            )
    out = cli(db, "import-results", str(path))
    # 3 MCQ replies + 2 open ones (ERROR and empty cells skipped); model from the folder name
    assert "5 runs added" in out and "5 of 5 matched a stored user" in out
    assert "gpt-5-chat" in out or "gpt-5-chat" in cli(db, "runs", "--json")
    report = json.loads(cli(db, "report", "--model", "imported:gpt-5-chat", "--json"))["tables"]
    (mcq,) = [t for t in report if t["title"].startswith("PersonaMem-v2 MCQ accuracy")]
    recorded = {r["distance_bin"]: (r["n"], r["accuracy"]) for r in mcq["rows"] if r["source"] == "recorded"}
    assert recorded == {"0-1023": (1, 0.0), "1024-2047": (1, 1.0), "2048-3071": (1, 0.0), "all": (3, 1 / 3)}
    (boxed,) = [t for t in report if t["title"].startswith("PersonaMem-v2 open-ended score")]
    assert [(r["distance_bin"], r["mean"]) for r in boxed["rows"]] == [("1024-2047", 0.9), ("all", 0.9)]
    (vote,) = [t for t in report if t["title"].startswith("PersonaMem-v2 open-ended vote")]
    assert [(r["distance_bin"], r["accuracy"]) for r in vote["rows"]] == [("2048-3071", 1.0), ("all", 1.0)]
    # re-scoring: the official extraction finds the recorded letter -> the file's verdict stands
    cli(db, "judge", "--label", "imported:*", "--judge", "choice")
    report = json.loads(cli(db, "report", "--model", "imported:gpt-5-chat", "--json"))["tables"]
    (mcq,) = [t for t in report if t["title"].startswith("PersonaMem-v2 MCQ accuracy")]
    parser = {r["distance_bin"]: (r["n"], r["failed"], r["accuracy"]) for r in mcq["rows"] if r["source"] == "parser"}
    assert parser["all"] == (3, 0, 1 / 3)
