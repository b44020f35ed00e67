"""The loopback batch servers, driven by the real openai and anthropic SDKs as their docs use them.

Each job here moves only when polled (``polls_to_finish`` GETs in progress, ended at the next), so
the tests need no sleeps; they check both what the SDK parses and what the server was sent.
"""

from __future__ import annotations

import json

import anthropic
import openai
import pytest
from openai.types.chat import ChatCompletion

from tests.servers.batch_anthropic import AnthropicBatchServer
from tests.servers.batch_jobs import echo_reply
from tests.servers.batch_openai import OpenAIBatchServer
from tests.servers.script import Reply

EPHEMERAL = {"type": "ephemeral"}


@pytest.fixture
def openai_batch_server():
    with OpenAIBatchServer() as server:
        yield server


@pytest.fixture
def anthropic_batch_server():
    with AnthropicBatchServer() as server:
        yield server


# ---- OpenAI --------------------------------------------------------------------------------------
def _openai(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)


def _line(custom_id: str, question: str, model: str = "gpt-test", url: str = "/v1/chat/completions") -> dict:
    body = {
        "model": model,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}],
    }
    return {"custom_id": custom_id, "method": "POST", "url": url, "body": body}


def _jsonl(lines) -> bytes:
    return "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines).encode()


def _submit(client: openai.OpenAI, lines, **kw):
    upload = client.files.create(file=("requests.jsonl", _jsonl(lines)), purpose="batch")
    return client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h", **kw
    )


def _read(client: openai.OpenAI, file_id: str | None) -> dict[str, dict]:
    """custom_id → the line of an output or error file."""
    if file_id is None:
        return {}
    lines = [json.loads(line) for line in client.files.content(file_id).text.splitlines()]
    return {line["custom_id"]: line for line in lines}


def test_openai_batch_runs_to_completion(openai_batch_server):
    client = _openai(openai_batch_server)
    lines = [_line(f"q{i}", f"What is item number {i} in the list?") for i in range(4)]
    batch = _submit(client, lines, metadata={"run": "r1"})
    assert batch.status == "validating" and batch.metadata == {"run": "r1"}
    assert batch.output_file_id is None

    seen = [client.batches.retrieve(batch.id) for _ in range(3)]
    assert [b.status for b in seen] == ["in_progress", "finalizing", "completed"]
    assert [b.request_counts.completed for b in seen] == [2, 4, 4]
    done = seen[-1]
    assert done.request_counts.total == 4 and done.request_counts.failed == 0
    assert done.error_file_id is None and done.completed_at >= done.in_progress_at
    assert done.model == "gpt-test"

    output = _read(client, done.output_file_id)
    assert list(output) == ["q0", "q1", "q2", "q3"]
    for i, line in enumerate(output.values()):
        assert line["error"] is None and line["response"]["status_code"] == 200
        completion = ChatCompletion.model_validate(line["response"]["body"])
        assert completion.choices[0].message.content == f"answer to: What is item number {i} in the list?"
        assert completion.usage.prompt_tokens == echo_reply(lines[i]["body"]).usage[0]
        assert completion.usage.prompt_tokens_details is None  # no cache counts unless the responder sets them
    assert openai_batch_server.submitted(batch.id)["q2"] == lines[2]["body"]
    assert ("POST", "/v1/files") in openai_batch_server.batch_log
    assert openai_batch_server.batch_log.count(("GET", f"/v1/batches/{batch.id}")) == 3


def test_openai_batch_partial_errors_and_cached_tokens():
    def responder(body: dict) -> Reply:
        if "refuse" in body["messages"][-1]["content"]:
            return Reply.http_error(400, "This prompt is refused.", error_type="invalid_request_error")
        return echo_reply(body, usage=(1200, 7), cache_read=1024)

    with OpenAIBatchServer(responder=responder, polls_to_finish=0) as server:
        client = _openai(server)
        no_messages = {
            "custom_id": "empty",
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": {"model": "gpt-test"},
        }
        lines = [_line("ok", "fine"), _line("bad", "please refuse"), _line("ok2", "fine too"), no_messages]
        batch = _submit(client, lines)
        done = client.batches.retrieve(batch.id)
        assert done.status == "completed"
        assert (done.request_counts.completed, done.request_counts.failed) == (2, 2)
        assert done.usage.input_tokens_details.cached_tokens == 2048
        output, errors = _read(client, done.output_file_id), _read(client, done.error_file_id)

    assert set(output) == {"ok", "ok2"} and set(errors) == {"bad", "empty"}
    usage = ChatCompletion.model_validate(output["ok"]["response"]["body"]).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.prompt_tokens_details.cached_tokens) == (1200, 7, 1024)
    failed = errors["bad"]["response"]
    assert failed["status_code"] == 400
    assert failed["body"]["error"]["message"] == "This prompt is refused."
    assert errors["bad"]["error"] is None
    assert errors["empty"]["response"]["body"]["error"]["message"] == "Missing required parameter: 'messages'."


