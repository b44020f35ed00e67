"""`prefscope export --format inspect` (.eval and .json) and `prefscope import-results` of the logs:
the round trip brings back every answer with the same scores, as recorded judgments."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)
from tests.storage.stored_batches import batch, new_db
from tui.cli import main

SCORES = """SELECT r.user_id, r.query_id, p.text, j.kind, j.dimension, j.score FROM judgments j
            JOIN responses p ON p.id = j.response_id JOIN runs r ON r.id = j.run_id
            WHERE j.judge_model = ? AND r.id {op} 'run-imported-%' ORDER BY 1, 2, 3, 4, 5, 6"""


def rows(db: str, judge: str, imported: bool) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(SCORES.format(op="LIKE" if imported else "NOT LIKE"), [judge]).fetchall()
    finally:
        conn.close()


@pytest.mark.usefixtures("unpaced_demo_models")
@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_export_then_import_gives_the_same_scores(tmp_path, suffix):
    db = new_db(tmp_path)
    batch(
        db,
        "rt",
        "--user",
        "maya",
        "--query",
        "p1-open",
        "--expression",
        "1",
        "--context",
        "simple",
        "--model",
        "demo:oracle",
        "--repeats",
        "2",
    )
    out = tmp_path / f"rt{suffix}"
    cli(db, "export", "--batch", "rt", "--format", "inspect", "--out", str(out))
    assert out.exists()
    copy = str(tmp_path / "copy.db")
    shutil.copy(db, copy)
    output = cli(copy, "import-results", str(out))
    assert "2 runs added" in output
    made = rows(copy, "demo:heuristic", imported=False)
    back = rows(copy, "recorded:demo:heuristic", imported=True)
    assert made and back == made
    # a demo model's answers read back stay labelled demo
    conn = sqlite3.connect(copy)
    try:
        flags = conn.execute(
            "SELECT DISTINCT model, is_demo FROM responses WHERE run_id LIKE 'run-imported-%'"
        ).fetchall()
    finally:
        conn.close()
    assert flags == [("imported:demo:oracle", 1)]


@pytest.mark.usefixtures("unpaced_demo_models")
def test_one_file_per_model_when_the_selection_has_several(tmp_path):
    db = new_db(tmp_path)
    batch(
        db,
        "two",
        "--user",
        "maya",
        "--query",
        "p1-open",
        "--expression",
        "1",
        "--context",
        "simple",
        "--model",
        "demo:oracle",
        "--model",
        "demo:forgetful",
    )
    out = tmp_path / "two.eval"
    cli(db, "export", "--batch", "two", "--format", "inspect", "--out", str(out))
    assert sorted(p.name for p in tmp_path.glob("two*.eval")) == [
        "two_two_demo-forgetful.eval",
        "two_two_demo-oracle.eval",
    ]


def test_inspect_needs_an_eval_or_json_out(tmp_path):
    db = str(tmp_path / "e.db")
    result = CliRunner().invoke(main, ["--db", db, "export", "--format", "inspect", "--out", str(tmp_path / "x.csv")])
    assert result.exit_code == 2 and ".eval or .json" in result.output
