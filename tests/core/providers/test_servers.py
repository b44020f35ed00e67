"""The scripted servers themselves: wire format on the raw socket level, usable outside pytest."""

from __future__ import annotations

import json

import httpx

from tests.servers.anthropic_sse import serve as serve_anthropic
from tests.servers.openai_sse import serve as serve_openai
from tests.servers.script import Reply


def _frames(body: str) -> list[str]:
    return [f for f in body.split("\n\n") if f]


def test_openai_wire_format_with_usage():
    with serve_openai(Reply.text("Hi you", usage=(3, 2))) as server:
        r = httpx.post(
            server.base_url + "/chat/completions",
            json={"model": "m", "stream": True, "stream_options": {"include_usage": True}},
            headers={"Authorization": "Bearer sk-secret"},
        )
    assert r.headers["content-type"].startswith("text/event-stream")
    frames = _frames(r.text)
    assert frames[-1] == "data: [DONE]"
    chunks = [json.loads(f[len("data: ") :]) for f in frames[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"]) == "Hi you"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] == 5
    assert server.requests[0].headers["authorization"] == "<redacted>"


def test_openai_without_include_usage_sends_no_usage_chunk():
    with serve_openai(Reply.text("Hi")) as server:
        r = httpx.post(server.base_url + "/chat/completions", json={"model": "m", "stream": True})
    assert "total_tokens" not in r.text


def test_anthropic_wire_format_and_http_errors():
    with serve_anthropic([Reply.http_error(529, "Overloaded", retry_after="0"), Reply.text("ok")]) as server:
        first = httpx.post(server.root_url + "/v1/messages", json={"model": "c"}, headers={"x-api-key": "k"})
        second = httpx.post(server.root_url + "/v1/messages", json={"model": "c"})
        wrong = httpx.post(server.root_url + "/v1/v1/messages", json={})
    assert first.status_code == 529 and first.headers["retry-after"] == "0"
    assert first.json()["error"]["type"] == "overloaded_error"
    events = [f.split("\n")[0] for f in _frames(second.text)]
    assert events == [
        "event: message_start",
        "event: content_block_start",
        "event: ping",
        "event: content_block_delta",
        "event: content_block_stop",
        "event: message_delta",
        "event: message_stop",
    ]
    assert wrong.status_code == 404
    assert server.requests[0].auth == "x-api-key"
    assert server.log.outcomes == ["http:529", "complete", "http:404"]
