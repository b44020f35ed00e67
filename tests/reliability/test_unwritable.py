"""A batch checks that it can write before its first model call: a full disk (a tiny
``max_page_count`` on the writer's connection) or a read-only database stops it at once, clearly."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import storage.db
import storage.writer
from tests.storage.export_fixtures import db_with_maya
from tui.cli import main

ARGS = ["batch", "--name", "nowhere", "--user", "maya", "--expression", "1", "--model", "demo:generic", "--yes"]


def limit_writer(monkeypatch, pragma) -> None:
    """The writer's connection (the one that stores answers) gets ``pragma(db)`` once opened."""
    opened = storage.writer.open_db

    def limited(*args, **kw):
        db = opened(*args, **kw)
        pragma(db)
        return db

    monkeypatch.setattr(storage.writer, "open_db", limited)


def full_disk(db) -> None:
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages}")  # not one page more: the disk is "full"


def read_only(db) -> None:
    db.execute("PRAGMA query_only = ON")


def runs_and_cells(db_path) -> tuple[int, int]:
    db = storage.db.open_db(db_path)
    try:
        return db.execute("SELECT count(*) FROM runs").fetchone()[0], db.execute(
            "SELECT count(*) FROM batch_cells"
        ).fetchone()[0]
    finally:
        db.close()


@pytest.mark.parametrize(
    ("pragma", "says"),
    [(full_disk, "disk is full"), (read_only, "read-only")],
    ids=["full-disk", "read-only"],
)
def test_batch_stops_before_any_call(tmp_path, monkeypatch, pragma, says):
    db_path = db_with_maya(tmp_path / "u.db")
    calls: list[object] = []
    import core.run.engine

    original = core.run.engine.Engine.run

    async def counted(self, *a, **kw):
        calls.append(a)
        return await original(self, *a, **kw)

    monkeypatch.setattr(core.run.engine.Engine, "run", counted)
    limit_writer(monkeypatch, pragma)
    result = CliRunner().invoke(main, ["--db", str(db_path), *ARGS], catch_exceptions=False)
    monkeypatch.undo()
    assert result.exit_code != 0, result.output
    assert "cannot write to" in result.output and says in result.output and "nothing was run" in result.output
    assert "Traceback" not in result.output
    assert calls == [] and runs_and_cells(db_path) == (0, 0)