def test_openai_cancel_keeps_finished_requests(openai_batch_server):
    client = _openai(openai_batch_server)
    batch = _submit(client, [_line(f"q{i}", f"question {i}") for i in range(4)])
    assert client.batches.retrieve(batch.id).request_counts.completed == 2  # half answered at the first poll

    cancelling = client.batches.cancel(batch.id)
    assert cancelling.status == "cancelling" and cancelling.cancelling_at is not None
    cancelled = client.batches.retrieve(batch.id)
    assert cancelled.status == "cancelled" and cancelled.cancelled_at is not None
    assert (cancelled.request_counts.completed, cancelled.request_counts.failed) == (2, 2)
    assert set(_read(client, cancelled.output_file_id)) == {"q0", "q1"}
    errors = _read(client, cancelled.error_file_id)
    assert {cid: line["error"]["code"] for cid, line in errors.items()} == {
        "q2": "batch_cancelled",
        "q3": "batch_cancelled",
    }
    with pytest.raises(openai.BadRequestError):
        client.batches.cancel(batch.id)


def test_openai_hold_then_expire_keeps_completed_requests(openai_batch_server):
    client = _openai(openai_batch_server)
    batch = _submit(client, [_line("a", "first"), _line("b", "second")])
    assert client.batches.retrieve(batch.id).request_counts.completed == 1
    openai_batch_server.hold()
    for _ in range(5):
        held = client.batches.retrieve(batch.id)
        assert held.status == "in_progress" and held.request_counts.completed == 1

    openai_batch_server.expire(batch.id)
    expired = client.batches.retrieve(batch.id)
    assert expired.status == "expired" and expired.expired_at is not None
    assert set(_read(client, expired.output_file_id)) == {"a"}
    late = _read(client, expired.error_file_id)["b"]
    assert late["response"] is None and late["error"]["code"] == "batch_expired"
    with pytest.raises(ValueError):
        openai_batch_server.expire(batch.id)


def test_openai_release_lets_a_held_job_finish(openai_batch_server):
    client = _openai(openai_batch_server)
    openai_batch_server.hold()
    batch = _submit(client, [_line("a", "first")])
    assert [client.batches.retrieve(batch.id).status for _ in range(4)] == ["in_progress"] * 4
    openai_batch_server.release()
    statuses = [client.batches.retrieve(batch.id).status for _ in range(4)]
    assert statuses == ["in_progress", "finalizing", "completed", "completed"]


def test_openai_invalid_input_fails_the_batch(openai_batch_server):
    client = _openai(openai_batch_server)
    lines = [
        _line("a", "fine"),
        "{not json",
        _line("a", "same id again"),
        _line("c", "wrong url", url="/v1/embeddings"),
        _line("d", "other model", model="gpt-other"),
        {"custom_id": "e", "url": "/v1/chat/completions", "body": {}},
    ]
    batch = _submit(client, lines)
    assert batch.status == "validating"
    failed = client.batches.retrieve(batch.id)
    assert failed.status == "failed" and failed.failed_at is not None
    assert [(e.code, e.line) for e in failed.errors.data] == [
        ("invalid_json_line", 2),
        ("duplicate_custom_id", 3),
        ("url_mismatch", 4),
        ("model_mismatch", 5),
        ("missing_required_parameter", 6),
    ]
    assert failed.output_file_id is None and failed.error_file_id is None
    assert failed.request_counts.total == 0

    empty = _submit(client, [])
    assert [e.code for e in client.batches.retrieve(empty.id).errors.data] == ["empty_file"]


