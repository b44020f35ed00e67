"""`export --out X --force` killed with SIGKILL mid-write leaves X as it was and nothing else in its
folder (issue 34, item 9: it used to leave an empty ``.X.<hex>.part``). On Linux the bytes go to an
unnamed file (``O_TMPFILE``) that only gets a name once complete; where that is not supported, the
named ``.X.<hex>.part`` that a killed process leaves is swept by the next write to X.

A real `prefscope export` child on a database big enough that its write takes a while; the test
watches the child's open files (``/proc/<pid>/fd``) and kills it once it writes into the folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

from storage import output_files
from storage.output_files import replace_atomically
from tests.conftest import REPO
from tests.storage.export_fixtures import Writer, db_with_tiny
from tests.tui.conftest import child_env

RUNS = 300
TEXT = "word " * 40_000  # 200 KB an answer: a 60 MB export, written for a while
OLD = "the old export\n"
HANG_BOUND_S = 120  # only bounds a hang

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to watch the child")


@pytest.fixture(scope="module")
def big_db(tmp_path_factory) -> Path:
    db = db_with_tiny(tmp_path_factory.mktemp("big") / "big.db")
    w = Writer(db)
    for _ in range(RUNS):
        w.run(text=TEXT)
    w.close()
    return db


def export(db: Path, target: Path, home: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "--db", str(db), "export", "--out", str(target), "--force"],
        cwd=REPO,
        env=child_env(home),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def open_in(pid: int, folder: Path) -> list[str]:
    """The files process ``pid`` holds open in ``folder`` (an unnamed file shows as ``#N (deleted)``)."""
    found = []
    with suppress(FileNotFoundError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith(f"{folder}/"):
                    found.append(link)
    return found


def test_an_export_killed_mid_write_leaves_the_old_file_and_nothing_else(tmp_path, big_db):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "x.csv"
    target.write_text(OLD, encoding="utf-8")
    proc = export(big_db, target, tmp_path / "home")
    deadline = time.monotonic() + HANG_BOUND_S
    writing: list[str] = []
    while not writing and proc.poll() is None and time.monotonic() < deadline:
        writing = open_in(proc.pid, out)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=HANG_BOUND_S)
    assert writing, f"the export ended before it wrote (exit {proc.returncode}); make the database bigger"
    assert proc.returncode == -signal.SIGKILL
    assert sorted(p.name for p in out.iterdir()) == ["x.csv"], f"left behind (it wrote {writing})"
    assert target.read_text(encoding="utf-8") == OLD


def test_the_next_export_sweeps_a_killed_writers_part_files_of_its_target_only(tmp_path):
    """What an older prefscope (or a file system without ``O_TMPFILE``) left when killed: the next
    write to the same target removes it; another target's, and one newer than the process, stay."""
    db = db_with_tiny(tmp_path / "x.db")
    Writer(db).close()
    out = tmp_path / "out"
    out.mkdir()
    target = out / "x.csv"
    stale, other, fresh = out / ".x.csv.0123abcd.part", out / ".y.csv.0123abcd.part", out / ".x.csv.89abcdef.part"
    for part in (stale, other, fresh):
        part.write_text("", encoding="utf-8")
    hour_ago, in_an_hour = time.time() - 3600, time.time() + 3600
    os.utime(stale, (hour_ago, hour_ago))
    os.utime(other, (hour_ago, hour_ago))
    os.utime(fresh, (in_an_hour, in_an_hour))  # a concurrent writer's, as far as this process can tell
    proc = export(db, target, tmp_path / "home")
    _, err = proc.communicate(timeout=HANG_BOUND_S)
    assert proc.returncode == 0, err
    assert sorted(p.name for p in out.iterdir()) == sorted([other.name, fresh.name, "x.csv"])


def test_without_unnamed_files_a_named_part_is_written_and_renamed(tmp_path, monkeypatch):
    """A file system without ``O_TMPFILE`` (vfat, older NFS) still gets the file whole or not at all."""
    monkeypatch.setattr(output_files, "_unnamed_file", lambda folder: None)
    out = tmp_path / "out"
    out.mkdir()
    target = out / "x.csv"
    target.write_text(OLD, encoding="utf-8")
    with pytest.raises(RuntimeError), replace_atomically(target, force=True) as fh:
        fh.write("half of a new ")
        assert [p.name for p in out.iterdir() if p.name.endswith(".part")], "no named part file"
        raise RuntimeError("the write failed")
    assert sorted(p.name for p in out.iterdir()) == ["x.csv"]
    assert target.read_text(encoding="utf-8") == OLD
    with replace_atomically(target, force=True) as fh:
        fh.write("new\n")
    assert sorted(p.name for p in out.iterdir()) == ["x.csv"]
    assert target.read_text(encoding="utf-8") == "new\n"


def test_a_new_file_gets_its_name_only_when_complete(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "new.csv"
    with replace_atomically(target) as fh:
        fh.write("a,b\n")
        fh.flush()
        assert not target.exists()
        if hasattr(os, "O_TMPFILE"):  # Linux: the bytes so far are in a file without a name
            assert list(out.iterdir()) == []
    assert target.read_text(encoding="utf-8") == "a,b\n"
    assert sorted(p.name for p in out.iterdir()) == ["new.csv"]
