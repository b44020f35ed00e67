"""End to end through the real CLI and SQLite: import the real PrefEval topic, run a PrefEval MCQ
question with the offline models, and read back PrefEval's scoring (an oracle right, a reply in
PrefEval's `<choice>` format parsed by PrefEval's rule)."""

from __future__ import annotations

import re

import pytest

from storage.db import open_db
from storage.runs import load_run
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401
from tests.conftest import dataset

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")
USER = "prefeval-travel_restaurant-000"


def test_prefeval_mcq_is_scored_by_prefevals_rule(tmp_path):
    db = str(tmp_path / "prefscope.db")
    cli(db, "import", str(dataset("prefeval")))
    out = cli(
        db, "run", USER, f"{USER}-mcq", "--method", "prefeval-zero-shot", "--context", "prefeval-turns",
        "--turns", "2", "--expression", "1", "--model", "demo:oracle", "--model", "demo:generic",
        "--judge", "demo:heuristic", "--plain",
    )  # fmt: skip
    run_id = re.search(r"stored as run (\S+)", out).group(1)
    conn = open_db(db)
    try:
        run = load_run(conn, run_id)
    finally:
        conn.close()
    assert [s.name for s in run.plan.steps] == ["preference", "answer"]
    assert run.plan.answer_format == "mcq-prefeval"
    scores = {}
    for j in run.judgments:
        if j.kind == "choice":
            assert j.prompt_version == "prefeval-choice-v1" and j.parse_ok
            scores[next(r.model for r in run.responses if r.id == j.response_id)] = j.score
    assert scores["demo:oracle"] == 1.0
    assert set(scores) == {"demo:oracle", "demo:generic"}
