"""`prefscope import --embed` and `prefscope embed`: vectors stored in the database by embedder id,
never twice; a RAG run afterwards embeds only what is new."""

from __future__ import annotations

import sqlite3

from click.testing import CliRunner

from tests.cli_runner import cli
from tests.conftest import SAMPLE_DATA
from tui.cli import main


def _vectors(db: str) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT model, count(*) FROM embeddings GROUP BY model").fetchall())


def test_import_with_embed_stores_every_history_text_once(tmp_path):
    db = str(tmp_path / "a.db")
    out = cli(db, "import", str(SAMPLE_DATA / "users" / "maya.json"), "--embed")
    assert "maya: 124 texts, 124 embedded now (all-MiniLM-L6-v2@onnx-fp32)" in out
    assert _vectors(db) == {"all-MiniLM-L6-v2@onnx-fp32": 124}
    again = cli(db, "embed", "maya")
    assert "maya: 124 texts, 0 embedded now" in again
    assert _vectors(db) == {"all-MiniLM-L6-v2@onnx-fp32": 124}


def test_embed_names_an_unknown_user(tmp_path):
    db = str(tmp_path / "a.db")
    cli(db, "import", str(SAMPLE_DATA / "users" / "maya.json"))
    result = CliRunner().invoke(main, ["--db", db, "embed", "nobody"])
    assert result.exit_code == 1 and "nobody" in result.output
    assert _vectors(db) == {}


def test_the_backend_setting_keys_vectors_apart(tmp_path, monkeypatch):
    db = str(tmp_path / "a.db")
    cli(db, "import", str(SAMPLE_DATA / "users" / "maya.json"), "--embed")
    monkeypatch.setenv("PREFSCOPE_EMBEDDING_BACKEND", "onnx-int8")
    out = cli(db, "embed", "maya")
    assert "124 embedded now (all-MiniLM-L6-v2@onnx-int8)" in out
    assert _vectors(db) == {"all-MiniLM-L6-v2@onnx-fp32": 124, "all-MiniLM-L6-v2@onnx-int8": 124}
