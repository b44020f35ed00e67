"""Secrets never stored or printed, round two (issue 34 item 2): the README's own router example.

A ``[routers.x]`` deployment reads its key from ``OPENAI_KEY_A`` – a name no pattern recognises as
a key variable – and talks, through litellm and the openai SDK, to a loopback server that echoes
the key in its 401 body as it is, base64-encoded and URL-encoded; another server streams the key
inside an answer, split across frames. The key and its copies appear nowhere: not in the database
(nor its WAL), not in the CLI's output, not in an export. The masked answer says so on its row.
"""

from __future__ import annotations

import base64
import sqlite3
import urllib.parse

import pytest

from core.providers.redact import ANSWER_MASK, StreamRedactor, redact
from tests.conftest import REPO
from tests.reliability.test_secrets_redacted import _everything_stored, _invoke
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

#: No recognisable shape, and characters that URL-encoding changes: only the config says it is a key.
KEY = "rtrKEY/pl+nted:0123456789=xyz"
B64 = base64.b64encode(KEY.encode()).decode()
COPIES = {
    "the raw key": KEY,
    "its base64": B64,
    "its base64 without padding": B64.rstrip("="),
    "its URL-safe base64": base64.urlsafe_b64encode(KEY.encode()).decode().rstrip("="),
    "its URL-encoding": urllib.parse.quote(KEY, safe=""),
    "its URL-encoding (form)": urllib.parse.quote_plus(KEY),
}


def _assert_clean(blob: str | bytes, where: str) -> None:
    for what, copy in COPIES.items():
        needle = copy.encode() if isinstance(blob, bytes) else copy
        assert needle not in blob, f"{what} ({copy!r}) leaked into {where}"


def _router_config(tmp_path, server: OpenAIServer) -> str:
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        "[routers.x]\n"
        "[[routers.x.deployments]]\n"
        'model = "openai/test-model"\n'
        f'api_base = "{server.base_url}"\n'
        'api_key_env = "OPENAI_KEY_A"\n',
        encoding="utf-8",
    )
    return str(cfg)


def _run_router(tmp_path, db: str, server: OpenAIServer) -> str:
    return _invoke(db, "--config", _router_config(tmp_path, server), "run", "maya", "p1-open", "--model", "router:x")


def _check_everywhere(db: str, out: str) -> None:
    _assert_clean(out, "the CLI output")
    _assert_clean(_everything_stored(db), "the database file or its WAL")
    for fmt in ("csv", "jsonl"):
        _assert_clean(_invoke(db, "export", "--format", fmt, "--layout", "long"), f"the {fmt} export")
        _assert_clean(_invoke(db, "export", "--format", fmt), f"the wide {fmt} export")
    _assert_clean(_invoke(db, "runs"), "`prefscope runs`")


@pytest.fixture
def key_in_env(monkeypatch):
    monkeypatch.setenv("OPENAI_KEY_A", KEY)


def test_a_router_deployments_key_echoed_in_a_401_is_stored_and_printed_nowhere(tmp_path, key_in_env):
    db = str(tmp_path / "r.db")
    echo = f"invalid key {KEY} (base64 {B64}, urlencoded {urllib.parse.quote(KEY, safe='')})"
    with OpenAIServer([Reply.http_error(401, echo, echo_credentials=True)]) as server:
        out = _run_router(tmp_path, db, server)
        assert server.requests and server.requests[0].auth == "bearer", "the server was sent the key"
        assert "http:401" in server.log.outcomes
    error = sqlite3.connect(db).execute("SELECT error FROM responses").fetchone()[0]
    assert "401" in error and "[redacted]" in error, f"the echo was stored, redacted: {error!r}"
    _check_everywhere(db, out)


def test_a_key_streamed_inside_an_answer_is_masked_before_it_is_stored(tmp_path, key_in_env):
    db = str(tmp_path / "s.db")
    answer = f"Sure. Your key is {KEY} – or, encoded, {B64} – keep it safe."
    with OpenAIServer([Reply.text(answer, pieces=9)]) as server:  # the key is split across frames
        out = _run_router(tmp_path, db, server)
        assert server.log.outcomes == ["complete"], server.log.outcomes
    con = sqlite3.connect(db)
    text, status, note = con.execute("SELECT text, status, error FROM responses").fetchone()
    record = con.execute("SELECT record FROM response_cache").fetchone()[0]
    con.close()
    assert status == "ok"
    assert text.startswith("Sure. Your key is ") and text.endswith("keep it safe."), text
    assert ANSWER_MASK in text and note and ANSWER_MASK in note, (text, note)
    _assert_clean(record, "the response cache")
    _check_everywhere(db, out)


def test_encoded_copies_are_caught_at_any_position(monkeypatch):
    monkeypatch.setenv("SOME_CONFIGURED_NAME", KEY)
    from core.providers.redact import remember_key_env

    remember_key_env("SOME_CONFIGURED_NAME")
    basic = base64.b64encode(f"alice:{KEY}".encode()).decode()  # the key at another base64 alignment
    for prefix in ("", "a", "ab"):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            blob = encode(f"{prefix}{KEY}tail".encode()).decode()
            assert "[redacted]" in redact(f"x {blob} y"), (prefix, blob)
    assert "[redacted]" in redact(f"proxy said {basic}")
    for copy in COPIES.values():
        assert copy not in redact(f"echo: {copy}."), copy
    assert redact("an ordinary answer about key lime pie") == "an ordinary answer about key lime pie"


def test_the_stream_redactor_holds_back_only_what_could_be_a_key(monkeypatch):
    monkeypatch.setenv("SOME_CONFIGURED_NAME", KEY)
    from core.providers.redact import remember_key_env

    remember_key_env("SOME_CONFIGURED_NAME")
    masker = StreamRedactor()
    text = f"one {KEY} two {KEY[:5]}"
    shown = "".join(masker.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + masker.flush()
    assert shown == f"one {ANSWER_MASK} two {KEY[:5]}"
    assert masker.masked == 1
    assert StreamRedactor().feed("plain words") == "plain words"


def test_export_masks_a_configured_keys_value_already_in_stored_text(tmp_path, key_in_env):
    """Text stored before masking existed, or brought in by `import-results`, may hold a key: the
    export's own second line of defence knows the same key variables the providers do (here only
    the config says `OPENAI_KEY_A` is one) and their encoded copies."""
    import json

    db = str(tmp_path / "i.db")
    answers = tmp_path / "answers.jsonl"
    leaked = f"My key is {KEY}, in base64 {B64}."
    answers.write_text(json.dumps({"user": "maya", "query": "p1-open", "model": "m1", "answer": leaked}) + "\n")
    _invoke(db, "import", str(REPO / "sample_data" / "users" / "maya.json"))
    assert "1 run added" in _invoke(db, "import-results", str(answers))
    with OpenAIServer([]) as server:
        config = _router_config(tmp_path, server)
    for fmt in ("csv", "jsonl"):
        out = _invoke(db, "--config", config, "export", "--format", fmt)
        assert "My key is [redacted]" in out, out
        _assert_clean(out, f"the {fmt} export")
