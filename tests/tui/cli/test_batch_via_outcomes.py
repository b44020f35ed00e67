"""`prefscope batch --via openai-batch|anthropic-batch`: what each outcome of a provider job leaves
in the database and the exit code, in-process against the loopback batch servers through the real
SDKs. Per-request errors, expiry, cancelling, --no-wait, judges, refusals, multi-step methods,
endpoint models, and prompt caching (batch and streamed)."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner, Result

from core.providers import pricing
from storage.db import open_db
from storage.prompt_messages import load_prompt_steps
from tests.cli_runner import cli
from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.batch_anthropic import AnthropicBatchServer
from tests.servers.batch_jobs import content_text, echo_reply
from tests.servers.batch_openai import OpenAIBatchServer
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tests.tui.conftest import child_env
from tui.cli import main

ROOT = Path(__file__).resolve().parents[3]
#: 8 cells: maya's open queries, one context, one method.
GRID = ("--user", "maya", "--query-kind", "open", "--context", "simple")
KEY = "sk-test-via-outcomes-0123456789"
EPHEMERAL = {"type": "ephemeral"}
HANG_S = 60  # bounds a hang (a command that never stops polling), not how long a command may take
BACKENDS = {
    "openai-batch": ("openai:gpt-4o-mini", OpenAIBatchServer, "OPENAI"),
    "anthropic-batch": ("anthropic:claude-haiku-4-5", AnthropicBatchServer, "ANTHROPIC"),
}
OPENAI, ANTHROPIC = BACKENDS["openai-batch"][0], BACKENDS["anthropic-batch"][0]


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("via-outcomes")
    config = root / "empty.toml"
    config.touch()
    path = root / "sample.db"
    cli(str(path), "--config", str(config), "import", str(ROOT / "sample_data"))
    return path


@pytest.fixture
def db(sample_db, tmp_path) -> str:
    copy = tmp_path / "prefscope.db"
    copy.write_bytes(sample_db.read_bytes())
    return str(copy)


@dataclasses.dataclass
class Backend:
    via: str
    model: str
    server: OpenAIBatchServer | AnthropicBatchServer


@pytest.fixture(params=list(BACKENDS))
def backend(request, monkeypatch):
    """A loopback batch server for ``--via`` (param), its key and base URL in the environment."""
    model, server_class, prefix = BACKENDS[request.param]
    with server_class(polls_to_finish=2) as server:
        monkeypatch.setenv(f"{prefix}_API_KEY", KEY)
        monkeypatch.setenv(f"{prefix}_BASE_URL", server.base_url)
        yield Backend(request.param, model, server)


def only(via: str):
    """Run a test with one of the two backends."""
    return pytest.mark.parametrize("backend", [via], indirect=True)


def invoke(db: str, *args: str, config: Path | None = None, catch: bool = False) -> Result:
    head = ["--db", db, *(["--config", str(config)] if config else [])]
    return CliRunner().invoke(main, [*head, *args], catch_exceptions=catch)


def batch_args(b: Backend | None, *extra: str, grid=GRID) -> list[str]:
    via = ["--model", b.model, "--via", b.via] if b else []
    return ["batch", *grid, *via, "--poll-max-s", "0.01", "--yes", *extra]


def batch(db: str, b: Backend | None, *extra: str, grid=GRID, config: Path | None = None) -> Result:
    return invoke(db, *batch_args(b, *extra, grid=grid), config=config)


def rows(db: str, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def counts(db: str, table: str) -> dict[str, int]:
    return dict(rows(db, f"SELECT status, count(*) FROM {table} GROUP BY status"))


def question_of(body: dict) -> str:
    """The final user message of a request (chat body or Messages params)."""
    return next(content_text(m["content"]) for m in reversed(body["messages"]) if m["role"] == "user")


def question_of_run(db: str, run_id: str) -> str:
    database = open_db(db, readonly=True)
    try:
        messages = load_prompt_steps(database, run_id)[-1].messages
    finally:
        database.close()
    return next(m.content for m in reversed(messages) if m.role == "user")


def questions(server, job_id: str) -> set[str]:
    return {question_of(body) for body in server.submitted(job_id).values()}


def advance(server, job_id: str, polls: int = 1) -> None:
    """Move a job on as its status GETs would (each answers the next share of its requests)."""
    for _ in range(polls):
        server.poll(server.job(job_id))


# ---- per-request errors ------------------------------------------------------------------------
def test_request_errors_are_stored_with_the_providers_message_and_only_they_run_again(db, backend):
    failed: list[str] = []

    def responder(body: dict) -> Reply:
        if len(failed) < 3:  # the first three requests answered fail; later ones (the retry) succeed
            failed.append(question_of(body))
            return Reply.http_error(400, "refused by policy: too spicy", error_type="invalid_request_error")
        return echo_reply(body)

    backend.server.responder = responder
    first = batch(db, backend)
    assert first.exit_code == 3, first.output  # partial: some answers stored, some failed
    (job_id,) = backend.server.job_ids()

    errors = rows(db, "SELECT run_id, error FROM responses WHERE status = 'error'")
    assert len(errors) == 3 and counts(db, "responses") == {"ok": 5, "error": 3}
    for _, error in errors:
        assert "refused by policy: too spicy" in error and f"{backend.via} job {job_id}" in error
    assert {question_of_run(db, run_id) for run_id, _ in errors} == set(failed)
    assert counts(db, "batch_cells") == {"ok": 5, "error": 3}
    assert counts(db, "runs") == {"ok": 5, "error": 3}

    again = batch(db, backend)
    assert backend.server.job_ids() == [job_id], "failed cells wait for --retry-failed"
    assert again.exit_code == 0, again.output

    retried = batch(db, backend, "--retry-failed")
    assert retried.exit_code == 0, retried.output
    assert len(backend.server.job_ids()) == 2
    assert questions(backend.server, backend.server.job_ids()[-1]) == set(failed), "only the failed cells"
    assert counts(db, "batch_cells") == {"ok": 8}
    assert counts(db, "responses") == {"ok": 8, "error": 3}, "the failed answers stay stored"


# ---- expiry, cancelling, --no-wait --------------------------------------------------------------
def test_an_expired_job_keeps_its_answers_and_the_expired_cells_are_submitted_again(db, backend):
    submitted = batch(db, backend, "--no-wait")
    assert submitted.exit_code == 0, submitted.output
    (job_id,) = backend.server.job_ids()
    advance(backend.server, job_id)  # half of the requests answered …
    answered = {question_of(i.body) for i in backend.server.job(job_id).items if i.fate == "answered"}
    assert len(answered) == 4
    backend.server.expire(job_id)  # … then the 24 h window ends

    # The next command collects the expired job first, then submits its expired cells again (no
    # --retry-failed: expiry is not the cells' failure) and waits for them.
    collected = batch(db, backend)
    assert collected.exit_code == 0, collected.output
    assert len(backend.server.job_ids()) == 2
    expired = {question_of(i.body) for i in backend.server.job(job_id).items if i.fate == "expired"}
    assert questions(backend.server, backend.server.job_ids()[-1]) == expired
    assert counts(db, "batch_cells") == {"ok": 8}
    assert rows(db, "SELECT count(DISTINCT run_id) FROM responses WHERE status = 'ok'") == [(8,)]
    first = rows(
        db,
        "SELECT run_id FROM responses WHERE status = 'ok' AND via = ? AND run_id IN "
        "(SELECT run_id FROM provider_job_requests WHERE job_id = ?)",
        backend.via,
        job_id,
    )
    assert {question_of_run(db, run_id) for (run_id,) in first} == answered
    assert rows(db, "SELECT count(*) FROM provider_jobs WHERE collected_at IS NULL") == [(0,)]

    again = batch(db, backend)
    assert again.exit_code == 0, again.output
    assert len(backend.server.job_ids()) == 2, "nothing left to submit"


@only("openai-batch")
def test_expired_requests_are_not_counted_as_failed_answers(db, backend):
    """An expired request never ran: like a streamed call stopped before it started, it is not a
    failed answer of the model (the cell runs again), so the batch's summary must not count it."""
    assert batch(db, backend, "--no-wait").exit_code == 0
    (job_id,) = backend.server.job_ids()
    advance(backend.server, job_id)
    backend.server.expire(job_id)
    collected = batch(db, backend)
    assert collected.exit_code == 0, collected.output
    assert "error" not in counts(db, "responses"), counts(db, "responses")
    assert "error" not in counts(db, "runs"), counts(db, "runs")


