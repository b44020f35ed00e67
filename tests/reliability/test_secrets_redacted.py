"""Secrets never stored or printed: a careless server echoes the request's credentials and URL in
its 401 / 500 error bodies, through the real openai and anthropic SDKs, the engine and the
recorder into a real SQLite file. The planted keys appear nowhere: not in the database (nor its
WAL), not in the CLI's output, not in an export."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.providers.redact import redact
from tests.servers.anthropic_sse import AnthropicServer
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply
from tui.cli import main

OPENAI_KEY = "sk-proj-PLANTEDopenaiKEY0123456789"
ANTHROPIC_KEY = "sk-ant-api03-PLANTEDanthropicKEY0123456789"
#: A key with no recognisable shape: only the environment tells us it is one.
ENDPOINT_KEY = "plainlookingvalue42xyz"
URL_PASSWORD = "PLANTEDurlPASSWORD77"
SECRETS = (OPENAI_KEY, ANTHROPIC_KEY, ENDPOINT_KEY, URL_PASSWORD)


def _invoke(db: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["--db", db, *args], catch_exceptions=False)
    return result.output


def _run(db: str, model: str, base_url: str) -> str:
    return _invoke(db, "run", "maya", "p1-open", "--model", model, "--base-url", f"{model}={base_url}", "--plain")


def _everything_stored(db: str) -> bytes:
    files = [Path(db), Path(db + "-wal"), Path(db + "-journal")]
    return b"".join(p.read_bytes() for p in files if p.exists())


def _assert_clean(blob: str | bytes, where: str) -> None:
    for secret in SECRETS:
        needle = secret.encode() if isinstance(blob, bytes) else secret
        assert needle not in blob, f"{secret!r} leaked into {where}"


@pytest.mark.parametrize("status", [401, 500])
@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_an_echoed_key_is_stored_and_printed_nowhere(tmp_path, monkeypatch, protocol, status):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("MY_ENDPOINT_TOKEN", ENDPOINT_KEY)
    db = str(tmp_path / "s.db")
    server_cls = OpenAIServer if protocol == "openai" else AnthropicServer
    reply = Reply.http_error(status, f"bad key {ENDPOINT_KEY}", echo_credentials=True)
    with server_cls([reply]) as server:
        model = f"{protocol}:test-model"
        out = _run(db, model, server.base_url)
        sent = list(server.requests)
    assert sent and sent[0].auth in ("bearer", "x-api-key"), "the server was sent the key (so it could echo it)"
    assert f"http:{status}" in server.log.outcomes
    _assert_clean(out, "the CLI output")

    error = sqlite3.connect(db).execute("SELECT error FROM responses").fetchone()[0]
    assert str(status) in error and "[redacted]" in error, "the echo was stored, redacted"
    _assert_clean(_everything_stored(db), "the database file")

    for fmt in ("csv", "jsonl"):
        exported = _invoke(db, "export", "--format", fmt, "--layout", "long")
        _assert_clean(exported, f"the {fmt} export")
    _assert_clean(_invoke(db, "runs"), "`prefscope runs`")


def test_a_base_url_is_stored_without_its_userinfo_or_key_parameter(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    db = str(tmp_path / "u.db")
    with OpenAIServer([Reply.http_error(401, "no", echo_credentials=True)]) as server:
        # httpx sends URL userinfo as Basic auth, which the server echoes (base64) too.
        url = server.base_url.replace("http://", f"http://alice:{URL_PASSWORD}@")
        out = _run(db, "openai:test-model", url)
        assert server.log.outcomes == ["http:401"]
    basic = base64.b64encode(f"alice:{URL_PASSWORD}".encode()).decode()
    con = sqlite3.connect(db)
    base_url, error = con.execute("SELECT base_url, error FROM responses").fetchone()
    spec = con.execute("SELECT spec FROM runs").fetchone()[0]
    con.close()
    assert base_url == server.base_url, "stored without userinfo"
    assert "alice" not in spec and "127.0.0.1" in spec
    assert "401" in error
    for where, blob in (("output", out), ("database", _everything_stored(db).decode("latin-1"))):
        assert URL_PASSWORD not in blob and basic not in blob, where


def test_a_configured_endpoint_key_of_any_name_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCAL_LLM", ENDPOINT_KEY)
    db = str(tmp_path / "e.db")
    with OpenAIServer([Reply.http_error(401, f"unknown key {ENDPOINT_KEY}", echo_credentials=True)]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[endpoints.local]\nbase_url = "{server.base_url}"\napi_key_env = "LOCAL_LLM"\n')
        out = _invoke(db, "--config", str(cfg), "run", "maya", "p1-open", "--model", "local:m", "--plain")
        assert server.requests[0].auth == "bearer"
    error = sqlite3.connect(db).execute("SELECT error FROM responses").fetchone()[0]
    assert "401" in error and "[redacted]" in error
    assert ENDPOINT_KEY not in out and ENDPOINT_KEY.encode() not in _everything_stored(db)


def test_redact_removes_every_credential_shape(monkeypatch):
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "zq9-opaque-credential")
    text = (
        "Authorization: Bearer abc.def-ghi | {'x-api-key': 'k-123456789'} | api-key=secretvalue1 | "
        "proxy-authorization: Basic dXNlcjpwYXNz | sk-live0123456789abcdef | "
        "https://bob:hunter2@example.test/v1?api_key=qqq111&model=x&token=ttt222 | zq9-opaque-credential"
    )
    clean = redact(text)
    for secret in (
        "abc.def-ghi",
        "k-123456789",
        "secretvalue1",
        "dXNlcjpwYXNz",
        "sk-live0123456789abcdef",
        "bob",
        "hunter2",
        "qqq111",
        "ttt222",
        "zq9-opaque-credential",
    ):
        assert secret not in clean, (secret, clean)
    assert "https://example.test/v1?api_key=[redacted]&model=x" in clean
    assert redact("an ordinary answer about key lime pie") == "an ordinary answer about key lime pie"
    assert redact(None) is None
