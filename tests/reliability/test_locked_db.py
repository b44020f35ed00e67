"""A summary is what is stored: another PROCESS holds the write lock for 8 s mid-batch.

With the default write deadline every answer is stored once the lock goes; with a short one the
batch exits non-zero and the number of answers it says were not stored is the real shortfall.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.reliability.batch_procs import CELLS, cell_statuses, start_batch, stored_answers
from tests.storage.export_fixtures import db_with_maya
from tests.waiting import wait_until

HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
print("ready", flush=True)
sys.stdin.readline()
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def lock_holder(db_path, seconds: float) -> subprocess.Popen:
    """A process ready to hold the write lock for ``seconds`` once told (:func:`take_lock`): its
    interpreter starts before the batch does, so the lock is taken at once, whatever the machine's
    speed, while the batch is still mid-way (not after a start-up it might finish in)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(db_path), str(seconds)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    return proc


def take_lock(holder: subprocess.Popen) -> None:
    assert holder.stdin is not None and holder.stdout is not None
    holder.stdin.write(b"lock\n")
    holder.stdin.flush()
    assert holder.stdout.readline().strip() == b"locked"


def locked_batch(db_path, name: str, **env: str) -> tuple[int, str]:
    locker = lock_holder(db_path, 8)
    batch = start_batch(db_path, name, PREFSCOPE_DEMO_TOKENS_PER_S="150", **env)
    wait_until(lambda: cell_statuses(db_path, name)["ok"] >= 3, timeout=60, every=0.05, what="3 cells stored")
    take_lock(locker)
    assert batch.poll() is None, "the batch ended before the lock was taken: nothing was tested"
    out = batch.communicate(timeout=240)[0].decode(errors="replace")
    locker.wait(timeout=30)
    return batch.returncode, out


def summary(out: str) -> tuple[int, int]:
    m = re.search(r"done: (\d+) ok, (\d+) failed", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


@pytest.fixture
def db_path(tmp_path):
    return db_with_maya(tmp_path / "locked.db")


@pytest.mark.slow
def test_default_deadline_outlasts_the_lock(db_path):
    code, out = locked_batch(db_path, "waits")
    assert code == 0, out
    ok, failed = summary(out)
    answers = stored_answers(db_path, "waits")
    assert (ok, failed) == (CELLS, 0) and len(answers) == CELLS and set(answers.values()) == {1}
    assert "not stored" not in out


@pytest.mark.slow
def test_short_deadline_reports_exactly_what_was_not_stored(db_path):
    code, out = locked_batch(db_path, "gives-up", PREFSCOPE_WRITE_DEADLINE_S="1")
    assert code == 1, out
    ok, failed = summary(out)
    m = re.search(r"(\d+) answers were not stored", out)
    assert m, out
    unstored = int(m.group(1))
    stored = sum(stored_answers(db_path, "gives-up").values())
    assert unstored > 0 and ok == stored  # the summary's ok count is what the database holds
    assert ok + failed + unstored == CELLS  # failed: cells that could not even be claimed
    # Nothing is lost for good: the same command, without the lock, stores every missing answer.
    again = start_batch(db_path, "gives-up", PREFSCOPE_DEMO_TOKENS_PER_S="0")
    assert again.wait(timeout=180) == 0, again.communicate()[0].decode(errors="replace")
    assert len(stored_answers(db_path, "gives-up")) == CELLS
    assert cell_statuses(db_path, "gives-up") == {"ok": CELLS}
