"""The results grid's one query against a database filled by the real `batch` and `run` commands:
one row per final answer, every score column present, the latest judgment per column."""

from __future__ import annotations

from storage.analyses import save_human_judgment
from storage.db import open_db
from storage.results_grid import ScoreColumn, load_grid
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401

HEURISTIC = ("rubric", "demo:heuristic", True, False)


def _filled(tmp_path) -> str:
    db = str(tmp_path / "grid.db")
    cli(db, "import", "sample_data")
    cli(db, "batch", "--name", "b1", "--user", "maya", "--query", "p1-open", "--query", "p1-mcq",
        "--model", "demo:generic", "--model", "demo:oracle", "--judge", "demo:heuristic", "-y")  # fmt: skip
    cli(db, "run", "priya", "p2-open", "--model", "demo:retrieval", "--judge", "demo:heuristic")
    return db


def test_one_row_per_final_answer_with_its_scores(tmp_path, unpaced_demo_models):  # noqa: F811
    db = open_db(_filled(tmp_path))
    grid = load_grid(db)

    finals = db.execute("SELECT id, run_id, model, status FROM responses WHERE is_final = 1").fetchall()
    assert sorted(r.response_id for r in grid.rows) == sorted(f[0] for f in finals)
    assert len(grid.rows) == 5  # 2 queries × 2 models in the batch, 1 single run

    newest = grid.rows[0]  # the single run came last, so it comes first
    assert (newest.user_id, newest.query_id, newest.model, newest.batch) == ("priya", "p2-open", "demo:retrieval", "")
    batch = [r for r in grid.rows if r.batch == "b1"]
    assert len(batch) == 4 and {(r.query_id, r.query_kind) for r in batch} == {("p1-open", "open"), ("p1-mcq", "mcq")}
    assert {r.model for r in batch} == {"demo:generic", "demo:oracle"}

    dims = {(c.kind, c.dimension) for c in grid.columns}
    assert {("rubric", "alignment"), ("rubric", "awareness"), ("rubric", "quality"), ("choice", "accuracy")} <= dims
    stored = db.execute(
        "SELECT response_id, kind, dimension, judge_model, heuristic, human, score FROM judgments ORDER BY id"
    ).fetchall()
    assert stored
    for rid, kind, dim, judge, heur, human, score in stored:
        row = next(r for r in grid.rows if r.response_id == rid)
        assert row.scores[ScoreColumn(kind, dim, judge, bool(heur), bool(human))] == score


def test_latest_judgment_wins_and_human_scores_are_their_own_column(tmp_path, unpaced_demo_models):  # noqa: F811
    db = open_db(_filled(tmp_path))
    row = load_grid(db).rows[0]
    alignment = ScoreColumn("rubric", "alignment", "demo:heuristic", True, False)
    before = row.scores[alignment]
    save_human_judgment(db, row.run_id, row.response_id, kind="rubric", dimension="alignment", score=5.0, scale=(1, 5))
    # a second heuristic judgment on the same column (as `prefscope judge` stores one)
    with db.conn:
        db.execute(
            "INSERT INTO judgments (run_id, response_id, kind, dimension, score, parse_ok, judge_model, heuristic, "
            "created_at) VALUES (?, ?, 'rubric', 'alignment', ?, 1, 'demo:heuristic', 1, '2030-01-01')",
            [row.run_id, row.response_id, 6 - before],
        )
    grid = load_grid(db)
    again = next(r for r in grid.rows if r.response_id == row.response_id)
    assert again.scores[alignment] == 6 - before
    human = ScoreColumn("rubric", "alignment", "human:operator", False, True)
    assert again.scores[human] == 5.0
    assert grid.columns[-1] == human  # the operator's columns come after the judges'
