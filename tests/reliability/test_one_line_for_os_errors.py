"""Issue 34 items 7 and 9: a full disk, a special file, a config file that is not UTF-8 end in one
line and exit 1, never a traceback or a read until MemoryError; Ctrl+C ends in exit 130.

Real processes: ``python -m tui.cli`` children with their own HOME, real FIFOs and /dev/zero, a real
EFBIG (RLIMIT_FSIZE; Python ignores SIGXFSZ, so the write fails instead of killing the child) and a
real SIGINT. A hang fails the test through the generous subprocess timeout instead of blocking it."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.storage.export_fixtures import db_with_maya

TIMEOUT = 60


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFSCOPE_") or k == "PREFSCOPE_EMBEDDER_CACHE"}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".local/share"))
    env.update(PYTHONUNBUFFERED="1", COLUMNS="200")
    return env


def prefscope(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", *args],
        cwd=REPO,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        stdin=subprocess.DEVNULL,
        **kw,
    )


def one_line(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The child exited 1 with one line on stderr, naming ``words``, and no traceback."""
    err = proc.stderr.strip()
    assert proc.returncode == 1, (proc.returncode, proc.stdout, err)
    assert "Traceback" not in err and "MemoryError" not in err, err
    assert len(err.splitlines()) == 1, err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    h.mkdir(exist_ok=True)
    return h


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return db_with_maya(tmp_path / "p.db")


# --- special files are refused before they are opened --------------------------------------------


def test_import_results_of_dev_zero_is_refused(home, db):
    one_line(prefscope(home, "--db", str(db), "import-results", "/dev/zero"), "/dev/zero", "not a regular file")
    one_line(
        prefscope(home, "--db", str(db), "import-results", "--format", "jsonl", "/dev/zero"),
        "/dev/zero",
        "not a regular file",
    )


def test_annotate_import_of_dev_zero_is_refused(home, db):
    one_line(prefscope(home, "--db", str(db), "annotate", "--import", "/dev/zero"), "/dev/zero", "not a regular file")


def test_batch_grid_of_dev_zero_is_refused(home, db):
    one_line(
        prefscope(home, "--db", str(db), "batch", "--grid", "/dev/zero", "--dry-run"), "/dev/zero", "not a regular file"
    )


@pytest.mark.parametrize("name", ["data.json", "data.jsonl"])
def test_import_of_a_fifo_is_refused(home, db, tmp_path, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    one_line(prefscope(home, "--db", str(db), "import", str(fifo)), name, "not a regular file")
    one_line(prefscope(home, "--db", str(db), "import", "--format", "chatlog", str(fifo)), name, "not a regular file")


def test_import_results_file_above_the_limit_is_refused_before_reading(home, db, tmp_path):
    big = tmp_path / "answers.jsonl"
    line = json.dumps({"user": "maya", "query": "p1-open", "model": "m", "answer": "x" * 1000}) + "\n"
    big.write_text(line * 1200)  # 1.2 MB
    one_line(prefscope(home, "--db", str(db), "import-results", "--max-mb", "1", str(big)), "answers.jsonl", "limit")


def test_annotate_import_above_max_import_mb_is_refused(home, db, tmp_path):
    (home / ".config" / "prefscope").mkdir(parents=True)
    (home / ".config" / "prefscope" / "config.toml").write_text("max_import_mb = 1\n")
    big = tmp_path / "labels.csv"
    big.write_text("response_id,annotator,dimension,score\n" + "r,a,alignment,1\n" * 80_000)  # 1.3 MB
    one_line(prefscope(home, "--db", str(db), "annotate", "--import", str(big)), "labels.csv", "1 MB")


# --- a config file that is not UTF-8 --------------------------------------------------------------


def test_config_that_is_not_utf8_is_one_line_naming_it(home, db):
    config = home / ".config" / "prefscope" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b'theme = "caf\xe9"\n')
    paths = prefscope(home, "paths")
    assert "Traceback" not in paths.stderr, paths.stderr
    assert str(config) in paths.stdout + paths.stderr
    assert "UTF-8" in paths.stdout + paths.stderr
    one_line(prefscope(home, "--db", str(db), "users"), str(config), "UTF-8")


# --- a full disk (EFBIG: the file-size limit) -------------------------------------------------------


def _answers(tmp_path: Path, n: int = 600) -> Path:
    f = tmp_path / "answers.jsonl"
    with f.open("w") as fh:
        for i in range(n):
            rec = {"user": "maya", "query": "p1-open", "model": f"m{i}", "answer": f"{i} " + "y" * 2000}
            fh.write(json.dumps(rec) + "\n")
    return f


@pytest.fixture
def db_with_answers(home, db, tmp_path) -> Path:
    done = prefscope(home, "--db", str(db), "import-results", str(_answers(tmp_path)))
    assert done.returncode == 0, done.stderr
    return db


def _fsize_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_export_out_past_the_file_size_limit_is_one_line_and_keeps_the_old_file(home, db_with_answers, tmp_path):
    out = tmp_path / "runs.csv"
    out.write_text("old,export\n")
    proc = prefscope(
        home,
        "--db",
        str(db_with_answers),
        "export",
        "--out",
        str(out),
        "--force",
        preexec_fn=_fsize_limit(256 * 1024),  # the export is > 1 MB
    )
    one_line(proc, "runs.csv")
    assert out.read_text() == "old,export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


# --- Ctrl+C -------------------------------------------------------------------------------------------


def test_sigint_during_export_exits_130(home, db_with_answers):
    """The child writes > 1 MB to a pipe this test stops reading: once the first bytes arrive it is
    mid-export and cannot finish until drained, so the SIGINT lands mid-way every time."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tui.cli", "--db", str(db_with_answers), "export", "--format", "jsonl"],
        cwd=REPO,
        env=_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.read(4096)  # it has started writing rows
        assert first
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=TIMEOUT)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    text = err.decode()
    assert child.returncode == 130, (child.returncode, text)
    assert "Traceback" not in text and "Aborted!" not in text, text
    assert len(first) + len(out) < 1_000_000  # it stopped mid-way
    assert "interrupted" in text


def test_keyboard_interrupt_in_any_command_exits_130(tmp_path, monkeypatch):
    """Through the one handler (CliRunner): import, judge and import-results stop with 130 too."""
    from click.testing import CliRunner

    import core.formats
    import core.results
    from tui.cli import main

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(core.formats, "load_path", interrupted)
    monkeypatch.setattr(core.results, "load_results", interrupted)
    f = tmp_path / "a.jsonl"
    f.write_text("{}\n")
    runner = CliRunner()
    for command in (["import", str(f)], ["import-results", str(f)]):
        result = runner.invoke(main, ["--db", str(tmp_path / "p.db"), *command])
        assert result.exit_code == 130, (command, result.output)
        assert "Aborted!" not in result.output
