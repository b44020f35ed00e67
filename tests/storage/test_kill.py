"""`kill -9` a `prefscope run` mid-stream: the database stays consistent and keeps every model's
partial text, all of what had been streamed to it.

Three loopback OpenAI-protocol servers stream distinct texts and then stall with the connection
open, so every stream is unfinished when the process is killed. The test waits (an event, not a
time) until the database holds everything each server sent, which a recorder that stored text
only at the end of a stream never does, kills the process, and checks nothing was lost. How
often the text is checkpointed is a speed, measured in bench/, not here."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from storage.db import open_db
from storage.runs import mark_interrupted
from tests.conftest import REPO
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.waiting import wait_until

pytestmark = pytest.mark.slow
SENT = 80  # text frames each server sends before it stalls


def _server(k: int) -> OpenAIServer:
    chunks = [f"m{k}-{i:04d} " for i in range(SENT + 50)]
    return OpenAIServer([Reply(chunks=chunks, delay_s=0.005, fault="stall", fault_after=SENT, stall_s=300)])


def _sent(k: int) -> str:
    return "".join(f"m{k}-{i:04d} " for i in range(SENT))


def _texts(db_path, status: str | None = None) -> dict[str, str]:
    """Each model's stored text (of its responses in ``status`` only, when given)."""
    try:
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1)
        rows = con.execute("SELECT model, text FROM responses WHERE ?1 IS NULL OR status = ?1", [status]).fetchall()
        con.close()
        return dict(rows)
    except sqlite3.Error:
        return {}


def test_kill_minus_nine_mid_stream_loses_nothing_that_was_streamed(tmp_path):
    db_path = tmp_path / "kill.db"
    servers = [_server(k) for k in range(3)]
    expected = {f"openai:m{k}": _sent(k) for k in range(3)}
    for s in servers:
        s.start()
    try:
        args = [sys.executable, "-m", "tui.cli", "--db", str(db_path), "run", "maya", "p1-open", "--plain"]
        for k, s in enumerate(servers):
            args += ["--model", f"openai:m{k}", "--base-url", f"openai:m{k}={s.base_url}"]
        env = {k: v for k, v in os.environ.items() if k != "PREFSCOPE_DB"}
        child = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def all_streamed_text_stored() -> bool:
            if child.poll() is not None:
                pytest.fail(f"prefscope run exited early: {child.stderr.read().decode()[-2000:]}")
            return _texts(db_path, "running") == expected  # stored while the streams are still open

        try:
            wait_until(all_streamed_text_stored, timeout=120, every=0.1, what="every streamed frame in the database")
        except AssertionError:
            child.kill()
            raise AssertionError(f"stored {_texts(db_path)!r}, streamed {expected!r}") from None
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
        assert all(len(s.requests) == 1 for s in servers), "each stream was still open (stalled) at the kill"
    finally:
        for s in servers:
            s.stop()

    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    assert _texts(db_path) == expected

    db = open_db(db_path)
    (run_id,) = mark_interrupted(db)
    rows = db.execute("SELECT model, status, text FROM responses WHERE run_id = ?", [run_id]).fetchall()
    assert {r[1] for r in rows} == {"interrupted"}
    assert {r[0]: r[2] for r in rows} == expected