def test_cancel_cancels_the_open_job_at_the_provider_and_stores_what_it_finished(db, backend):
    assert batch(db, backend, "--no-wait").exit_code == 0
    (job_id,) = backend.server.job_ids()
    advance(backend.server, job_id)  # half answered before the cancel

    cancelled = batch(db, backend, "--cancel")
    assert cancelled.exit_code == 0, cancelled.output
    assert "asked the provider to cancel 1 job(s)" in cancelled.output
    assert backend.server.job(job_id).outcome == "cancelled"
    assert counts(db, "responses") == {"ok": 4, "cancelled": 4}
    assert counts(db, "batch_cells") == {"ok": 4, "cancelled": 4}
    assert counts(db, "runs") == {"ok": 4, "cancelled": 4}
    assert rows(db, "SELECT count(*) FROM provider_jobs WHERE collected_at IS NULL") == [(0,)]

    rest = batch(db, backend)
    assert rest.exit_code == 0, rest.output
    assert len(backend.server.job_ids()) == 2 and len(backend.server.submitted()) == 4
    assert counts(db, "batch_cells") == {"ok": 8}


def test_no_wait_submits_and_returns_and_the_same_command_collects(db, backend):
    submitted = batch(db, backend, "--no-wait")
    assert submitted.exit_code == 0, submitted.output
    (job_id,) = backend.server.job_ids()
    assert f"submitted {backend.via} job {job_id}" in submitted.output
    assert "still run at the provider" in submitted.output
    assert rows(db, "SELECT id, requests, collected_at FROM provider_jobs") == [(job_id, 8, None)]
    assert counts(db, "runs") == {"submitted": 8} and counts(db, "batch_cells") == {"submitted": 8}
    assert rows(db, "SELECT count(*) FROM responses") == [(0,)]

    collected = batch(db, backend)
    assert collected.exit_code == 0, collected.output
    assert "not collected yet (8 requests)" in collected.output
    assert backend.server.job_ids() == [job_id], "cells waiting in a job are not submitted again"
    assert counts(db, "responses") == {"ok": 8} and counts(db, "batch_cells") == {"ok": 8}
    assert rows(db, "SELECT DISTINCT via FROM responses") == [(backend.via,)]


