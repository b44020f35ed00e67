"""A database reached through a symlink keeps its committed runs: an output file (export --out,
report --csv, compare --csv) aimed at the real file's ``-wal``/``-shm``/``-journal`` (next to the
resolved database, where SQLite writes them), or at a symlink into one of them, is refused in one
line, with or without --force, and every run committed before a SIGKILL is still readable."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from storage.db import open_db
from tests.conftest import REPO
from tests.storage.export_fixtures import db_with_tiny
from tests.tui.conftest import child_env
from tui.cli import main

RUNS = 8


@pytest.fixture
def linked(tmp_path):
    """(real database, symlink to it): RUNS runs committed by a process killed with SIGKILL, so they
    live only in the real file's -wal (no checkpoint ran)."""
    real = db_with_tiny(tmp_path / "realx.db")
    link = tmp_path / "linkx.db"
    link.symlink_to(real.name)
    script = textwrap.dedent(
        f"""
        import os, signal
        from tests.storage.export_fixtures import Writer
        w = Writer({str(link)!r})
        for i in range({RUNS}):
            w.run(text=f"committed answer {{i}}")
        w.recorder.flush()  # every run committed (in the WAL), then no close, no checkpoint
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, env=child_env(tmp_path / "home"), capture_output=True, timeout=60
    )
    assert proc.returncode == -9, proc.stderr.decode()
    wal = tmp_path / "realx.db-wal"
    assert wal.exists() and wal.stat().st_size > 0, "the committed runs should still be in the WAL"
    assert not (tmp_path / "linkx.db-wal").exists()
    return real, link


def runs_in(path) -> int:
    db = open_db(path, readonly=True)
    try:
        return db.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    finally:
        db.close()


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


WRITERS = [("export", "--out"), ("report", "--csv"), ("compare", "run-00001", "run-00002", "--csv")]


@pytest.mark.parametrize("force", [True, False])
@pytest.mark.parametrize("companion", ["-wal", "-shm", "-journal"])
@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w[0])
def test_the_real_companions_of_a_symlinked_database_are_refused(linked, tmp_path, writer, companion, force):
    real, link = linked
    target = tmp_path / f"realx.db{companion}"
    before = target.read_bytes() if target.exists() else None
    result = invoke(link, *writer, str(target), *(["--force"] if force else []))
    assert result.exit_code != 0, result.output
    assert "belongs to the database" in result.output and str(target) in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert (target.read_bytes() if target.exists() else None) == before
    assert runs_in(link) == RUNS
    assert runs_in(real) == RUNS


@pytest.mark.parametrize("writer", WRITERS, ids=lambda w: w[0])
def test_a_symlink_into_the_real_wal_is_refused(linked, tmp_path, writer):
    real, link = linked
    sneaky = tmp_path / "out.csv"
    sneaky.symlink_to(tmp_path / "realx.db-wal")
    result = invoke(link, *writer, str(sneaky), "--force")
    assert result.exit_code != 0, result.output
    assert "belongs to the database" in result.output and "Traceback" not in result.output, result.output
    assert sneaky.is_symlink()
    assert runs_in(link) == RUNS


def test_the_link_side_names_and_the_real_file_are_refused_too(linked, tmp_path):
    real, link = linked
    result = invoke(link, "export", "--out", str(tmp_path / "linkx.db-wal"), "--force")
    assert result.exit_code != 0 and "belongs to the database" in result.output, result.output
    result = invoke(link, "export", "--out", str(real), "--force")
    assert result.exit_code != 0 and "the database this command reads" in result.output, result.output
    assert runs_in(link) == RUNS


def test_an_ordinary_output_still_works_and_the_runs_stay(linked, tmp_path):
    real, link = linked
    out = tmp_path / "fine.csv"
    result = invoke(link, "export", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text().count("committed answer") == RUNS
    assert runs_in(link) == RUNS
