"""The storage recorder against a real SQLite file: runs re-open exactly, partial text is
checkpointed while streaming, and a run cut off by a dead process is marked interrupted."""

from __future__ import annotations

import asyncio
import os
import sqlite3

import pytest

from core.formats.native import load_file
from core.plan import Message, PromptPlan, PromptStep, RetrievedTurn
from core.providers.base import ModelSpec
from core.providers.demo import DemoProvider
from core.run.engine import Engine
from core.run.spec import RunSpec, TokensArrived
from storage.db import open_db
from storage.recorder import RunRecorder
from storage.runs import list_runs, load_run, mark_interrupted
from tests.conftest import SAMPLE_DATA
from tests.waiting import await_until


@pytest.fixture(scope="module")
def maya():
    return load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]


def plan_with_retrieval() -> PromptPlan:
    return PromptPlan(
        method="rag",
        steps=[
            PromptStep(
                name="answer",
                messages=[Message(role="system", content="sys"), Message(role="user", content="Where should I stay?")],
                tokens=12,
                # a protocol's limits and prefill re-open too (the choice judge reads the prefill)
                max_tokens=5,
                temperature=0.0,
                prefill="<choice>",
            )
        ],
        history_tokens=1234,
        retrieved=[RetrievedTurn(rank=1, session_id="maya-p5-e1", turn_index=0, similarity=0.61, is_evidence=True)],
    )


async def test_a_stored_run_reopens_exactly(tmp_path, maya):
    db_path = tmp_path / "runs.db"
    open_db(db_path).close()
    recorder = RunRecorder(db_path)
    spec = RunSpec(
        user_id="maya",
        query_id="p5-open",
        expression_type=2,
        context="normal",
        method="rag",
        models=[ModelSpec(id="demo:generic"), ModelSpec(id="demo:flaky")],
    )
    plan = plan_with_retrieval()
    provider = DemoProvider(tokens_per_s=0)
    finished = {}

    def emit(e):
        recorder.record(e)
        if type(e).__name__ == "ResponseFinished":
            finished[e.slot] = e

    run_id = await Engine(lambda s: provider, emit).run(spec, plan, maya)
    recorder.close()

    db = open_db(db_path)
    run = load_run(db, run_id)
    assert run.spec == spec
    assert run.plan == plan
    assert run.status == "partial"
    stored = {r.slot: r for r in run.final_responses()}
    for slot, e in finished.items():
        assert stored[slot].text == e.text and stored[slot].status == e.status
        assert stored[slot].ttft_ms == e.ttft_ms and stored[slot].output_tokens == e.output_tokens
    assert stored[1].status == "error" and stored[1].error
    assert [r.id for r in list_runs(db)] == [run_id]
    # Only successful live answers become replayable records.
    cached = db.execute("SELECT count(*) FROM response_cache").fetchone()[0]
    assert cached == 1


def test_partial_text_is_checkpointed_while_streaming(tmp_path, maya):
    db_path = tmp_path / "ck.db"
    open_db(db_path).close()
    recorder = RunRecorder(db_path, checkpoint_s=0.05)
    spec = RunSpec(user_id="maya", query_id="p1-open", models=[ModelSpec(id="demo:generic")])
    seen: list[str] = []
    stored_mid_stream: list[str] = []

    def emit(e):
        recorder.record(e)
        if isinstance(e, TokensArrived):
            seen.append(e.text)

    async def sleep(seconds: float) -> None:
        """The demo's pacing for 8 chunks, then a stall mid-answer until cancelled: the answer
        cannot finish (and be stored whole) before a checkpoint is looked for."""
        if len(seen) < 8:
            await asyncio.sleep(seconds)
        else:
            await asyncio.Event().wait()

    def checkpointed() -> str | None:
        """The text stored so far for the running response, if any."""
        reader = sqlite3.connect(db_path)
        try:
            row = reader.execute("SELECT text, status FROM responses").fetchone()
        finally:
            reader.close()
        return row[0] if row and row[1] == "running" and row[0] else None

    async def main():
        task = asyncio.create_task(
            Engine(lambda s: DemoProvider(tokens_per_s=40, sleep=sleep), emit).run(spec, plan_with_retrieval(), maya)
        )
        stored_mid_stream.append(await await_until(checkpointed, what="a checkpoint of the partial text"))
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    recorder.close()
    assert "".join(seen).startswith(stored_mid_stream[0])
    db = open_db(db_path)
    (resp,) = load_run(db, list_runs(db)[0].id).responses
    assert resp.status == "cancelled" and resp.text == "".join(seen)


def test_runs_left_running_by_a_dead_process_become_interrupted(tmp_path):
    db = open_db(tmp_path / "i.db")
    dead_pid = 2**22 + 12345  # above pid_max on Linux: no such process
    now = "2026-01-01T00:00:00"
    db["runs"].insert(
        {
            "id": "run-x",
            "created_at": now,
            "user_id": "u",
            "query_id": "q",
            "context": "simple",
            "seed": 0,
            "method": "zero-shot",
            "spec": "{}",
            "plan": "{}",
            "status": "running",
            "pid": dead_pid,
        }
    )
    db["responses"].insert(
        {
            "id": "resp-x",
            "run_id": "run-x",
            "slot": 0,
            "model": "demo:generic",
            "provider": "demo",
            "is_demo": 1,
            "params": "{}",
            "step": "answer",
            "is_final": 1,
            "request_hash": "h",
            "text": "half an ans",
            "status": "running",
            "pid": dead_pid,
            "started_at": now,
            "updated_at": now,
        }
    )
    db["runs"].insert(
        {
            "id": "run-live",
            "created_at": now,
            "user_id": "u",
            "query_id": "q",
            "context": "simple",
            "seed": 0,
            "method": "zero-shot",
            "spec": "{}",
            "plan": "{}",
            "status": "running",
            "pid": os.getpid(),
        }
    )
    db.conn.commit()
    assert mark_interrupted(db) == ["run-x"]
    assert db.execute("SELECT status, text FROM responses WHERE id='resp-x'").fetchone() == (
        "interrupted",
        "half an ans",
    )
    assert db.execute("SELECT status FROM runs WHERE id='run-live'").fetchone() == ("running",)
