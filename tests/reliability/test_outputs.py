"""Outputs never clobber inputs: export/report files are refused on a database, replace an existing
file only with --force, and land whole or not at all (temp file + rename)."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from app.workbench import Workbench
from storage.db import open_db, table_counts
from storage.output_files import OutputRefused
from tests.storage.export_fixtures import Writer, db_with_tiny, judgment
from tui.cli import main


@pytest.fixture
def db(tmp_path):
    path = db_with_tiny(tmp_path / "work.db")
    w = Writer(path)
    for i in range(3):
        w.run(text=f"answer {i}", judgments=[judgment(score=float(i + 2))])
    w.close()
    return path


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def state(db) -> tuple[str, dict[str, int]]:
    conn = open_db(db, readonly=True)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0], table_counts(conn)
    finally:
        conn.close()


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(folder) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".part")]


WRITERS = [("export", "--out"), ("report", "--csv"), ("report", "--png")]


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_writing_onto_the_database_is_refused_and_it_stays_intact(db, command, option, force):
    before = state(db)
    assert before[0] == "ok" and before[1]["runs"] == 3
    result = invoke(db, command, option, str(db), *(["--force"] if force else []))
    assert result.exit_code != 0
    assert str(db) in result.output and "the database this command reads" in result.output
    assert "Traceback" not in result.output
    assert state(db) == before


def test_a_link_to_the_database_and_its_wal_file_are_refused(db, tmp_path):
    link = tmp_path / "looks-like.csv"
    link.symlink_to(db)
    before = state(db)
    result = invoke(db, "export", "--out", str(link), "--force")
    assert result.exit_code != 0 and "the database this command reads" in result.output
    result = invoke(db, "export", "--out", f"{db}-wal", "--force")
    assert result.exit_code != 0 and "belongs to the database" in result.output
    assert state(db) == before


def test_any_other_sqlite_file_is_refused_untouched(db, tmp_path):
    other = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (t TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()
    digest = sha(other)
    for command, option in WRITERS:
        result = invoke(db, command, option, str(other), "--force")
        assert result.exit_code != 0, (command, option)
        assert str(other) in result.output and "is a SQLite database" in result.output
    assert sha(other) == digest


@pytest.mark.parametrize(("command", "option"), WRITERS)
def test_an_existing_file_is_replaced_only_with_force(db, tmp_path, command, option):
    target = tmp_path / ("out.png" if option == "--png" else "out.csv")
    target.write_text("old content\n")
    result = invoke(db, command, option, str(target))
    assert result.exit_code != 0
    assert str(target) in result.output and "--force" in result.output
    assert target.read_text() == "old content\n"
    result = invoke(db, command, option, str(target), "--force")
    assert result.exit_code == 0, result.output
    data = target.read_bytes()
    expected = {"--png": b"\x89PNG", "--csv": b"table,", "--out": b"run_id"}[option]
    assert data.startswith(expected), data[:80]
    assert leftovers(tmp_path) == []


def test_a_new_file_is_written_without_force(db, tmp_path):
    result = invoke(db, "export", "--out", str(tmp_path / "new.csv"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "new.csv").read_text().count("answer ") == 3


def test_an_error_mid_write_leaves_the_old_file_and_no_temp_file(db, tmp_path, monkeypatch):
    import storage.export

    def half_then_fail(db, fh, **kw):
        fh.write("run_id,answer\nrun-1,half of a row")
        raise RuntimeError("disk went away")

    monkeypatch.setattr(storage.export, "export", half_then_fail)
    old, new = tmp_path / "old.csv", tmp_path / "fresh.csv"
    old.write_text("old content\n")
    assert invoke(db, "export", "--out", str(old), "--force").exit_code != 0
    assert invoke(db, "export", "--out", str(new)).exit_code != 0
    assert old.read_text() == "old content\n"
    assert not new.exists()
    assert leftovers(tmp_path) == []


def test_kill_9_mid_write_leaves_the_old_file_whole(tmp_path):
    target = tmp_path / "out.csv"
    target.write_text("old content\n")
    script = textwrap.dedent(
        f"""
        import os, signal
        from storage.output_files import replace_atomically
        with replace_atomically({str(target)!r}, force=True) as fh:
            fh.write("new," * 100_000)
            fh.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert proc.returncode == -9, proc.stderr
    assert target.read_text() == "old content\n"


def test_the_tui_export_refuses_the_database_and_existing_files(db, tmp_path):
    from core.settings import load_settings

    before = state(db)
    wb = Workbench.open(load_settings(db=str(db)), db, sample_data=False)
    try:
        run_ids = [r.id for r in wb.list_runs()]
        with pytest.raises(OutputRefused, match="the database this command reads"):
            wb.export_runs(run_ids, db)
        existing = tmp_path / "x.csv"
        existing.write_text("mine\n")
        with pytest.raises(ValueError, match="already exists; choose another file name"):
            wb.export_runs(run_ids, existing)
        assert existing.read_text() == "mine\n"
        fresh = tmp_path / "exports" / "runs.csv"  # the default folder is created
        assert wb.export_runs(run_ids, fresh) == 3
        assert wb.export_runs(run_ids, existing, force=True) == 3
    finally:
        wb.close()
    assert state(db) == before
    assert leftovers(tmp_path) == []
