"""Prompt steps stored with each distinct message once (``storage.prompt_messages``, migration 011),
against real SQLite files: a run's messages read back exactly as they were written, shared messages
are stored once, and a database made before 011 is converted without losing a prompt."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from core.plan import Message, PromptPlan, PromptStep
from core.providers.base import ModelSpec
from core.run.spec import RunSpec, RunStarted
from storage.db import open_db
from storage.migrations import discover, migrate
from storage.prompt_messages import FIELDS, insert_prompt_step, message_key, step_messages
from storage.recorder import RunRecorder
from storage.runs import load_run
from storage.writer import Writer

LONG = "".join(f"line {i}: the same old story, told again — ✓\n" for i in range(60_000))  # ~2.8 MB
TRICKY = [
    Message(role="system", content="You are a helpful assistant."),
    Message(role="user", content="naïve café ☕ 日本語 עברית 🏳️‍🌈 e\u0301 \u200b zero-width, \t tab, \r\n crlf"),
    Message(role="assistant", content=""),
    Message(role="user", content='quotes " \\ backslash, {"json": [1, 2]} and a NUL \x00 inside'),
    Message(role="assistant", content=""),  # the same message again within one prompt
    Message(role="user", content=LONG),
    Message(role="system", content="You are a helpful assistant."),
    Message(role="user", content="  leading and trailing spaces  \x01\x1f\x7f \u2028\u2029 \U0010ffff"),
]


def old_json(messages: list[Message]) -> str:
    """A step's messages as ``prompts.messages`` held them before 011 (and ``sha256`` still digests)."""
    return json.dumps([m.model_dump() for m in messages], ensure_ascii=False)


def spec(query: str = "q1") -> RunSpec:
    return RunSpec(
        user_id="maya",
        query_id=query,
        expression_type=1,
        context="normal",
        method="zero-shot",
        models=[ModelSpec(id="demo:generic")],
    )


def plan(*steps: list[Message]) -> PromptPlan:
    return PromptPlan(
        method="zero-shot",
        steps=[PromptStep(name=f"step{i}", messages=m, tokens=10 + i, purpose=f"p{i}") for i, m in enumerate(steps)],
    )


def record(path, runs: dict[str, PromptPlan]) -> None:
    """Store runs through the recorder's writer, as the engine does."""
    recorder = RunRecorder(path)
    for run_id, p in runs.items():
        recorder.record(RunStarted(run_id, spec(run_id), p))
    recorder.close()


def rows(path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "prompts.db"
    open_db(p).close()
    return p


def test_tricky_messages_read_back_exactly(path):
    stored = plan(TRICKY, [Message(role="user", content="second step")], [])
    record(path, {"run-a": stored})
    db = open_db(path)
    try:
        run = load_run(db, "run-a")
        assert run.plan == stored
        for i, step in enumerate(stored.steps):
            back = run.plan.steps[i]
            assert old_json(back.messages) == old_json(step.messages), "byte-identical JSON of the messages"
            assert step_messages(db, "run-a", i) == step.messages
        assert run.plan.steps[0].messages[5].content == LONG
        assert run.plan.steps[0].messages[3].content.endswith("NUL \x00 inside")
        assert run.plan.steps[0].messages[2] is not run.plan.steps[0].messages[4], "each position its own Message"
        assert step_messages(db, "run-a", 9) == []
    finally:
        db.close()
    digests = rows(path, "SELECT sha256 FROM prompts WHERE run_id = 'run-a' ORDER BY step_index")
    assert digests == [(hashlib.sha256(old_json(s.messages).encode()).hexdigest(),) for s in stored.steps]
    assert rows(path, "SELECT count(*) FROM prompt_messages") == [(6 + 1,)], "TRICKY: 8 messages, 6 distinct"
    for m in TRICKY:  # a message's key digests the very JSON its step's list holds
        assert message_key(m) == hashlib.sha256(json.dumps(m.model_dump(), ensure_ascii=False).encode()).digest()


def test_runs_sharing_messages_store_each_message_once(path):
    history = [Message(role="user" if i % 2 == 0 else "assistant", content=f"turn {i} " * 200) for i in range(40)]
    first = plan([*history[:30], Message(role="user", content="question one")])
    second = plan([*reversed(history[10:]), Message(role="user", content="question two")])
    record(path, {"run-1": first})
    record(path, {"run-2": second, "run-3": first})  # another writer, later
    assert rows(path, "SELECT count(*) FROM prompt_messages") == [(40 + 2,)]
    (stored_bytes,) = rows(path, "SELECT sum(length(CAST(content AS BLOB))) FROM prompt_messages")[0]
    assert stored_bytes == sum(len(m.content.encode()) for m in [*history, *first.steps[0].messages[-1:]]) + len(
        "question two"
    )
    db = open_db(path)
    try:
        assert load_run(db, "run-1").plan == first
        assert load_run(db, "run-2").plan == second
        assert load_run(db, "run-3").plan == first
    finally:
        db.close()
    ids = dict(rows(path, "SELECT run_id, message_ids FROM prompts"))
    assert ids["run-1"] == ids["run-3"]
    # The order lives in the id list; SQL can walk it.
    walked = rows(
        path,
        "SELECT m.content FROM prompts p, json_each(p.message_ids) j JOIN prompt_messages m ON m.id = j.value "
        "WHERE p.run_id = 'run-2' ORDER BY j.key",
    )
    assert [c for (c,) in walked] == [m.content for m in second.steps[0].messages]


def test_a_failed_write_leaves_no_message_behind(path):
    record(path, {"run-1": plan([Message(role="user", content="kept")])})
    again = PromptStep(name="step0", messages=[Message(role="user", content="rolled back")])
    with Writer(path) as writer:
        # The prompt row's primary key refuses step 0 again, after its message was added.
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            writer.submit(lambda db: insert_prompt_step(db, "run-1", 0, again)).result()
    assert rows(path, "SELECT content FROM prompt_messages") == [("kept",)]


def test_message_fields_all_have_a_column():
    """A field added to Message needs a prompt_messages column (a new migration) before it can be stored."""
    assert tuple(Message.model_fields) == FIELDS


# -- migration 011 ------------------------------------------------------------------------------
OLD_STEPS = {
    ("run-old-1", 0): TRICKY,
    ("run-old-1", 1): [Message(role="user", content="revise it")],
    ("run-old-2", 0): [*reversed(TRICKY), Message(role="user", content="another question")],
    ("run-old-3", 0): [],
}


def database_at_010(path) -> None:
    """A database migrated up to 010 with prompts written the old way (full JSON per step)."""
    old = open_db(path, migrate=False)
    migrate(old, [m for m in discover() if m.version <= 10])
    for run_id in sorted({r for r, _ in OLD_STEPS}):
        old.execute(
            "INSERT INTO runs (id, created_at, user_id, query_id, context, seed, method, spec, plan, status) "
            "VALUES (?, '2025-01-01', 'maya', 'q1', 'normal', 0, 'zero-shot', ?, ?, 'ok')",
            [run_id, spec().model_dump_json(), json.dumps({"method": "zero-shot"})],
        )
        old.execute(
            "INSERT INTO responses (id, run_id, slot, model, provider, is_demo, params, step, is_final, "
            "request_hash, text, status, started_at, updated_at) "
            "VALUES (?, ?, 0, 'demo:generic', 'demo', 1, '{}', 'step0', 1, 'h', 'an answer', 'ok', '2025', '2025')",
            [f"resp-{run_id}", run_id],
        )
    for (run_id, index), messages in OLD_STEPS.items():
        raw = old_json(messages)
        old.execute(
            "INSERT INTO prompts (run_id, step_index, step, purpose, messages, tokens, sha256) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                run_id,
                index,
                f"step{index}",
                f"purpose {index}",
                raw,
                7 + index,
                hashlib.sha256(raw.encode()).hexdigest(),
            ],
        )
    old.conn.commit()
    old.close()


