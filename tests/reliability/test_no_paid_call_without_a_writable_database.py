"""No model is called for answers that could not be stored: every command that spends model calls
(`run`, `judge`, `attributes`, `diagnose --probe`, `relevance --model`, `pairwise`) checks that the
database takes a write before its first call, and otherwise refuses with one line naming the
database and why, exit 1, no traceback, and the model server never asked.

Two real conditions, each in a child process (`python -m tui.cli`): a database file made read-only
with ``chmod 0444`` (as root, the child runs without ``CAP_DAC_OVERRIDE``, dropped from its
capability bounding set before exec, so the mode binds it as any user; skipped where neither
holds), and a full disk: the child runs under ``RLIMIT_FSIZE``, so SQLite's writes past 48 KiB
into the write-ahead log fail at the kernel as they do on a disk with that much left. A `demo:` model costs
nothing, but its run would be lost as well: refused the same way."""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.tui.conftest import child_env

#: What a child may still write: the -shm index (32 KiB) fits, the write-probe's pages do not.
FILE_SIZE_LIMIT = 48 * 1024
HANG_BOUND_S = 120  # only bounds a hang


class Stored:
    """A database with two stored runs of the loopback model ``local:m`` (maya and tomasz, opposed
    preferences), checkpointed into one file, and the config naming the loopback server."""

    def __init__(self, folder: Path, server: OpenAIServer):
        self.folder = folder
        self.server = server
        self.config = folder / "c.toml"
        self.config.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
        self.db = folder / "pristine.db"
        for user in ("maya", "tomasz"):
            done = self.cli(self.db, ["run", user, "p1-open", "--model", "local:m", "--plain"])
            assert done.returncode == 0, done.stderr
        conn = sqlite3.connect(self.db)
        try:
            self.runs = [r for (r,) in conn.execute("SELECT id FROM runs ORDER BY created_at")]
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
        assert len(self.runs) == 2 and len(server.requests) >= 2

    def cli(self, db: Path, args: list[str], preexec_fn=None) -> subprocess.CompletedProcess:
        home = self.folder / "home"
        home.mkdir(exist_ok=True)
        return subprocess.run(
            [sys.executable, "-m", "tui.cli", "--db", str(db), "--config", str(self.config), *args],
            env=child_env(home),
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=HANG_BOUND_S,
            preexec_fn=preexec_fn,
        )

    def copy(self, to: Path) -> Path:
        shutil.copyfile(self.db, to)
        return to


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    with OpenAIServer([Reply.text("an answer")]) as server:
        yield Stored(tmp_path_factory.mktemp("stored"), server)


PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1


def without_dac_override() -> None:
    """In the child before exec: root keeps no capability to write past a file's mode."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE)")


def read_only(db: Path):
    """chmod 0444, binding the child even when the suite runs as root; skipped where it does not."""
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    preexec_fn = without_dac_override if os.geteuid() == 0 else None
    try:
        opened = subprocess.run(
            [sys.executable, "-c", "import sys; open(sys.argv[1], 'r+b')", str(db)],
            preexec_fn=preexec_fn,
            capture_output=True,
            timeout=HANG_BOUND_S,
        )
    except subprocess.SubprocessError:  # the capability could not be dropped here
        opened = None
    if opened is None or opened.returncode == 0:
        pytest.skip("chmod 0444 does not stop a child's writes here; the full-disk case covers it")
    return preexec_fn


def full_disk(db: Path):
    """The child may not write any file past FILE_SIZE_LIMIT: a write there fails with EFBIG."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))

    return limit


COMMANDS = {
    "run": lambda runs: ["run", "maya", "p1-open", "--model", "local:m", "--plain"],
    "run-demo": lambda runs: ["run", "maya", "p1-open", "--model", "demo:generic", "--plain"],
    "run-probe": lambda runs: ["run", "maya", "p1-open", "--model", "local:m", "--plain", "--probe"],
    "judge": lambda runs: ["judge", runs[0], "--judge", "rubric:local:m"],
    "attributes": lambda runs: ["attributes", "maya", "--model", "local:m", "--no-dedup"],
    "diagnose-probe": lambda runs: ["diagnose", runs[0], "--probe"],
    "relevance": lambda runs: ["relevance", runs[0], "--model", "local:m", "--no-embedding"],
    "pairwise": lambda runs: ["pairwise", runs[0], runs[1], "--judge", "local:m"],
}


@pytest.mark.parametrize("condition", [read_only, full_disk], ids=["chmod-0444", "full-disk"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_model_is_called_when_the_answers_could_not_be_stored(stored, tmp_path, condition, command):
    db = stored.copy(tmp_path / "u.db")
    before = db.read_bytes()
    preexec_fn = condition(db)
    asked = len(stored.server.requests)
    done = stored.cli(db, COMMANDS[command](stored.runs), preexec_fn=preexec_fn)
    calls = len(stored.server.requests) - asked
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert "Traceback" not in done.stderr, done.stderr
    assert calls == 0, f"{command} made {calls} model call(s) it could not store; stderr: {done.stderr}"
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert len(lines) == 1, done.stderr
    assert "cannot write to" in lines[0] and str(db) in lines[0] and "no model was called" in lines[0], lines
    assert db.read_bytes() == before, "nothing was stored"


def test_a_writable_database_still_runs(stored, tmp_path):
    """The check itself writes nothing that stays: the command runs and stores as before."""
    db = stored.copy(tmp_path / "u.db")
    asked = len(stored.server.requests)
    done = stored.cli(db, COMMANDS["run"](stored.runs))
    assert done.returncode == 0, done.stderr
    assert len(stored.server.requests) - asked == 1
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
        probe = conn.execute("SELECT count(*) FROM sqlite_master WHERE name = 'prefscope_write_probe'").fetchone()
        assert probe[0] == 0
    finally:
        conn.close()
    assert os.path.exists(db)
