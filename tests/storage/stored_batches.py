"""Stored demo batches for the compare / report-sweep tests: a real SQLite file filled by the
`prefscope` commands run in-process (import, batch, judge), with paced-off demo models.

Module-scoped fixtures build them once per module; the env (data dirs, demo pace) is set for the
build here because the per-test isolation fixtures are function-scoped."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA
from tui.cli import main

BOTH = ("--user", "maya", "--user", "priya")
OPEN_NORMAL = (*BOTH, "--query-kind", "open", "--expression", "1", "--context", "normal")
MCQ_SIMPLE = (*BOTH, "--query-kind", "mcq", "--expression", "1", "--context", "simple")
SWEEP = (
    *("--user", "maya", "--query", "p1-open", "--query", "p2-open", "--expression", "1"),
    *("--context", "simple", "--context", "normal"),
    *("--evidence-depth", "0", "--evidence-depth", "0.5", "--evidence-depth", "1"),
    *("--model", "demo:forgetful", "--model", "demo:oracle", "--repeats", "2", "--temperature", "0.8"),
)


@contextmanager
def build_env(root: Path):
    """The env the per-test fixtures would give, for a module-scoped build."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
            mp.setenv(name, str(root / name.lower()))
        mp.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
        mp.delenv("PREFSCOPE_CONFIG", raising=False)
        yield


def new_db(root: Path) -> str:
    db = str(root / "batches.db")
    cli(db, "import", str(SAMPLE_DATA / "users"))
    cli(db, "import", str(SAMPLE_DATA / "filler"))
    return db


def batch(db: str, name: str, *args: str, judge: str = "demo:heuristic") -> None:
    cli(db, "batch", "--name", name, *args, "--judge", judge, "--yes")


def judge_again(db: str, label: str, *args: str) -> int:
    """`prefscope judge --label LABEL …`; returns its exit code (1 when every judgment failed)."""
    result = CliRunner().invoke(main, ["--db", db, "judge", "--label", label, *args], catch_exceptions=False)
    assert result.exit_code in (0, 1, 3), result.output
    return result.exit_code


def rows(db: str, sql: str, *args) -> list[tuple]:
    """Read the stored rows ourselves, with the standard library, not through storage."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


#: Latest judgment per response and judge model, with the item's key as `compare` pairs it.
SCORES = """
    SELECT r.user_id, r.query_id, r.expression_type, r.context, json_extract(r.spec, '$.turns'),
           json_extract(r.spec, '$.evidence_depth'), r.seed, coalesce(json_extract(r.spec, '$.repeat'), 0),
           r.method, p.model, j.score, j.parse_ok, r.id, p.id, r.label, json_extract(p.params, '$.temperature')
    FROM judgments j JOIN responses p ON p.id = j.response_id JOIN runs r ON r.id = j.run_id
    WHERE j.kind = ? AND j.dimension = ? AND j.judge_model = ?
      AND j.id = (SELECT max(j2.id) FROM judgments j2 WHERE j2.response_id = j.response_id
                  AND j2.kind = j.kind AND j2.dimension = j.dimension AND j2.judge_model = j.judge_model)
    ORDER BY j.id"""
