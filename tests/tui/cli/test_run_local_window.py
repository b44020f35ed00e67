"""`prefscope run` / `prompt` with a local OpenAI-compatible server (an ``[endpoints.local]``) check
the prompt against the window the server reports: vLLM's max_model_len, llama.cpp's n_ctx. A
server that reports none leaves the window unknown, and the plan says so; nothing is guessed."""

from __future__ import annotations

import re
import socket

import pytest
from click.testing import CliRunner

from core.providers.server_window import forget
from storage.db import open_db
from storage.runs import list_runs, load_run
from tests.servers.local_models import LocalModelServer
from tests.servers.script import Reply
from tui.cli import main

#: maya's p3-open in the `simple` context: her own sessions, ~12K tokens.
TWELVE_K = ("maya", "p3-open", "--context", "simple")


@pytest.fixture(autouse=True)
def _fresh_answers(monkeypatch):
    """Servers' answers are kept per process and an OS port may be reused: start and end with none."""
    monkeypatch.setenv("PREFSCOPE_DEMO_TOKENS_PER_S", "0")
    forget()
    yield
    forget()


def invoke(tmp_path, base_url: str, *args: str):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[endpoints.local]\nbase_url = "{base_url}"\n')
    db = str(tmp_path / "w.db")
    argv = ["--db", db, "--config", str(cfg), *args]
    return CliRunner().invoke(main, argv, catch_exceptions=False, env={"COLUMNS": "400"})


def completions(server) -> int:
    return sum(r.path == "/v1/chat/completions" for r in server.requests)


def stored_notes(tmp_path) -> list[str]:
    conn = open_db(str(tmp_path / "w.db"))
    try:
        return load_run(conn, list_runs(conn)[0].id).plan.notes
    finally:
        conn.close()


def test_a_12k_prompt_is_refused_by_a_server_reporting_8192_unless_forced(tmp_path):
    with LocalModelServer([Reply.text("Noted.")], max_model_len=8192) as server:
        run = ("run", *TWELVE_K, "--model", "local:test-model", "--plain")
        refused = invoke(tmp_path, server.base_url, *run)
        assert refused.exit_code == 1 and completions(server) == 0, "refused before anything is sent"
        forced = invoke(tmp_path, server.base_url, *run, "--force")
        assert forced.exit_code == 0, forced.output
        assert completions(server) == 1, "forced: the server got the call"
        window_asks = [r.path for r in server.window_asks]
    tokens = int(re.search(r"the prompt is ([\d,]+) tokens", refused.output).group(1).replace(",", ""))
    assert 11_000 < tokens < 13_000
    assert f"window is 8,192 tokens ({tokens - 8192:,} over;" in refused.output
    assert f"local:test-model at {server.base_url}, max_model_len in /v1/models" in refused.output
    assert "--force" in refused.output
    assert window_asks == ["/v1/models"], "asked once in the process: the forced run reused the answer"
    notes = stored_notes(tmp_path)
    assert (
        f"local:test-model: window 8,192 tokens, reported by {server.base_url} (max_model_len in /v1/models)" in notes
    )
    assert f"local:test-model: forced: {tokens:,} tokens sent to a model with a 8,192-token window" in " ".join(notes)
    assert "window 8,192 tokens, reported by" in forced.output  # the note is printed with the run


def test_a_prompt_that_fits_runs_and_the_window_shows_in_prompt(tmp_path):
    with LocalModelServer([Reply.text("Noted.")], max_model_len=32768) as server:
        shown = invoke(tmp_path, server.base_url, "prompt", *TWELVE_K, "--model", "local:test-model")
        ran = invoke(tmp_path, server.base_url, "run", *TWELVE_K, "--model", "local:test-model", "--plain")
        assert completions(server) == 1
    assert shown.exit_code == 0 and ran.exit_code == 0, shown.output + ran.output
    assert f"note: local:test-model: window 32,768 tokens, reported by {server.base_url}" in shown.output
    assert not any("forced" in n for n in stored_notes(tmp_path))


def test_llama_cpp_n_ctx_refuses_in_prompt_too(tmp_path):
    with LocalModelServer(models=["model.gguf"], n_ctx=8192) as server:
        refused = invoke(tmp_path, server.base_url, "prompt", *TWELVE_K, "--model", "local:test-model")
        forced = invoke(tmp_path, server.base_url, "prompt", *TWELVE_K, "--model", "local:test-model", "--force")
    assert refused.exit_code == 1 and "window is 8,192 tokens" in refused.output
    assert f"{server.base_url}, n_ctx in /props" in refused.output
    assert forced.exit_code == 0 and "window 8,192 tokens, reported by" in forced.output


def test_a_server_without_a_window_runs_with_a_note_saying_it_is_unknown(tmp_path):
    with LocalModelServer([Reply.text("Noted.")], models=["test-model"]) as server:  # Ollama-like
        ran = invoke(tmp_path, server.base_url, "run", *TWELVE_K, "--model", "local:test-model", "--plain")
        assert completions(server) == 1
    assert ran.exit_code == 0, ran.output
    expected = (
        f"local:test-model: window unknown: {server.base_url} did not report one "
        "(/v1/models has no max_model_len, /props absent); the prompt was not checked against it"
    )
    assert expected in stored_notes(tmp_path)
    assert "window unknown" in ran.output


def test_a_down_server_is_named_in_the_note_and_prompt_still_prints(tmp_path):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    shown = invoke(tmp_path, f"http://127.0.0.1:{port}/v1", "prompt", *TWELVE_K, "--model", "local:test-model")
    assert shown.exit_code == 0, shown.output
    assert f"window unknown: http://127.0.0.1:{port}/v1 did not report one (could not be reached" in shown.output


def test_a_window_given_on_the_command_line_is_not_asked(tmp_path):
    with LocalModelServer(max_model_len=8192) as server:
        shown = invoke(
            tmp_path, server.base_url, "prompt", *TWELVE_K, "--model", "local:test-model", "--window", "64000"
        )
        assert server.window_asks == []
    assert shown.exit_code == 0 and "reported by" not in shown.output
