"""`kill -9` a `prefscope run` mid-stream: the database stays consistent and holds every
model's partial text as of at most 0.5 s before the kill.

Three loopback OpenAI-protocol servers stream distinct texts; their encoders note the monotonic
time each text frame is produced, so the test knows exactly what each model had been sent by
any moment (CLOCK_MONOTONIC is shared by both processes)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from storage.db import open_db
from storage.runs import mark_interrupted
from tests.conftest import REPO
from tests.servers.openai_sse import OpenAIEncoder, OpenAIServer
from tests.servers.script import Reply

pytestmark = pytest.mark.slow
SLACK_S = 0.5
CHUNKS = 600


class TimedEncoder(OpenAIEncoder):
    def __init__(self):
        super().__init__()
        self.sent: list[tuple[float, str]] = []

    def text(self, reply, chunk):
        self.sent.append((time.monotonic(), chunk))
        return super().text(reply, chunk)


def _server(k: int) -> tuple[OpenAIServer, TimedEncoder]:
    server = OpenAIServer([Reply(chunks=[f"m{k}-{i:04d} " for i in range(CHUNKS)], delay_s=0.02 + 0.01 * k)])
    encoder = TimedEncoder()
    server.encoder = encoder
    return server, encoder


def _texts(db_path) -> dict[str, str]:
    try:
        con = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1)
        rows = con.execute("SELECT model, text FROM responses").fetchall()
        con.close()
        return dict(rows)
    except sqlite3.Error:
        return {}


def test_kill_minus_nine_mid_stream_loses_at_most_half_a_second(tmp_path):
    db_path = tmp_path / "kill.db"
    servers = [_server(k) for k in range(3)]
    for s, _ in servers:
        s.start()
    try:
        args = [sys.executable, "-m", "tui.cli", "--db", str(db_path), "run", "maya", "p1-open", "--plain"]
        for k, (s, _) in enumerate(servers):
            args += ["--model", f"openai:m{k}", "--base-url", f"openai:m{k}={s.base_url}"]
        env = {k: v for k, v in os.environ.items() if k != "PREFSCOPE_DB"}
        child = subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            texts = _texts(db_path)
            if len(texts) == 3 and all(len(t) > 40 for t in texts.values()):
                break
            if child.poll() is not None:
                pytest.fail(f"prefscope run exited early: {child.stderr.read().decode()[-2000:]}")
            time.sleep(0.05)
        else:
            child.kill()
            pytest.fail("the run never streamed into the database")
        time.sleep(1.0)
        t_kill = time.monotonic()
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        for s, _ in servers:
            s.stop()

    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    stored = _texts(db_path)
    assert set(stored) == {"openai:m0", "openai:m1", "openai:m2"}
    for k, (_, encoder) in enumerate(servers):
        full = "".join(chunk for _, chunk in encoder.sent)
        text = stored[f"openai:m{k}"]
        must_have = "".join(chunk for t, chunk in encoder.sent if t <= t_kill - SLACK_S)
        assert full.startswith(text), "stored text is not what the model streamed"
        assert text.startswith(must_have), (
            f"model m{k}: stored {len(text)} chars, but {len(must_have)} had streamed by 0.5 s before the kill"
        )
        assert len(encoder.sent) < CHUNKS, "the stream should still have been running at the kill"

    db = open_db(db_path)
    (run_id,) = mark_interrupted(db)
    rows = db.execute("SELECT status, text FROM responses WHERE run_id = ?", [run_id]).fetchall()
    assert {r[0] for r in rows} == {"interrupted"}
    assert sorted(r[1] for r in rows) == sorted(stored.values())
