"""No key, header or secret ends up in the database: a planted key is used for real (the
loopback server sees the credential) and then searched for in every byte prefscope wrote."""

from __future__ import annotations

import asyncio

from core.formats.native import load_file
from core.plan import Message, PromptPlan, PromptStep
from core.providers import get_provider
from core.providers.base import ModelSpec
from core.run.engine import Engine
from core.run.spec import RunSpec
from storage.db import open_db
from storage.recorder import RunRecorder
from tests.conftest import SAMPLE_DATA
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

PLANTED = "sk-test-PLANTED-7f3c9a1e5b"


def test_a_planted_key_is_used_but_never_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    bundle = load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    db_path = tmp_path / "secrets.db"
    open_db(db_path).close()
    with OpenAIServer([Reply.text("A fine answer.")]) as server:
        spec = RunSpec(
            user_id="maya", query_id="p1-open", models=[ModelSpec(id="openai:gpt-4o-mini", base_url=server.base_url)]
        )
        plan = PromptPlan(
            method="zero-shot", steps=[PromptStep(name="answer", messages=[Message(role="user", content="hi")])]
        )
        recorder = RunRecorder(db_path)
        asyncio.run(Engine(lambda s: get_provider(s), recorder.record).run(spec, plan, bundle))
        recorder.close()
        assert server.requests and server.requests[0].auth == "bearer", "the key was really sent"
    db = open_db(db_path)
    assert db.execute("SELECT status, text FROM responses").fetchone() == ("ok", "A fine answer.")
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    for f in (f for f in tmp_path.rglob("*") if f.is_file()):  # the home and XDG folders too
        data = f.read_bytes()
        assert PLANTED.encode() not in data, f"the key leaked into {f.name}"
        assert b"Bearer " not in data, f"an auth header value leaked into {f.name}"
