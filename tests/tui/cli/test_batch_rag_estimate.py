"""A RAG batch's estimate never embeds (BM25 stands in, counted and said so); the run that follows
embeds and retrieves for real, and stores who ranked."""

from __future__ import annotations

import re
import sqlite3

from app.workbench import Workbench
from core.settings import Settings
from tests.cli_runner import cli, unpaced_demo_models  # noqa: F401 (fixture)

GRID = ["--user", "maya", "--expression", "1", "--context", "normal", "--method", "rag", "--model", "demo:oracle"]
GRID += ["--query", "p1-open", "--query", "p3-open"]


def _count(db: str, sql: str) -> int:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchone()[0]


def _tokens(out: str) -> int:
    return int(re.search(r"prompt tokens\s+([\d,]+)", out).group(1).replace(",", ""))


def test_a_rag_dry_run_on_a_cold_database_embeds_nothing_and_the_run_then_retrieves(tmp_path, unpaced_demo_models):  # noqa: F811
    db = str(tmp_path / "a.db")
    Workbench.open(Settings(db=db), db).close()  # the sample users and their filler pool
    cold = cli(db, "batch", *GRID, "--dry-run")
    assert _count(db, "SELECT count(*) FROM embeddings") == 0
    zero_shot = cli(db, "batch", *[a if a != "rag" else "zero-shot" for a in GRID], "--dry-run")
    assert 0 < _tokens(zero_shot) < _tokens(cold)  # the retrieved turns are counted
    cli(db, "batch", *GRID, "--yes")
    assert _count(db, "SELECT count(*) FROM embeddings") > 100
    rows = _count(db, "SELECT count(*) FROM retrievals WHERE retrieved_by = 'all-MiniLM-L6-v2@onnx-fp32'")
    assert rows == 10  # two runs, top 5 each, ranked by the embedder
    assert _count(db, "SELECT count(*) FROM runs WHERE plan LIKE '%retrieval_stand_in%'") == 0
    warm = cli(db, "batch", *GRID, "--dry-run", "--retry-failed")
    assert "prompt tokens" in warm or "nothing to run" in warm.lower()
