"""Issue 34 item 3: an answer paid for is never lost. If its write fails after the call (the disk
filled up while the model answered), the answer, with what produced it and its scores, goes to a
recovery file beside the database, named in the one-line error, that `prefscope import-results`
stores as a run; if that file cannot be written either, the error says so. And the write check
before the first call also refuses a disk with less room than the answers need.

Real processes (``python -m tui.cli``) and a real loopback OpenAI-protocol server counting the
calls. The disk fills up for real, at the kernel: when the request reaches the server, the child's
file-size limit (``RLIMIT_FSIZE``, set from outside with ``prlimit``) drops to the write-ahead
log's current size, so every later database write fails with EFBIG (Python ignores SIGXFSZ) while
the small recovery file still fits. The free-space check runs on a real 320 KiB tmpfs in a private
mount namespace (``unshare --mount``; skipped where it cannot be made) with 320 KiB left beside
the database, and in-process with a ``statvfs`` that reports 2 MiB free."""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.storage.export_fixtures import db_with_maya
from tests.tui.conftest import child_env
from tui.cli import main

HANG_BOUND_S = 120  # only bounds a hang
ANSWER = "B. Because you said so yourself."


class FillingServer(OpenAIServer):
    """A loopback model that runs ``on_call`` when a model call arrives, before it answers."""

    def __init__(self, replies):
        super().__init__(replies)
        self.on_call: Callable[[], None] = lambda: None

    async def handle_other(self, request, raw):
        if request.method == "POST":
            self.on_call()
        return None


@pytest.fixture
def server():
    with FillingServer([Reply.text(ANSWER)]) as s:
        yield s


def pristine(folder: Path) -> Path:
    """maya's database, checkpointed into one file (no write-ahead log yet)."""
    db = db_with_maya(folder / "u.db")
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return db


def config(folder: Path, server: OpenAIServer) -> Path:
    path = folder / "c.toml"
    path.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\n')
    return path


