"""Issue 34 item 9: the disk fills up in the middle of a batch. What the batch says is what
happened: the disk is full (not a lock: no word of ``write_deadline_s``), and the answers paid for
but not stored are in the recovery file it names; no cell is "taken by another process" when there
is none, then or on resume; every cell's status agrees with its run row.

Real processes (``python -m tui.cli``-like children, their claims left by a process that is gone)
against a real loopback OpenAI-protocol server that counts the calls. The full disk is SQLite's
``max_page_count`` on the connection that stores the answers, set a few dozen pages above the
database's size: the write check and the first cells fit, later writes fail with SQLITE_FULL, as
on a disk with that much room left."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from storage.db import open_db
from storage.writer import RolledBack, Writer
from tests.conftest import REPO
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.storage.export_fixtures import db_with_maya
from tests.tui.conftest import child_env

#: Pages the writer may add to the database: the write check's probe (64 KiB) and a few cells.
ROOM_PAGES = 40
NAME = "filling"
HANG_BOUND_S = 180  # only bounds a hang

#: ``prefscope`` in a child whose answer-storing connection has ``argv[1]`` pages of room left.
FULL_DISK_CHILD = """
import sys
import storage.writer
opened = storage.writer.open_db
def limited(*args, **kw):
    db = opened(*args, **kw)
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute(f"PRAGMA max_page_count = {pages + int(sys.argv[1])}")
    return db
storage.writer.open_db = limited
from tui.cli import main
main(sys.argv[2:], prog_name="prefscope")
"""


@pytest.fixture
def server():
    # A long answer: it needs many new pages, every other write of a cell one at most, so the disk
    # fills up while an answer is stored (one cell at a time: the same place every time).
    with OpenAIServer([Reply.text("A. " + "I would pick the first option, for reasons. " * 500, pieces=8)]) as s:
        yield s


def batch(tmp_path: Path, server: OpenAIServer, db: Path, room_pages: int | None) -> subprocess.CompletedProcess:
    config = tmp_path / "c.toml"
    config.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    args = ["--db", str(db), "--config", str(config), "batch", "--name", NAME, "--user", "maya",
            "--expression", "1", "--model", "local:m", "--runs", "1", "--yes"]  # fmt: skip
    child = (
        [sys.executable, "-c", FULL_DISK_CHILD, str(room_pages)] if room_pages else [sys.executable, "-m", "tui.cli"]
    )
    return subprocess.run(
        [*child, *args],
        cwd=REPO,
        env=child_env(home, COLUMNS="1000"),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND_S,
    )


def cells_and_runs(db_path: Path) -> list[tuple[str, str | None]]:
    """(cell status, its run row's status) of every cell of the batch."""
    db = open_db(db_path)
    try:
        return db.execute(
            "SELECT c.status, r.status FROM batch_cells c LEFT JOIN runs r ON r.id = c.run_id WHERE c.batch = ?",
            [NAME],
        ).fetchall()
    finally:
        db.close()


def stored_answers(db_path: Path) -> Counter:
    """cell spec -> final answers stored ok for it."""
    db = open_db(db_path)
    try:
        rows = db.execute(
            "SELECT r.spec FROM responses p JOIN runs r ON r.id = p.run_id "
            "WHERE r.label = ? AND p.is_final = 1 AND p.status = 'ok'",
            [NAME],
        ).fetchall()
    finally:
        db.close()
    return Counter(spec for (spec,) in rows)


def test_a_full_disk_mid_batch_is_reported_as_such_and_no_answer_is_lost(tmp_path, server):
    db = db_with_maya(tmp_path / "p.db")
    first = batch(tmp_path, server, db, ROOM_PAGES)
    out = first.stdout + first.stderr
    assert "Traceback" not in out, out
    assert first.returncode == 1, out
    m = re.search(r"(\d+) answers? (?:were|was) not stored \(([^;]*);", out)
    assert m, out
    assert "disk is full" in m.group(2), out
    assert "write_deadline_s" not in out and "locked" not in out, out  # a full disk is not a lock
    assert "taken by another process" not in out, out  # there was no other process
    recovered = sorted(tmp_path.glob("p.db.recovered-*.jsonl"))
    assert len(recovered) == 1 and str(recovered[0]) in out, out
    lines = [json.loads(line) for line in recovered[0].read_text().splitlines()]
    calls = len(server.requests)
    stored = sum(stored_answers(db).values())
    assert lines and stored, "the disk filled mid-batch: some answers stored, some not"
    assert calls == stored + len(lines), "every answer paid for is stored or in the recovery file"
    assert all(line["user"] == "maya" and line["model"] == "local:m" for line in lines)
    assert all(line["meta"]["recovered"]["label"] == NAME for line in lines)
    # A cell is done exactly when its run row says its run is.
    assert all((cell == "ok") == (run == "ok") for cell, run in cells_and_runs(db)), cells_and_runs(db)

    again = batch(tmp_path, server, db, None)  # room again; the first batch's process is gone
    out = again.stdout + again.stderr
    assert again.returncode == 0, out
    assert "taken by another process" not in out and "not stored" not in out, out
    assert set(cells_and_runs(db)) == {("ok", "ok")}
    answers = stored_answers(db)
    assert len(answers) == 32 and set(answers.values()) == {1}, answers.most_common(3)  # each cell once


def test_a_write_a_full_disk_undid_is_known_as_lost_before_the_next_write_runs(tmp_path):
    """The mechanism behind a cell marked ``ok`` whose run row was lost: SQLITE_FULL ends the
    whole transaction, undoing the writes before it in the same batch; the next write (a cell's
    status, which asks whether its run was stored) must already see them failed."""
    path = tmp_path / "w.db"
    db = open_db(path)
    db.execute("CREATE TABLE log (n INTEGER, b BLOB)")
    db.close()
    with Writer(path) as writer:
        release = threading.Event()
        writer.submit(lambda db: release.wait(HANG_BOUND_S))  # the next jobs queue up: one batch
        run_row = writer.submit(lambda db: db.execute("INSERT INTO log (n) VALUES (1)"))

        def fill_the_disk(db) -> None:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            db.execute(f"PRAGMA max_page_count = {pages}")
            db.execute("INSERT INTO log (b) VALUES (zeroblob(1000000))")

        full = writer.submit(fill_the_disk)
        seen = writer.submit(lambda db: run_row.done() and run_row.exception() is not None)
        release.set()
        with pytest.raises(sqlite3.OperationalError, match="full"):
            full.result(HANG_BOUND_S)
        assert isinstance(run_row.exception(HANG_BOUND_S), RolledBack)
        assert seen.result(HANG_BOUND_S) is True, "the later write saw the undone one as stored"