@only("anthropic-batch")
def test_no_wait_run_again_collects_a_job_that_has_ended(db, backend):
    """The command says it checks the jobs not collected yet: with --no-wait too (e.g. from cron)."""
    assert batch(db, backend, "--no-wait").exit_code == 0
    (job_id,) = backend.server.job_ids()
    advance(backend.server, job_id, polls=3)
    assert backend.server.job(job_id).outcome == "completed"

    again = batch(db, backend, "--no-wait")
    assert again.exit_code == 0, again.output
    assert counts(db, "responses") == {"ok": 8}, again.output
    assert rows(db, "SELECT count(*) FROM provider_jobs WHERE collected_at IS NULL") == [(0,)]


@only("openai-batch")
def test_a_missing_key_is_refused_before_any_cell_is_claimed(db, backend, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    result = invoke(db, *batch_args(backend), catch=True)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), f"crashed with {result.exception!r}"
    assert "OPENAI_API_KEY is not set" in result.output
    assert "running" not in counts(db, "batch_cells"), "no cell may stay claimed by a command that gave up"
    assert backend.server.batch_log == []


@only("openai-batch")
def test_collecting_without_the_key_says_so_and_keeps_the_job(db, backend, monkeypatch):
    assert batch(db, backend, "--no-wait").exit_code == 0
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    result = invoke(db, *batch_args(backend), catch=True)
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit), f"crashed with {result.exception!r}"
    assert "OPENAI_API_KEY is not set" in result.output
    assert rows(db, "SELECT count(*) FROM provider_jobs WHERE collected_at IS NULL") == [(1,)]
    assert counts(db, "batch_cells") == {"submitted": 8}


def _subprocess_env(db: str, **extra: str) -> dict[str, str]:
    config = Path(db).with_name("empty.toml")
    config.touch()
    return child_env(Path(db).with_name("home"), PREFSCOPE_CONFIG=str(config), **extra)


@only("openai-batch")
def test_a_job_the_server_cannot_read_ends_the_wait_with_its_error(db, backend):
    """Resumed against a server that does not know the job (another base URL, key or account), every
    poll is a 404: the command must say so and end, not wait silently forever."""
    assert batch(db, backend, "--no-wait").exit_code == 0
    (job_id,) = backend.server.job_ids()
    with OpenAIBatchServer() as stranger:
        env = _subprocess_env(db, OPENAI_API_KEY=KEY, OPENAI_BASE_URL=stranger.base_url)
        command = [sys.executable, "-m", "tui.cli", "--db", db, *batch_args(backend)]
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=HANG_S)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"still polling job {job_id} after {HANG_S} s of 404s: {exc.stdout!r}") from None
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert job_id in output and "404" in output
    assert rows(db, "SELECT id FROM provider_jobs WHERE collected_at IS NULL") == [(job_id,)], "kept for later"


