"""Only our own databases: another application's SQLite file is refused untouched, a damaged or
non-SQLite file gives one line and a non-zero exit, and reading commands create nothing."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import pytest
from click.testing import CliRunner

from storage.db import APPLICATION_ID, open_db
from tests.cli_runner import unpaced_demo_models  # noqa: F401
from tests.conftest import REPO
from tui.cli import main

pytestmark = pytest.mark.usefixtures("unpaced_demo_models")

MAYA = REPO / "sample_data" / "users" / "maya.json"

#: Every command that opens the database, the TUI (no subcommand) included.
OPENERS = [
    [],
    ["users"],
    ["show", "maya"],
    ["runs"],
    ["export"],
    ["report"],
    ["import", str(MAYA)],
    ["run", "maya", "p1-open", "--plain", "--model", "demo:generic"],
    ["batch", "--user", "maya", "--query", "p1-open", "--model", "demo:generic", "--name", "b", "-y"],
]


def invoke(db, *args):
    return CliRunner().invoke(main, ["--db", str(db), *args])


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def foreign_db(path):
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada'); CREATE INDEX i ON contacts(name);"
    )
    conn.close()
    return path


def assert_one_line_refusal(result, *needles):
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, sqlite3.Error)
    for needle in needles:
        assert needle in result.output, result.output


def test_fresh_database_carries_our_application_id(tmp_path):
    db = open_db(tmp_path / "p.db")
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    db.close()


@pytest.mark.parametrize("args", OPENERS, ids=lambda a: a[0] if a else "tui")
def test_another_applications_database_is_refused_untouched(tmp_path, args):
    path = foreign_db(tmp_path / "theirs.db")
    digest, files = sha(path), sorted(os.listdir(tmp_path))
    assert_one_line_refusal(invoke(path, *args), str(path), "another application", "untouched")
    assert sha(path) == digest
    assert sorted(os.listdir(tmp_path)) == files  # no -wal / -shm either


def test_a_file_stamped_by_another_application_is_refused_even_without_tables(tmp_path):
    path = tmp_path / "stamped.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.close()
    digest = sha(path)
    assert_one_line_refusal(invoke(path, "import", str(MAYA)), "application_id 0x4d2")
    assert sha(path) == digest


@pytest.mark.parametrize("kind", ["zero bytes", "sqlite without tables"])
def test_an_empty_file_is_adopted(tmp_path, kind):
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    if kind != "zero bytes":
        conn = sqlite3.connect(path)
        conn.executescript("CREATE TABLE t (x); DROP TABLE t;")
        conn.close()
    assert invoke(path, "import", str(MAYA)).exit_code == 0
    db = open_db(path, readonly=True)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("SELECT id FROM users").fetchall() == [("maya",)]
    db.close()


def random_bytes(path):
    path.write_bytes(os.urandom(64 * 1024))


def truncated_db(path):
    """A real prefscope database with a user, cut to a third of its size (a copy that stopped)."""
    assert invoke(path, "import", str(MAYA)).exit_code == 0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    for sidecar in ("-wal", "-shm"):
        (tmp := path.with_name(path.name + sidecar)).exists() and tmp.unlink()
    size = path.stat().st_size
    assert size > 3 * 4096
    with path.open("r+b") as fh:
        fh.truncate(size // 3)


@pytest.mark.parametrize(("make", "says"), [(random_bytes, "not a SQLite database"), (truncated_db, "is damaged")])
@pytest.mark.parametrize("args", OPENERS, ids=lambda a: a[0] if a else "tui")
def test_a_damaged_or_non_sqlite_file_gives_one_line_and_exit_1(tmp_path, make, says, args):
    path = tmp_path / "bad.db"
    make(path)
    digest = sha(path)
    assert_one_line_refusal(invoke(path, *args), str(path), says)
    assert sha(path) == digest


def test_a_database_made_before_the_stamp_is_recognised_and_stamped(tmp_path):
    path = tmp_path / "old.db"
    assert invoke(path, "import", str(MAYA)).exit_code == 0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 0")  # as every prefscope database was before
    conn.close()
    result = invoke(path, "users")  # a reading command: stamped through one short writable open
    assert result.exit_code == 0 and "maya" in result.output
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    conn.close()


READERS = [["users"], ["show", "maya"], ["runs"], ["export"], ["report"]]


@pytest.mark.parametrize("args", READERS, ids=lambda a: a[0])
def test_reading_commands_create_nothing_and_say_what_to_do(tmp_path, args):
    path = tmp_path / "not" / "yet" / "p.db"
    result = invoke(path, *args)
    assert_one_line_refusal(result, f"no database at {path}", "prefscope import", "prefscope demo")
    assert not (tmp_path / "not").exists()


def test_prompt_and_paths_create_nothing(tmp_path):
    path = tmp_path / "not" / "yet" / "p.db"
    result = invoke(path, "prompt", "maya", "p1-open")
    assert result.exit_code == 0, result.output
    assert "no database at" in result.output and "sample data" in result.output
    assert invoke(path, "paths").exit_code == 0
    assert not (tmp_path / "not").exists()


@pytest.mark.parametrize("args", READERS, ids=lambda a: a[0])
def test_reading_commands_never_write_even_while_another_process_holds_the_write_lock(tmp_path, args):
    path = tmp_path / "p.db"
    assert invoke(path, "import", str(MAYA)).exit_code == 0
    assert invoke(path, "run", "maya", "p1-open", "--plain", "--model", "demo:generic").exit_code == 0
    holder = sqlite3.connect(path, timeout=0)
    # A run that looks cut off: a writing open would mark it interrupted, which needs the lock.
    holder.execute("UPDATE runs SET status = 'running', pid = NULL")
    holder.commit()
    holder.execute("BEGIN IMMEDIATE")  # a batch mid-write elsewhere
    holder.execute("UPDATE users SET name = name")
    try:
        result = invoke(path, *args)
    finally:
        holder.rollback()
        holder.close()
    assert result.exit_code == 0, result.output
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT status FROM runs").fetchall() == [("running",)]  # left for a writer
    conn.close()


def test_a_readonly_connection_cannot_write(tmp_path):
    open_db(tmp_path / "p.db").close()
    db = open_db(tmp_path / "p.db", readonly=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("INSERT INTO migrations (version, name, applied_at) VALUES (998, 'x', 'y')")
    db.close()
