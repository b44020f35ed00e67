"""`prefscope import-results`, then judge, export and `report --by turns,model` on the imported runs."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tests.cli_runner import cli
from tests.conftest import dataset
from tui.cli import main


def _results(tmp_path):
    records = [
        {
            "preference": f"I avoid seafood {i}.",
            "question": f"Where should I eat in Lisbon {i}?",
            "response_to_pref": "Noted.",
            "response_to_q": "Try the grilled sardines." if i % 2 else "Try a steakhouse, no seafood.",
        }
        for i in range(3)
    ]
    folder = tmp_path / "results" / "remind" / "travel_restaurant"
    folder.mkdir(parents=True)
    for turns in (2, 10):
        (folder / f"claude3hk_travel_restaurant_{turns}interturn.json").write_text(json.dumps(records))
    return tmp_path / "results"


def test_import_judge_and_report_by_turns(tmp_path):
    db = str(tmp_path / "x.db")
    folder = _results(tmp_path)
    out = cli(db, "import-results", str(folder))
    assert "6 runs added" in out and "0 of 6 matched" in out and "3 new users" in out
    assert "nothing new to store" in cli(db, "import-results", str(folder), "--format", "prefeval")
    runs = json.loads(cli(db, "runs", "--json"))
    assert len(runs) == 6 and {tuple(r["models"]) for r in runs} == {("imported:claude3hk",)}
    for r in runs:
        cli(db, "judge", r["id"], "--judge", "demo:heuristic")
    report = cli(db, "report", "--by", "turns,model")
    lines = [ln.split() for ln in report.splitlines() if ln.split()[1:2] == ["imported:claude3hk"]]
    assert [(ln[0], ln[2]) for ln in lines] == [("2", "3"), ("10", "3")]
    export = tmp_path / "e.csv"
    cli(db, "export", "--format", "csv", "--out", str(export))
    header = export.read_text().splitlines()[0].split(",")
    assert "turns" in header and "provider" in header


def test_bad_record_exits_1_naming_file_record_and_field(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"user": "u", "query": "q", "model": "m", "answer": 5}) + "\n")
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "import-results", str(path)])
    assert result.exit_code == 1
    assert "a.jsonl: line 1: answer: expected a string" in result.output
    missing = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "import-results", str(tmp_path / "none")])
    assert missing.exit_code == 1 and "no such file" in missing.output
    unlinked = tmp_path / "b.jsonl"
    unlinked.write_text(json.dumps({"user": "u", "query": "q", "model": "m", "answer": "x"}) + "\n")
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "x.db"), "import-results", str(unlinked)])
    assert result.exit_code == 1 and "b.jsonl: line 1: user: no stored user 'u'" in result.output


def test_sft_folder_with_the_benchmark_topic(tmp_path):
    root = dataset("prefeval")
    db = str(tmp_path / "x.db")
    cli(db, "import", str(root / "explicit_preference" / "travel_restaurant.json"))
    out = cli(db, "import-results", str(root / "SFT"))
    assert "336 runs added" in out and "312 of 336 matched a stored user" in out
    assert "336 already stored" in cli(db, "import-results", str(root / "SFT"))


def test_help_ends_with_two_examples():
    result = CliRunner().invoke(main, ["import-results", "--help"])
    assert result.exit_code == 0
    assert result.output.rstrip().splitlines()[-3].strip() == "Examples:"
