"""`prefscope batch --via openai-batch|anthropic-batch` end to end: real SDKs, loopback batch APIs,
real processes. A 50-cell grid is submitted, the submitting process is killed, a new process
resumes from the stored job id, and every answer is stored exactly once."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from core.plan import PromptStep
from core.providers import pricing
from storage.db import open_db
from storage.prompt_messages import load_prompt_steps
from tests.cli_runner import cli
from tests.servers.batch_anthropic import AnthropicBatchServer
from tests.servers.batch_jobs import content_text
from tests.servers.batch_openai import OpenAIBatchServer
from tests.tui.conftest import child_env
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[3]
GRID_50 = [
    *("--user", "maya", "--user", "priya", "--user", "tomasz"),
    *("--query-kind", "open", "--seed", "0", "--seed", "1", "--context", "simple"),
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("via") / "sample.db"
    cli(str(path), "import", str(ROOT / "sample_data"))
    return path


@pytest.fixture
def db(sample_db, tmp_path) -> str:
    copy = tmp_path / "prefscope.db"
    copy.write_bytes(sample_db.read_bytes())
    return str(copy)


def _env(db: str, **extra: str) -> dict[str, str]:
    """The subprocess's environment: no real keys or settings of this machine, an empty config."""
    config = Path(db).with_name("config.toml")
    config.touch()
    return child_env(Path(db).with_name("home"), PREFSCOPE_CONFIG=str(config), **extra)


def _batch(db: str, model: str, via: str, *extra: str) -> list[str]:
    prefscope = [sys.executable, "-m", "tui.cli", "--db", db, "batch", *GRID_50, "--model", model]
    return [*prefscope, "--via", via, "--poll-max-s", "0.05", "--yes", *extra]


def _rows(db: str, sql: str, args=()) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def _steps(db: str, run_id: str) -> list[PromptStep]:
    database = open_db(db, readonly=True)
    try:
        return load_prompt_steps(database, run_id)
    finally:
        database.close()


def _job_recorded(db: str) -> bool:
    try:
        return bool(_rows(db, "SELECT 1 FROM provider_jobs"))
    except sqlite3.OperationalError:  # the table is created by the submitting process's migration
        return False


CASES = [
    ("openai-batch", "openai:gpt-4o-mini", OpenAIBatchServer, "OPENAI"),
    ("anthropic-batch", "anthropic:claude-haiku-4-5", AnthropicBatchServer, "ANTHROPIC"),
]


@pytest.mark.parametrize(("via", "model", "server_class", "env_prefix"), CASES, ids=[c[0] for c in CASES])
def test_a_50_cell_grid_killed_after_submit_is_resumed_by_a_new_process_and_stored_once(
    db, via, model, server_class, env_prefix
):
    with server_class(polls_to_finish=2) as server:
        server.hold()  # the job stays in progress while the first process waits
        env = _env(db, **{f"{env_prefix}_API_KEY": "sk-test", f"{env_prefix}_BASE_URL": server.base_url})
        first = subprocess.Popen(
            _batch(db, model, via), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            wait_until(
                lambda: _job_recorded(db) or first.poll() is not None,
                timeout=90,
                every=0.1,
                what="the first process to record its job (or to end)",
            )
            assert first.poll() is None, first.communicate()[0]
            first.send_signal(signal.SIGKILL)  # interrupted after submitting: no cleanup at all
            first.wait(30)
        finally:
            if first.poll() is None:
                first.kill()
        assert len(server.job_ids()) == 1
        (job_id,) = server.job_ids()
        assert _rows(db, "SELECT id, requests, collected_at FROM provider_jobs") == [(job_id, 50, None)]
        assert _rows(db, "SELECT count(*) FROM runs WHERE status = 'submitted'") == [(50,)]
        assert _rows(db, "SELECT count(*) FROM responses") == [(0,)]

        server.release()
        second = subprocess.run(_batch(db, model, via), env=env, capture_output=True, text=True, timeout=180)
        assert second.returncode == 0, second.stdout + second.stderr
        assert "not collected yet (50 requests)" in second.stderr + second.stdout

        assert server.job_ids() == [job_id], "the resumed process must not submit the cells again"
        responses = _rows(
            db,
            "SELECT r.run_id, r.text, r.status, r.via, r.input_tokens, r.output_tokens, r.cost_usd, r.ttft_ms, "
            "r.duration_ms FROM responses r",
        )
        assert len(responses) == 50
        assert len({r[0] for r in responses}) == 50, "one answer per run, none twice"
        assert {r[2] for r in responses} == {"ok"}
        assert {r[3] for r in responses} == {via}
        assert all(r[7] is None and r[8] is None for r in responses), "no streaming timings for batch answers"
        provider, name = model.split(":")
        for run_id, text, _, _, tin, tout, cost, _, _ in responses:
            (step,) = _steps(db, run_id)
            question = [m for m in step.messages if m.role == "user"][-1].content
            assert text == f"answer to: {content_text(question)[:40]}", "each answer belongs to its own run"
            assert cost == pytest.approx(pricing.cost_usd(provider, name, tin, tout, batch=True))
            assert cost == pytest.approx(pricing.cost_usd(provider, name, tin, tout) / 2)
        assert _rows(db, "SELECT DISTINCT status FROM batch_cells") == [("ok",)]
        assert _rows(db, "SELECT DISTINCT status FROM runs") == [("ok",)]
        assert _rows(db, "SELECT collected_at IS NOT NULL FROM provider_jobs") == [(1,)]

        third = subprocess.run(_batch(db, model, via), env=env, capture_output=True, text=True, timeout=180)
        assert third.returncode == 0, third.stdout + third.stderr
        assert server.job_ids() == [job_id]
        assert _rows(db, "SELECT count(*) FROM responses") == [(50,)]
