"""PersonaMem end to end through the commands a researcher types, on a real SQLite file: import the
released layout, see the question's place and evidence depth, print its exact prompt, run the demo
models over its MCQ questions and report accuracy by question type, and bring in PersonaMem's own
result CSV, re-scored by its rule."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tui.cli import main

FIXTURE = Path(__file__).parents[2] / "core" / "formats" / "fixtures" / "personamem"
LENA = "personamem-32k-ctx-lena-01"


@pytest.fixture
def db(tmp_path) -> str:
    path = str(tmp_path / "pm.db")
    out = cli(path, "import", str(FIXTURE / "questions_32k.csv"))
    assert "(personamem): 2 users added" in out and "4 queries" in out
    return path


def _contexts() -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for line in (FIXTURE / "shared_contexts_32k.jsonl").read_text(encoding="utf-8").splitlines():
        out.update(json.loads(line))
    return out


def test_prompt_with_full_context_is_the_context_up_to_the_end_index_then_the_question(db):
    plan = json.loads(cli(db, "prompt", LENA, "q-lena-2", "--context", "full", "--method", "personamem", "--json"))
    messages = plan["plan"]["steps"][-1]["messages"] if "plan" in plan else plan["steps"][-1]["messages"]
    context = _contexts()["ctx-lena-01"]
    assert [{"role": m["role"], "content": m["content"]} for m in messages[:-1]] == context[:10]
    assert messages[-1]["role"] == "user"
    assert messages[-1]["content"].startswith("Where should I stay in the Lakes?\n\n")
    assert messages[-1]["content"].endswith('"(d) A chain hotel near the motorway."]')


def test_show_marks_where_the_question_is_asked_and_its_evidence_depth(db):
    out = CliRunner().invoke(main, ["--db", db, "show", LENA, "--query", "q-lena-2"], env={"COLUMNS": "160"}).output
    assert "▶ reference 25 tokens (0 blocks, 0.08 of the context) before the question" in out
    assert "no turn-level evidence labels" in out
    lines = out.splitlines()
    asked = next(i for i, ln in enumerate(lines) if "question asked here" in ln)
    assert "m000006" in lines[asked - 1] and "m000010" in lines[asked + 1]


@pytest.mark.usefixtures("unpaced_demo_models")
def test_a_demo_batch_over_the_mcq_questions_reports_accuracy_by_question_type(db, tmp_path):
    args = ["--query-kind", "mcq", "--context", "full", "--method", "personamem", "--model", "demo:oracle"]
    out = cli(db, "batch", *args, "--model", "demo:generic", "--name", "pm", "--yes")
    assert "done: 8 ok, 0 failed" in out
    report = json.loads(cli(db, "report", "--batch", "pm", "--by", "question_type,model", "--json"))
    table = report[0] if isinstance(report, list) else report
    rows = table["rows"] if "rows" in table else table["tables"][0]["rows"]
    got = {(r["question_type"], r["model"].removesuffix(" [demo]")): (r["n"], r["mean"]) for r in rows}
    types = {
        "recall_user_shared_facts",
        "acknowledge_latest_user_preferences",
        "track_full_preference_evolution",
        "suggest_new_ideas",
    }
    assert {t for t, _ in got} == types
    # demo:oracle answers each question's gold letter in PersonaMem's format: all right
    assert all(got[(t, "demo:oracle")] == (1, 1.0) for t in types)
    assert all(got[(t, "demo:generic")][0] == 1 for t in types)


def test_personamem_result_csv_imports_and_rescoring_agrees_with_its_recorded_score(db, tmp_path):
    rows = [  # score as PersonaMem's rule gives it, worked out by hand
        ("True", "7", "q-lena-1", "Dairy is out, so <final_answer>(b)</final_answer>", "(b)"),
        ("False", "7", "q-lena-2", "Either (a) or (c). <final_answer>(a) or (c)", "(c)"),
        ("True", "7", "q-lena-3", "They went from hostels to guesthouses: (a)", "(a)"),
        ("False", "12", "q-omar-1", "c is a good idea", "(d)"),
    ]
    path = tmp_path / "gpt-4o-mini_32k.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["score", "persona_id", "question_id", "user_question_or_message", "question_type"]
            + ["model_response", "len_of_model_response", "predicted_answer", "correct_answer"]
        )
        for score, persona, qid, reply, correct in rows:
            w.writerow([score, persona, qid, "the question", "t", reply, len(reply), "", correct])
    out = cli(db, "import-results", str(path))
    assert "4 runs added" in out and "4 of 4 matched a stored user" in out
    cli(db, "judge", "--label", "imported:*", "--judge", "choice")
    export = tmp_path / "runs.csv"
    cli(db, "export", "--batch", f"imported:{path.name}", "--out", str(export))
    with export.open(newline="", encoding="utf-8") as fh:
        exported = list(csv.DictReader(fh))
    by_query = {r["query_id"]: r for r in exported}
    for score, _, qid, _, _ in rows:
        assert float(by_query[qid]["score_choice_accuracy"]) == (1.0 if score == "True" else 0.0), qid
        assert by_query[qid]["method"] == "personamem-merged"  # 'o' in the model name, as the script decides


def test_result_rows_for_questions_not_imported_fail_naming_the_line(db, tmp_path):
    path = tmp_path / "results_32k.csv"
    path.write_text(
        "score,persona_id,question_id,user_question_or_message,model_response,correct_answer\n"
        "True,7,q-nobody,q,<final_answer>(a),(a)\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["--db", db, "import-results", str(path)])
    assert result.exit_code == 1
    assert "results_32k.csv: line 2: match: no stored question has question_id 'q-nobody'" in result.output


def test_a_question_stored_in_two_sizes_needs_the_size_in_the_file_name(db, tmp_path):
    other = tmp_path / "data128"
    other.mkdir()
    (other / "questions_128k.csv").write_bytes((FIXTURE / "questions_32k.csv").read_bytes())
    (other / "shared_contexts_128k.jsonl").write_bytes((FIXTURE / "shared_contexts_32k.jsonl").read_bytes())
    cli(db, "import", str(other / "questions_128k.csv"))
    body = "score,persona_id,question_id,user_question_or_message,model_response,correct_answer\n"
    body += "True,7,q-lena-1,q,<final_answer>(b),(b)\n"
    unsized = tmp_path / "results.csv"
    unsized.write_text(body, encoding="utf-8")
    result = CliRunner().invoke(main, ["--db", db, "import-results", str(unsized)])
    assert result.exit_code == 1
    assert "2 stored questions have question_id 'q-lena-1', persona_id '7'" in result.output
    assert "name the size in the file name" in result.output and "nothing was stored" in result.output
    sized = tmp_path / "results_128k.csv"
    sized.write_text(body, encoding="utf-8")
    assert "1 of 1 matched a stored user" in cli(db, "import-results", str(sized))
