"""Batch cells are claimed atomically: processes on one batch name split the cells, each runs once;
a claim left by a process killed with SIGKILL is taken over on resume."""

from __future__ import annotations

import subprocess

import pytest

from tests.reliability.batch_procs import CELLS, batch_cmd, cell_statuses, start_batch, stored_answers
from tests.storage.export_fixtures import REPO, db_with_maya
from tests.waiting import wait_until


@pytest.fixture
def db_path(tmp_path):
    return db_with_maya(tmp_path / "claims.db")


@pytest.mark.slow
def test_two_processes_on_one_batch_run_each_cell_once(db_path):
    procs = [start_batch(db_path, "shared", PREFSCOPE_DEMO_TOKENS_PER_S="200") for _ in range(2)]
    outs = [p.communicate(timeout=180)[0].decode(errors="replace") for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out
    assert any("taken by another process" in out for out in outs), outs  # they really overlapped
    answers = stored_answers(db_path, "shared")
    assert len(answers) == CELLS and set(answers.values()) == {1}, answers.most_common(3)
    assert cell_statuses(db_path, "shared") == {"ok": CELLS}


@pytest.mark.slow
def test_claims_of_a_killed_process_are_taken_over_on_resume(db_path):
    proc = start_batch(db_path, "killed", PREFSCOPE_DEMO_TOKENS_PER_S="300")
    wait_until(lambda: cell_statuses(db_path, "killed")["ok"] >= 5, timeout=60, every=0.1, what="5 cells done")
    proc.kill()
    proc.wait(timeout=30)  # reaped: its pid is gone, as after a real crash
    assert cell_statuses(db_path, "killed")["running"] >= 1  # it died holding claims
    done = subprocess.run(batch_cmd(db_path, "killed"), cwd=REPO, capture_output=True, timeout=180)
    assert done.returncode == 0, done.stdout.decode(errors="replace")
    assert cell_statuses(db_path, "killed") == {"ok": CELLS}
    answers = stored_answers(db_path, "killed")
    assert len(answers) == CELLS and set(answers.values()) == {1}