def test_openai_unknown_ids_are_404_with_the_api_error_body(openai_batch_server):
    client = _openai(openai_batch_server)
    with pytest.raises(openai.NotFoundError) as missing:
        client.batches.retrieve("batch_nope")
    assert missing.value.body["message"] == "No batch found with id 'batch_nope'."
    assert missing.value.body["type"] == "invalid_request_error"
    with pytest.raises(openai.NotFoundError):
        client.files.content("file-nope")
    with pytest.raises(openai.NotFoundError):
        client.batches.create(input_file_id="file-nope", endpoint="/v1/chat/completions", completion_window="24h")


async def test_openai_second_client_reads_a_job_made_by_the_first(openai_batch_server):
    batch = _submit(_openai(openai_batch_server), [_line("x", "shared question")])
    other = openai.AsyncOpenAI(base_url=openai_batch_server.base_url, api_key="test", max_retries=0)
    statuses = [(await other.batches.retrieve(batch.id)).status for _ in range(3)]
    assert statuses == ["in_progress", "finalizing", "completed"]
    finished = await other.batches.retrieve(batch.id)
    content = await other.files.content(finished.output_file_id)
    line = json.loads(content.text)
    assert line["custom_id"] == "x"
    assert line["response"]["body"]["choices"][0]["message"]["content"] == "answer to: shared question"
    await other.close()


def test_openai_stream_on_the_batch_server_reports_cached_tokens(openai_batch_server):
    openai_batch_server.script(Reply.text("Hi there", usage=(2000, 3), cache_read=1536))
    stream = _openai(openai_batch_server).chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "hello"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hi there"
    usage = chunks[-1].usage
    assert (usage.prompt_tokens, usage.prompt_tokens_details.cached_tokens) == (2000, 1536)


def test_reply_refuses_more_cached_than_prompt_tokens():
    with pytest.raises(ValueError):
        Reply(usage=(10, 1), cache_read=8, cache_write=4)


# ---- Anthropic -----------------------------------------------------------------------------------
def _anthropic(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.base_url, api_key="test", max_retries=0)


