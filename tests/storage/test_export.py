"""`prefscope export`: CSV/JSONL round trips through pandas, formula neutralising, no secrets."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from storage.db import open_db
from storage.export import LONG_COLUMNS, WIDE_BASE, Cleaner, RunFilter, export, long_rows, wide_rows
from tests.storage.export_fixtures import Writer, db_with_tiny, judgment
from tui.cli import main

TRICKY = {
    "formula": '=HYPERLINK("http://x","click")',
    "plus": "+1 and more",
    "minus": "- a markdown bullet",
    "at": "@SUM(A1:A2)",
    "tab": "\tindented",
    "cr": "\rreturn",
    "multiline": 'Line one, with "quotes"\nline two; semicolon\r\nline three ✓ é',
    "plain": "Just text.",
}


@pytest.fixture
def db_path(tmp_path):
    path = db_with_tiny(tmp_path / "e.db")
    w = Writer(path)
    for name, text in TRICKY.items():
        w.run(
            text=text,
            model="demo:generic" if name == "plain" else "openai:gpt-x",
            label=name,
            cost=None if name == "minus" else 0.0025,
            judgments=[
                judgment(score=4.0),
                judgment(dimension="awareness", score=2.0),
                judgment(score=1.0, judge="demo:heuristic", heuristic=True),
                judgment(dimension="quality", parse_ok=False),
            ],
        )
    # A multi-step run: only its final step is exported.
    w.run(
        text="final answer",
        extra_steps=2,
        method="workflow",
        query="q-mcq",
        expression=None,
        judgments=[judgment(kind="choice", dimension="accuracy", score=1.0, judge="parser:choice", scale=(0, 1))],
    )
    w.close()
    return path


def _csv(db_path, **kw) -> str:
    db = open_db(db_path)
    try:
        buf = io.StringIO(newline="")
        export(db, buf, **kw)
        return buf.getvalue()
    finally:
        db.close()


def test_wide_csv_round_trips_through_pandas_with_dtypes(db_path):
    df = pd.read_csv(io.StringIO(_csv(db_path)), keep_default_na=True)
    assert len(df) == len(TRICKY) + 1  # one row per FINAL response; intermediate steps excluded
    score_cols = [c for c in df.columns if c.startswith("score_")]
    assert list(df.columns) == WIDE_BASE + score_cols + ["text"]
    assert set(score_cols) == {  # the source only where two sources score the same dimension
        "score_rubric_alignment_llm",
        "score_rubric_awareness",
        "score_rubric_alignment_heuristic",
        "score_rubric_quality",
        "score_choice_accuracy",
    }
    assert df["is_demo"].dtype == bool and df["cache_hit"].dtype == bool
    assert df.loc[df.label == "plain", "is_demo"].item() and not df.loc[df.label == "plus", "is_demo"].item()
    assert df["input_tokens"].dtype.kind == "i" and df["output_tokens"].dtype.kind == "i"
    for col in ("ttft_ms", "duration_ms", "cost_usd", *score_cols):
        assert df[col].dtype.kind == "f", col
    # Unknown cost is empty (NaN), never 0; known cost is the number.
    assert df.loc[df.label == "minus", "cost_usd"].isna().item()
    assert df.loc[df.label == "plus", "cost_usd"].item() == pytest.approx(0.0025)
    row = df[df.label == "plus"].iloc[0]
    assert row["score_rubric_alignment_llm"] == 4.0
    assert row["score_rubric_alignment_heuristic"] == 1.0
    assert pd.isna(row["score_rubric_quality"])  # parse failure: no score …
    assert row["parse_failures"] == 1  # … but counted
    assert df.loc[df.method == "workflow", "text"].item() == "final answer"
    assert df.loc[df.method == "workflow", "parse_failures"].item() == 0


def test_formula_cells_are_neutralised_and_text_otherwise_exact(db_path):
    df = pd.read_csv(io.StringIO(_csv(db_path)))
    texts = dict(zip(df.label, df.text))
    for name, original in TRICKY.items():
        got = texts[name]
        if original[:1] in ("=", "+", "-", "@", "\t", "\r"):
            assert got == "'" + original, name
        else:
            assert got == original, name
    # The csv module quoted the embedded newlines and quotes: the multi-line text survived intact.
    assert "line two; semicolon\r\nline three ✓ é" in texts["multiline"]


def test_jsonl_round_trips_verbatim(db_path):
    db = open_db(db_path)
    buf = io.StringIO()
    n = export(db, buf, fmt="jsonl")
    db.close()
    lines = buf.getvalue().splitlines()
    assert n == len(lines) == len(TRICKY) + 1
    first = json.loads(lines[0])
    assert list(first)[: len(WIDE_BASE)] == WIDE_BASE
    df = pd.read_json(io.StringIO(buf.getvalue()), lines=True)
    texts = dict(zip(df.label, df.text))
    assert texts == {**{k: v for k, v in TRICKY.items()}, "": "final answer"}  # JSONL is not neutralised
    assert df.loc[df.label == "minus", "cost_usd"].isna().item()
    assert df["is_demo"].dtype == bool


def test_long_layout_is_one_row_per_judgment(db_path):
    db = open_db(db_path)
    cols, rows = long_rows(db)
    rows = list(rows)
    n_judgments = db.execute("SELECT count(*) FROM judgments").fetchone()[0]
    db.close()
    assert cols == LONG_COLUMNS
    assert len(rows) == n_judgments == 4 * len(TRICKY) + 1
    df = pd.read_csv(io.StringIO(_csv(db_path, layout="long")))
    assert len(df) == n_judgments and "text" not in df.columns  # model output never mixed with verdicts
    heur = df[df.heuristic]
    assert set(heur.judge_model) == {"demo:heuristic"} and (heur.score == 1.0).all()
    assert (df[~df.parse_ok].score.isna()).all() and len(df[~df.parse_ok]) == len(TRICKY)


def test_filters_select_runs_and_models(db_path):
    db = open_db(db_path)
    _, rows = wide_rows(db, RunFilter(models=["demo:generic"]))
    assert [r[2] for r in rows] == ["plain"]
    _, rows = wide_rows(db, RunFilter(run_ids=["run-00001", "run-00002"]))
    assert [r[0] for r in rows] == ["run-00001", "run-00002"]
    _, rows = wide_rows(db, RunFilter(methods=["workflow"]))
    assert len(list(rows)) == 1
    _, rows = wide_rows(db, RunFilter(since="2026-01-01T00:00:05"))
    assert len(list(rows)) == len(TRICKY) + 1 - 4
    db.close()


def test_cleaner_redacts_env_secrets_and_key_shapes():
    env = {"OPENAI_API_KEY": "sk-test-abcdefghijklmnop0123", "HOME": "/home/me"}
    clean = Cleaner(neutralise=True, environ=env)
    assert clean("my key is sk-test-abcdefghijklmnop0123!") == "my key is [redacted]!"
    assert clean("other sk-proj-ZZZZZZZZZZZZZZZZZZZZ here") == "other [redacted] here"
    assert clean("/home/me stays") == "/home/me stays"
    assert clean(-3.5) == -3.5  # numbers are never neutralised


def test_cli_export_writes_a_file(db_path, tmp_path):
    out = tmp_path / "out.csv"
    result = CliRunner().invoke(
        main, ["--db", str(db_path), "export", "--user", "u1", "--layout", "wide", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert len(pd.read_csv(out)) == len(TRICKY) + 1
    result = CliRunner().invoke(main, ["--db", str(db_path), "export", "--format", "jsonl", "--model", "demo:generic"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1 and json.loads(lines[0])["is_demo"] is True