def test_migration_011_converts_every_prompt_of_an_older_database(tmp_path):
    path = tmp_path / "old.db"
    database_at_010(path)
    before = rows(path, "SELECT run_id, step_index, step, purpose, messages, tokens, sha256 FROM prompts")

    db = open_db(path)  # applies 011 (and whatever follows)
    try:
        assert 11 in [v for (v,) in db.execute("SELECT version FROM migrations")]
        for run_id, index, step, purpose, messages, tokens, _ in before:
            assert old_json(step_messages(db, run_id, index)) == messages, f"{run_id} step {index} byte-identical"
            back = load_run(db, run_id).plan.steps[index]
            assert (back.name, back.purpose, back.tokens, old_json(back.messages)) == (step, purpose, tokens, messages)
        assert {r[0]: r[1] for r in rows(path, "SELECT run_id || '/' || step_index, sha256 FROM prompts")} == {
            f"{r[0]}/{r[1]}": r[6] for r in before
        }, "the digests are kept"
    finally:
        db.close()
    distinct = {message_key(m) for messages in OLD_STEPS.values() for m in messages}
    assert rows(path, "SELECT count(*) FROM prompt_messages") == [(len(distinct),)]
    assert "messages" not in [c for (_, c, *_) in rows(path, "PRAGMA table_info(prompts)")]
    assert rows(path, "SELECT count(*) FROM responses") == [(3,)], "rebuilding prompts cascades nothing"
    assert rows(path, "PRAGMA integrity_check") == [("ok",)]
    assert rows(path, "PRAGMA foreign_key_check") == []

    # A run written afterwards shares the converted messages: both hash them the same way.
    record(path, {"run-new": plan([*TRICKY, Message(role="user", content="revise it")])})
    assert rows(path, "SELECT count(*) FROM prompt_messages") == [(len(distinct),)]


def test_migration_011_stops_on_a_message_it_would_lose_and_changes_nothing(tmp_path):
    path = tmp_path / "odd.db"
    database_at_010(path)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE prompts SET messages = ? WHERE run_id = 'run-old-2'",
        [json.dumps([{"role": "user", "content": "hi", "name": "extra field"}])],
    )
    conn.commit()
    conn.close()
    with pytest.raises(RuntimeError, match="run-old-2 step 0"):
        open_db(path)
    assert rows(path, "SELECT max(version) FROM migrations") == [(10,)]
    assert rows(path, "SELECT count(*) FROM prompts") == [(len(OLD_STEPS),)]
    assert rows(path, "SELECT count(*) FROM sqlite_master WHERE name IN ('prompt_messages', 'prompts_011')") == [(0,)]