def start(folder: Path, *args: str) -> subprocess.Popen:
    home = folder / "home"
    home.mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli", *args],
        cwd=REPO,
        env=child_env(home, COLUMNS="400"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


RUN = ("run", "maya", "p1-mcq", "--model", "local:m", "--plain")


def run_while_the_disk_fills(
    folder: Path, server: FillingServer, db: Path, limit: Callable[[int], int], args: tuple[str, ...] = RUN
):
    """`prefscope ARGS` (default: run maya p1-mcq --model local:m); when a model call arrives, the
    child may write no file past ``limit(the write-ahead log's size now)`` bytes."""
    child: subprocess.Popen | None = None

    def fill() -> None:
        assert child is not None
        size = limit(Path(f"{db}-wal").stat().st_size)
        resource.prlimit(child.pid, resource.RLIMIT_FSIZE, (size, size))

    server.on_call = fill
    cfg = config(folder, server)
    child = start(folder, "--db", str(db), "--config", str(cfg), *args)
    try:
        out, err = child.communicate(timeout=HANG_BOUND_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    return child.returncode, out, err


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    return lines[0]


def test_an_answer_the_full_disk_refused_is_saved_beside_the_database_and_imports(tmp_path, server):
    db = pristine(tmp_path)
    code, out, err = run_while_the_disk_fills(tmp_path, server, db, limit=lambda wal: wal)
    assert len(server.requests) == 1
    assert code == 1, (code, out, err)
    line = error_line(err)
    files = sorted(tmp_path.glob("u.db.recovered-*.jsonl"))
    assert len(files) == 1, (line, list(tmp_path.iterdir()))
    recovered = files[0]
    assert "1 answer could not be stored" in line and "disk" in line, line
    assert str(recovered) in line and f"prefscope import-results {recovered}" in line, line
    assert "stored as run" not in out  # it was not
    assert stat.S_IMODE(recovered.stat().st_mode) == 0o600  # the answers are as private as the database

    (record,) = [json.loads(text) for text in recovered.read_text().splitlines()]
    assert (record["user"], record["query"], record["model"], record["answer"]) == ("maya", "p1-mcq", "local:m", ANSWER)
    assert (record["method"], record["context"]) == ("zero-shot", "simple")
    assert record["messages"] == server.requests[0].body["messages"]  # exactly what was sent
    meta = record["meta"]["recovered"]
    assert meta["spec"]["models"][0]["id"] == "local:m" and meta["spec"]["query_id"] == "p1-mcq"  # the settings
    assert [(s["kind"], s["dimension"], s["score"]) for s in meta["scores"]] == [("choice", "accuracy", 1.0)]
    assert "disk" in meta["not_stored_because"]

    imported = start(tmp_path, "--db", str(db), "import-results", str(recovered))
    iout, ierr = imported.communicate(timeout=HANG_BOUND_S)
    assert imported.returncode == 0, ierr
    assert "1 run added" in iout
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "SELECT r.user_id, r.query_id, p.model, p.text, p.status FROM runs r JOIN responses p ON p.run_id = r.id "
            "WHERE p.model = 'imported:local:m'"
        ).fetchall()
    finally:
        conn.close()
    assert rows == [("maya", "p1-mcq", "imported:local:m", ANSWER, "ok")]
    assert len(server.requests) == 1  # nothing was asked again


def test_when_the_recovery_file_cannot_be_written_either_the_error_says_so(tmp_path, server):
    db = pristine(tmp_path)
    code, out, err = run_while_the_disk_fills(tmp_path, server, db, limit=lambda wal: 1)  # no file grows past 1 byte
    assert len(server.requests) == 1
    assert code == 1, (code, out, err)
    line = error_line(err)
    assert "1 answer could not be stored" in line and "could not be saved to" in line, line
    assert "File too large" in line, line
    assert list(tmp_path.glob("u.db.recovered-*")) == []  # no empty or half-written file is left


def test_knowledge_probes_the_full_disk_refused_are_saved_too(tmp_path, server):
    """`diagnose RUN --probe`: every probe's answer is saved, and the one line (from the handler
    every command shares) names the file."""
    db = pristine(tmp_path)
    cfg = config(tmp_path, server)
    stored = start(tmp_path, "--db", str(db), "--config", str(cfg), "run", "maya", "p1-open", "--model", "local:m")
    assert stored.communicate(timeout=HANG_BOUND_S) and stored.returncode == 0
    conn = sqlite3.connect(db)
    try:
        (run_id,) = [r for (r,) in conn.execute("SELECT id FROM runs")]
    finally:
        conn.close()
    asked = len(server.requests)
    code, out, err = run_while_the_disk_fills(
        tmp_path, server, db, limit=lambda wal: wal, args=("diagnose", run_id, "--probe")
    )
    probes = len(server.requests) - asked
    assert probes >= 1 and code == 1, (code, out, err)
    line = error_line(err)
    (recovered,) = tmp_path.glob("u.db.recovered-*.jsonl")
    assert f"{probes} answer" in line and "could not be stored" in line and str(recovered) in line, line
    records = [json.loads(text) for text in recovered.read_text().splitlines()]
    assert len(records) == probes and {r["meta"]["recovered"]["spec"]["probe_of"] for r in records} == {run_id}
    # Each line holds the whole prompt (~40 KB here) and the file may not grow past the log's size:
    # a line with no room for its messages is saved without them rather than not at all.
    if any("messages" not in r for r in records):
        assert "without the messages sent" in line, line


# -- the write check also asks for room ------------------------------------------------------------

ROOM_BYTES = 320 * 1024  # left on the small disk beside the database: a run's rows fit, 1 MiB does not


def _namespaces_work(folder: Path) -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    mnt = folder / "probe-mnt"
    mnt.mkdir()
    probe = subprocess.run(
        [unshare, "--mount", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {mnt}"],
        capture_output=True,
        timeout=HANG_BOUND_S,
    )
    return probe.returncode == 0


def test_a_disk_with_too_little_room_is_refused_before_the_first_call(tmp_path, server):
    if not _namespaces_work(tmp_path):
        pytest.skip("cannot mount a tmpfs in a private mount namespace here")
    db = pristine(tmp_path)
    size = db.stat().st_size + ROOM_BYTES
    cfg = config(tmp_path, server)
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # The database is copied onto a small real disk, the command runs there, and the disk goes
    # away with the namespace when it exits.
    script = (
        f'mount -t tmpfs -o size={size} tmpfs "{mnt}" && cp "{db}" "{mnt}/u.db" && '
        f'exec "{sys.executable}" -m tui.cli --db "{mnt}/u.db" --config "{cfg}" '
        "run maya p1-mcq --model local:m --plain"
    )
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script],
        cwd=REPO,
        env=child_env(home, COLUMNS="400"),
        capture_output=True,
        text=True,
        timeout=HANG_BOUND_S,
    )
    line = error_line(done.stderr)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert len(server.requests) == 0, "no model is called for answers the disk has no room for"
    assert f"cannot write to {mnt}/u.db" in line and "free" in line and "no model was called" in line, line


def test_the_room_asked_for_grows_with_the_answers(tmp_path, monkeypatch, server):
    """In-process, where no tmpfs can be mounted: ``statvfs`` reports 2 MiB free; one model's
    answer fits, twenty do not (1 MiB plus 64 KiB per answer), and those are refused before any call."""
    db = db_with_maya(tmp_path / "u.db")
    cfg = config(tmp_path, server)
    real = os.statvfs

    def two_mib_free(path):
        st = real(path)
        fields = list(st)
        fields[4] = (2 * 1024 * 1024) // st.f_frsize  # f_bavail
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", two_mib_free)
    runner = CliRunner()
    base = ["--db", str(db), "--config", str(cfg), "run", "maya", "p1-mcq", "--plain"]
    many = [arg for n in range(20) for arg in ("--model", f"local:m{n}")]
    refused = runner.invoke(main, [*base, *many])
    assert refused.exit_code == 1, refused.output
    assert "free" in refused.output and "20 answers" in refused.output and "no model was called" in refused.output
    assert len(server.requests) == 0
    ran = runner.invoke(main, [*base, "--model", "local:m"])
    assert ran.exit_code == 0, ran.output
    assert len(server.requests) == 1
