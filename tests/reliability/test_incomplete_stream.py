"""A stream that ends cleanly but without its finish signal (OpenAI: no finish_reason and no
[DONE]; Anthropic: no message_stop) is stored as ``incomplete`` with its text, never as ``ok``:
through the real SDKs, the engine and the recorder into a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest
from click.testing import CliRunner

from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

TEXT = "The first half of an answer"


def _run(db: str, protocol: str, server) -> str:
    model = f"{protocol}:test-model"
    args = ["--db", db, "run", "maya", "p1-open", "--model", model, "--base-url", f"{model}={server.base_url}"]
    return CliRunner().invoke(main, [*args, "--plain"], catch_exceptions=False).output


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_stream_without_its_finish_signal_is_stored_incomplete(tmp_path, monkeypatch, protocol):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    server_cls = OpenAIServer if protocol == "openai" else AnthropicServer
    db = str(tmp_path / "i.db")
    words = Reply.text(TEXT).chunks
    with server_cls([Reply(chunks=words, fault="eof", fault_after=len(words))]) as server:
        out = _run(db, protocol, server)
        # logged after the server's last write, which the client may have read before that
        assert server.wait_until(lambda log: log.outcomes, 30), "the server never finished the stream"
        assert server.log.outcomes == ["fault:eof"], "the server ended the body cleanly, without finish frames"
    status, text, error = sqlite3.connect(db).execute("SELECT status, text, error FROM responses").fetchone()
    assert (status, text) == ("incomplete", TEXT)
    assert "finish signal" in error
    assert "incomplete" in out


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_a_finished_stream_is_still_ok(tmp_path, monkeypatch, protocol):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    server_cls = OpenAIServer if protocol == "openai" else AnthropicServer
    db = str(tmp_path / "o.db")
    with server_cls([Reply.text(TEXT)]) as server:
        _run(db, protocol, server)
    assert sqlite3.connect(db).execute("SELECT status, text FROM responses").fetchone() == ("ok", TEXT)