def _request(custom_id: str, question: str, **params) -> dict:
    """A Messages request with a cached system prefix, as a prompt-caching client sends it."""
    return {
        "custom_id": custom_id,
        "params": {
            "model": "claude-test",
            "max_tokens": 64,
            "system": [{"type": "text", "text": "Long shared history.", "cache_control": EPHEMERAL}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": question}]}],
            **params,
        },
    }


def _results(client: anthropic.Anthropic, batch_id: str) -> dict:
    return {row.custom_id: row.result for row in client.messages.batches.results(batch_id)}


def test_anthropic_batch_runs_to_completion(anthropic_batch_server):
    client = _anthropic(anthropic_batch_server)
    requests = [_request(f"q{i}", f"Which colour is number {i}?") for i in range(3)]
    batch = client.messages.batches.create(requests=requests)
    assert batch.processing_status == "in_progress" and batch.request_counts.processing == 3

    seen = [client.messages.batches.retrieve(batch.id) for _ in range(3)]
    assert [b.processing_status for b in seen] == ["in_progress", "in_progress", "ended"]
    assert [b.request_counts.processing for b in seen] == [3, 3, 0]
    ended = seen[-1]
    assert ended.request_counts.succeeded == 3 and ended.ended_at is not None
    assert ended.results_url == f"{anthropic_batch_server.root_url}/v1/messages/batches/{batch.id}/results"

    results = _results(client, batch.id)
    assert list(results) == ["q0", "q1", "q2"]
    for i, result in enumerate(results.values()):
        assert result.type == "succeeded"
        assert result.message.content[0].text == f"answer to: Which colour is number {i}?"
        assert result.message.usage.input_tokens == echo_reply(requests[i]["params"]).usage[0]
    sent = anthropic_batch_server.submitted(batch.id)
    assert sent["q1"]["system"][0]["cache_control"] == EPHEMERAL
    assert ("GET", f"/v1/messages/batches/{batch.id}/results") in anthropic_batch_server.batch_log


def test_anthropic_batch_partial_errors_and_cache_usage():
    def responder(params: dict) -> Reply:
        if params["messages"][-1]["content"][0]["text"] == "overload me":
            return Reply.http_error(529, "Overloaded")
        return echo_reply(params, usage=(1500, 9), cache_read=1024, cache_write=400)

    with AnthropicBatchServer(responder=responder, polls_to_finish=1) as server:
        client = _anthropic(server)
        requests = [_request("ok", "fine"), _request("busy", "overload me"), _request("bad", "no limit")]
        del requests[2]["params"]["max_tokens"]
        batch = client.messages.batches.create(requests=requests)
        client.messages.batches.retrieve(batch.id)
        ended = client.messages.batches.retrieve(batch.id)
        assert ended.processing_status == "ended"
        assert (ended.request_counts.succeeded, ended.request_counts.errored) == (1, 2)
        results = _results(client, batch.id)

    usage = results["ok"].message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (76, 1024, 400)
    assert results["busy"].type == "errored" and results["busy"].error.error.type == "overloaded_error"
    assert results["bad"].error.error.type == "invalid_request_error"
    assert results["bad"].error.error.message == "max_tokens: Field required"


def test_anthropic_cancel_keeps_finished_requests(anthropic_batch_server):
    client = _anthropic(anthropic_batch_server)
    batch = client.messages.batches.create(requests=[_request(f"q{i}", f"question {i}") for i in range(4)])
    client.messages.batches.retrieve(batch.id)  # answers the first half
    canceling = client.messages.batches.cancel(batch.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended"
    assert (ended.request_counts.succeeded, ended.request_counts.canceled) == (2, 2)
    assert {cid: r.type for cid, r in _results(client, batch.id).items()} == {
        "q0": "succeeded",
        "q1": "succeeded",
        "q2": "canceled",
        "q3": "canceled",
    }
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.cancel(batch.id)


def test_anthropic_expire_and_results_before_the_end(anthropic_batch_server):
    client = _anthropic(anthropic_batch_server)
    batch = client.messages.batches.create(requests=[_request("a", "first"), _request("b", "second")])
    client.messages.batches.retrieve(batch.id)
    anthropic_batch_server.hold()  # results() retrieves the batch first: that GET would move it on
    with pytest.raises(anthropic.AnthropicError, match="results_url"):
        client.messages.batches.results(batch.id)  # the SDK refuses while the batch is in progress

    anthropic_batch_server.expire(batch.id)
    ended = client.messages.batches.retrieve(batch.id)
    assert ended.processing_status == "ended"
    assert (ended.request_counts.succeeded, ended.request_counts.expired) == (1, 1)
    assert {cid: r.type for cid, r in _results(client, batch.id).items()} == {"a": "succeeded", "b": "expired"}


def test_anthropic_refuses_bad_requests_and_unknown_ids(anthropic_batch_server):
    client = _anthropic(anthropic_batch_server)
    with pytest.raises(anthropic.BadRequestError, match="Duplicate custom_id"):
        client.messages.batches.create(requests=[_request("same", "a"), _request("same", "b")])
    with pytest.raises(anthropic.BadRequestError):
        client.messages.batches.create(requests=[])
    with pytest.raises(anthropic.NotFoundError) as missing:
        client.messages.batches.retrieve("msgbatch_nope")
    assert missing.value.body["error"]["type"] == "not_found_error"
    assert anthropic_batch_server.job_ids() == []


async def test_anthropic_second_client_reads_a_job_made_by_the_first(anthropic_batch_server):
    anthropic_batch_server.polls_to_finish = 0
    batch = _anthropic(anthropic_batch_server).messages.batches.create(requests=[_request("x", "shared")])
    other = anthropic.AsyncAnthropic(base_url=anthropic_batch_server.base_url, api_key="test", max_retries=0)
    assert (await other.messages.batches.retrieve(batch.id)).processing_status == "ended"
    rows = [row async for row in await other.messages.batches.results(batch.id)]
    assert [(row.custom_id, row.result.message.content[0].text) for row in rows] == [("x", "answer to: shared")]
    await other.close()


def test_anthropic_stream_with_cache_blocks_reports_cache_usage(anthropic_batch_server):
    anthropic_batch_server.script(Reply.text("Hi", usage=(3000, 2), cache_read=2048, cache_write=512))
    with _anthropic(anthropic_batch_server).messages.stream(
        model="claude-test",
        max_tokens=32,
        system=[{"type": "text", "text": "History.", "cache_control": EPHEMERAL}],
        messages=[{"role": "user", "content": [{"type": "text", "text": "Q", "cache_control": EPHEMERAL}]}],
    ) as stream:
        events = list(stream)
        final = stream.get_final_message()
    start = next(e for e in events if e.type == "message_start")
    usage = start.message.usage
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (440, 2048, 512)
    assert final.content[0].text == "Hi"
    sent = anthropic_batch_server.requests[-1].body
    assert sent["messages"][0]["content"][0]["cache_control"] == EPHEMERAL