# ---- judges ------------------------------------------------------------------------------------
@only("openai-batch")
def test_collected_answers_are_judged_by_the_grids_judges(db, backend):
    result = batch(db, backend, "--judge", "demo:heuristic")
    assert result.exit_code == 0, result.output
    judged = rows(
        db,
        "SELECT count(DISTINCT j.response_id) FROM judgments j JOIN responses r ON r.id = j.response_id "
        "WHERE j.judge_model = 'demo:heuristic' AND r.via = 'openai-batch' AND r.status = 'ok'",
    )
    assert judged == [(8,)]


# ---- refusals ----------------------------------------------------------------------------------
REFUSALS = [
    (("--model", "demo:generic", "--via", "openai-batch"), "demo:generic: --via openai-batch takes openai:"),
    (("--model", ANTHROPIC, "--via", "openai-batch"), f"{ANTHROPIC}: --via openai-batch takes openai:"),
    (("--model", OPENAI, "--via", "anthropic-batch"), f"{OPENAI}: --via anthropic-batch takes anthropic:"),
    (("--model", OPENAI, "--via", "openai-batch", "--probe"), "--probe runs each cell's probes after its answer"),
    (("--model", OPENAI, "--no-wait"), "--no-wait and --cancel are for provider batch jobs"),
    (("--model", OPENAI, "--cancel"), "--no-wait and --cancel are for provider batch jobs"),
]


@only("openai-batch")
@pytest.mark.parametrize(("args", "message"), REFUSALS, ids=[" ".join(a) for a, _ in REFUSALS])
def test_what_a_batch_api_cannot_run_is_refused_before_anything_is_sent(db, backend, monkeypatch, args, message):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # never reached
    result = batch(db, None, *args)
    assert result.exit_code == 1, result.output
    assert message in " ".join(result.output.split())
    assert backend.server.batch_log == [] and backend.server.requests == []
    assert rows(db, "SELECT count(*) FROM runs") == [(0,)]
    assert rows(db, "SELECT count(*) FROM batch_cells WHERE status NOT IN ('pending')") == [(0,)]


@only("openai-batch")
def test_a_multi_step_method_is_refused_per_cell_while_single_step_cells_go_through(db, backend):
    grid = (*GRID, "--method", "zero-shot", "--method", "self-critic")
    result = batch(db, backend, grid=grid)
    assert result.exit_code == 3, result.output  # partial
    assert len(backend.server.submitted()) == 8, "one job with the zero-shot cells only"
    failed = rows(db, "SELECT json_extract(spec, '$.method'), status, error FROM batch_cells WHERE status != 'ok'")
    assert len(failed) == 8
    for method, status, error in failed:
        assert (method, status) == ("self-critic", "error")
        assert "calls in sequence" in error and "--via stream" in error
    ok = rows(db, "SELECT DISTINCT r.method FROM runs r JOIN responses p ON p.run_id = r.id WHERE p.status = 'ok'")
    assert ok == [("zero-shot",)]
    assert rows(db, "SELECT count(*) FROM responses WHERE status = 'ok'") == [(8,)]


