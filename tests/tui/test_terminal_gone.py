"""The workbench leaves when its terminal does: a killed multiplexer session or a dropped remote
login must not leave it running (and spinning on a dead input) for hours. A real `prefscope demo`
runs on a pseudo-terminal that is its controlling terminal; the test then takes the terminal away.

Leaving "cleanly" means the normal exit path: exit status 0 (a SIGHUP death is -1, a crash 1)
and the exit handlers ran (the workbench closed its database, so SQLite folded the -wal file in
and removed it). Nothing here races the clock: the app is given a minute to leave (a bound on a
hang, not a speed), and an orphan that spins on its dead input never leaves, so it fails the test
whatever the machine's speed. The app runs as a user's would, in a home of its own: embedding
ahead on, with the exported embedding graph when `make install` made one."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.tui.conftest import child_env

HANG_S = 60.0  # an app that has not left by then will not: it is stuck or spinning

# Runs in the child before the app: takes the pty on `tty_fd` as the controlling terminal of
# the new session (so a hang-up is delivered as a terminal emulator's would be), optionally
# ignores SIGHUP (as a parent that never forwards it may), then becomes the app.
LAUNCHER = r"""
import fcntl, os, signal, sys, termios
tty_fd, ignore_hup = int(sys.argv[1]), sys.argv[2] == "ignore-hup"
fcntl.ioctl(tty_fd, termios.TIOCSCTTY, 0)
if ignore_hup:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
os.execv(sys.executable, [sys.executable, "-m", "tui.cli", "demo"])
"""


@dataclass
class Running:
    proc: subprocess.Popen
    master: int | None
    db: Path
    input_pipe: int | None = None  # the write end of stdin when stdin is a pipe, not the pty
    output: bytes = b""  # what it wrote to the terminal since the last wait_drawn

    def text_written(self) -> str:
        return re.sub(rb"\x1b\[[0-9;?<>=$]*[a-zA-Z~]", b"", self.output).decode(errors="replace")[-1500:]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def drain(self, timeout: float) -> bytes:
        if self.master is None:
            time.sleep(timeout)
            return b""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the app closed its side
            return b""
        self.output += data
        return data

    def close_terminal(self) -> None:
        assert self.master is not None
        os.close(self.master)
        self.master = None

    def wait_drawn(self) -> None:
        seen, deadline = b"", time.monotonic() + HANG_S
        while b"maya" not in seen:  # the demo opens on the sample user maya
            assert self.proc.poll() is None, f"exited early ({self.proc.returncode}): {seen[-2000:]!r}"
            assert time.monotonic() < deadline, f"never drew the main screen: {seen[-2000:]!r}"
            seen += self.drain(0.2)
        self.output = b""  # the terminal goes while start-up work may still be running, as it can

    def wait_exit(self) -> int | None:
        """The exit status as Popen reports it, or None if it is still running after HANG_S."""
        deadline = time.monotonic() + HANG_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return self.proc.returncode
            self.drain(0.05)
        return None

    def stop(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.master, self.input_pipe):
            if fd is not None:
                os.close(fd)


def launch(tmp_path: Path, *, ignore_hup: bool = False, stdin_pipe: bool = False) -> Running:
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    stdin, input_pipe = slave, None
    if stdin_pipe:
        stdin, input_pipe = os.pipe()
    # a new user's environment (tests/tui/conftest.child_env), but embedding ahead as by default
    env = child_env(tmp_path / "home", PREFSCOPE_EMBED_AHEAD="true", TERM="xterm-256color", TEXTUAL_ANIMATIONS="none")
    proc = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, "2", "ignore-hup" if ignore_hup else "default-hup"],
        stdin=stdin,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        cwd=REPO,
        env=env,
    )
    os.close(slave)
    if stdin_pipe:
        os.close(stdin)
    db = Path(env["XDG_DATA_HOME"]) / "prefscope" / "prefscope.db"  # where a new user's lands
    return Running(proc, master, db, input_pipe)


def assert_left_cleanly(app: Running, *, cpu_at_loss: float) -> None:
    status = app.wait_exit()
    if status is None:
        cpu = app.cpu_seconds()
        raise AssertionError(
            f"still running {HANG_S:g} s after losing its terminal, having used {cpu - cpu_at_loss:.1f} CPU s "
            f"since (a spinning input thread uses about one per second)"
        )
    assert status == 0, f"did not leave by its exit path: exit status {status}\n{app.text_written()}"
    assert app.db.exists(), f"no database at {app.db}"
    assert not Path(f"{app.db}-wal").exists(), "the workbench's database was not closed"


@pytest.fixture
def started(tmp_path):
    apps: list[Running] = []

    def start(**kwargs) -> Running:
        app = launch(tmp_path, **kwargs)
        apps.append(app)
        app.wait_drawn()
        return app

    yield start
    for app in apps:
        app.stop()


def test_closing_the_terminal_ends_the_app(started):
    app = started()
    cpu = app.cpu_seconds()
    app.close_terminal()  # the kernel hangs up the pty and sends SIGHUP
    assert_left_cleanly(app, cpu_at_loss=cpu)


def test_closing_the_terminal_ends_the_app_when_sighup_is_ignored(started):
    app = started(ignore_hup=True)
    cpu = app.cpu_seconds()
    app.close_terminal()  # no signal arrives: only the dead input tells
    assert_left_cleanly(app, cpu_at_loss=cpu)


def test_sighup_ends_the_app(started):
    app = started()
    cpu = app.cpu_seconds()
    app.proc.send_signal(signal.SIGHUP)
    assert_left_cleanly(app, cpu_at_loss=cpu)


def test_losing_the_output_terminal_ends_the_app(started):
    """Input from a pipe that stays open, the screen on the pty: neither a signal nor the input
    says the terminal is gone, only the terminal itself does."""
    app = started(ignore_hup=True, stdin_pipe=True)
    cpu = app.cpu_seconds()
    app.close_terminal()
    assert_left_cleanly(app, cpu_at_loss=cpu)