@only("openai-batch")
def test_an_endpoint_model_goes_through_openai_batch_at_its_base_url(db, backend, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    config = tmp_path / "config.toml"
    config.write_text(f'[endpoints.local]\nbase_url = "{backend.server.base_url}"\n')
    grid = (*GRID, "--model", "local:test-model", "--via", "openai-batch")
    result = batch(db, None, grid=grid, config=config)
    assert result.exit_code == 0, result.output
    bodies = list(backend.server.submitted().values())
    assert len(bodies) == 8
    for body in bodies:
        assert body["model"] == "test-model"
        assert "stream" not in body and "stream_options" not in body
        assert "max_completion_tokens" not in body, "a base_url server takes max_tokens"
    stored = rows(db, "SELECT DISTINCT model, via, status, cost_usd IS NULL FROM responses")
    assert stored == [("local:test-model", "openai-batch", "ok", 1)], "a self-hosted server has no price"


# ---- keys --------------------------------------------------------------------------------------
class CarelessOpenAIBatchServer(OpenAIBatchServer):
    """Refuses to create a job with a 401 whose body repeats the credentials it was sent."""

    def _create(self, request: web.Request, raw: bytes) -> web.Response:
        error = {"message": f"bad key {request.headers.get('Authorization')}", "type": "invalid_request_error"}
        return web.json_response({"error": {**error, "param": None, "code": "invalid_api_key"}}, status=401)


def test_a_refused_submission_fails_its_cells_without_showing_or_storing_the_key(db, monkeypatch):
    with CarelessOpenAIBatchServer() as server:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = batch(db, Backend("openai-batch", OPENAI, server))
    assert result.exit_code == 1, result.output
    assert counts(db, "batch_cells") == {"error": 8}
    (error,) = {e for (e,) in rows(db, "SELECT error FROM batch_cells")}
    assert "401" in error and server.base_url in error
    assert KEY not in result.output
    conn = sqlite3.connect(db)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            assert KEY not in json.dumps(conn.execute(f"SELECT * FROM {table}").fetchall(), default=str), table
    finally:
        conn.close()


# ---- prompt caching ----------------------------------------------------------------------------
NORMAL = ("--user", "maya", "--query-kind", "open", "--context", "normal")


def cache_marks(params: dict) -> list[str]:
    """Where a Messages request's cache_control blocks are: "system" or "messages[i]"."""
    found = []
    system = params.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        found.append("system")
    for i, m in enumerate(params["messages"]):
        if isinstance(m["content"], list) and any("cache_control" in b for b in m["content"]):
            found.append(f"messages[{i}]")
    return found


def cached_reply(body: dict) -> Reply:
    """The echo answer, three quarters of its prompt read from the cache and an eighth written."""
    reply = echo_reply(body)
    assert reply.usage is not None
    total = reply.usage[0]
    return dataclasses.replace(reply, cache_read=total * 3 // 4, cache_write=total // 8)


@only("anthropic-batch")
def test_a_batch_marks_the_shared_history_in_every_request_and_prices_cache_tokens(db, backend):
    backend.server.responder = cached_reply
    result = batch(db, backend, grid=NORMAL)
    assert result.exit_code == 0, result.output
    sent = backend.server.submitted()
    assert len(sent) == 8
    for params in sent.values():
        last = len(params["messages"]) - 1
        assert params["messages"][last]["role"] == "user"
        assert sum(len(content_text(m["content"])) for m in params["messages"][:last]) >= 4096
        assert cache_marks(params) == [f"messages[{last - 1}]"], "announced first: every request writes or reads"
        (block,) = params["messages"][last - 1]["content"]
        assert block["cache_control"] == EPHEMERAL

    stored = rows(
        db,
        "SELECT run_id, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd FROM responses",
    )
    assert len(stored) == 8
    for run_id, tin, tout, read, write, cost in stored:
        expected = cached_reply(sent[run_id])
        assert expected.usage is not None
        assert (tin, tout) == expected.usage, "input_tokens is the whole prompt, the cache parts included"
        assert (read, write) == (expected.cache_read, expected.cache_write)
        priced = pricing.cost_usd(
            "anthropic", "claude-haiku-4-5", tin, tout, cache_read_tokens=read, cache_write_tokens=write, batch=True
        )
        assert priced is not None and cost == pytest.approx(priced)
        assert cost < pricing.cost_usd("anthropic", "claude-haiku-4-5", tin, tout, batch=True)


@only("anthropic-batch")
def test_prompt_cache_off_in_the_settings_marks_nothing(db, backend, tmp_path):
    config = tmp_path / "config.toml"
    config.write_text('prompt_cache = "off"\n')
    result = batch(db, backend, grid=NORMAL, config=config)
    assert result.exit_code == 0, result.output
    sent = backend.server.submitted()
    assert len(sent) == 8
    assert all("cache_control" not in json.dumps(params) for params in sent.values())


STREAMED = [
    ("anthropic", ANTHROPIC, AnthropicServer, 500),
    ("openai", OPENAI, OpenAIServer, None),  # OpenAI reports reads only; it writes its cache unasked
]


@pytest.mark.parametrize(("prefix", "model", "server_class", "write"), STREAMED, ids=[s[0] for s in STREAMED])
def test_a_streamed_run_stores_the_cache_tokens_and_prices_them(db, monkeypatch, prefix, model, server_class, write):
    reply = Reply.text("Pack a flask of soup.", usage=(5000, 7), cache_read=4000, cache_write=write)
    with server_class([reply]) as server:
        monkeypatch.setenv(f"{prefix.upper()}_API_KEY", KEY)
        monkeypatch.setenv(f"{prefix.upper()}_BASE_URL", server.base_url)
        result = invoke(db, "run", "maya", "p1-open", "--model", model, "--plain")
    assert result.exit_code == 0, result.output
    stored = rows(
        db, "SELECT via, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd FROM responses"
    )
    assert [s[:5] for s in stored] == [("stream", 5000, 7, 4000, write)]
    name = model.split(":")[1]
    expected = pricing.cost_usd(prefix, name, 5000, 7, cache_read_tokens=4000, cache_write_tokens=write or 0)
    assert expected is not None and stored[0][5] == pytest.approx(expected)
