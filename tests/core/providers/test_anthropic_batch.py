"""``anthropic-batch``: :class:`AnthropicBatch` through the real anthropic SDK against the loopback
Message Batches server. Jobs move only when polled, so every state is reached without sleeping."""

from __future__ import annotations

import pytest
from aiohttp import web

from core.plan import Message
from core.providers.anthropic_batch import AnthropicBatch
from core.providers.base import ModelParams, ModelSpec
from core.providers.batch_api import BatchApiError, BatchRequest
from core.providers.batch_backends import backend
from tests.servers.batch_anthropic import AnthropicBatchServer
from tests.servers.batch_jobs import content_text, echo_reply
from tests.servers.script import Reply

KEY = "sk-ant-test-batch-0123456789"
MODEL = ModelSpec(id="anthropic:claude-haiku-4-5", params=ModelParams(max_tokens=64, temperature=0.3))


def question(i: int) -> str:
    return f"Question number {i}: what should I cook tonight?"


def requests(n: int, model: ModelSpec = MODEL) -> list[BatchRequest]:
    return [
        BatchRequest(
            f"run{i}", model, [Message(role="system", content="Be brief."), Message(role="user", content=question(i))]
        )
        for i in range(n)
    ]


@pytest.fixture
def server():
    with AnthropicBatchServer(polls_to_finish=2) as s:
        yield s


@pytest.fixture
def client(server, monkeypatch) -> AnthropicBatch:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    made = backend("anthropic-batch", MODEL, None)
    assert isinstance(made, AnthropicBatch)
    return made


async def until_ended(client: AnthropicBatch, job_id: str):
    for _ in range(10):
        state = await client.poll(job_id)
        if state.ended:
            return state
    raise AssertionError(f"job {job_id} never ended")


async def test_a_job_is_submitted_polled_to_its_end_and_its_answers_map_to_results(server, client):
    # Anthropic reports input_tokens without the cache parts: 120 in all = 15 plain + 100 read + 5 written
    server.responder = lambda body: echo_reply(body, usage=(120, 9), cache_read=100, cache_write=5)
    job_id = await client.submit(MODEL, requests(4), "my-batch")
    assert server.job_ids() == [job_id]

    states = [await client.poll(job_id) for _ in range(3)]
    assert [s.status for s in states] == ["in_progress", "in_progress", "ended"]
    assert [s.ended for s in states] == [False, False, True]
    assert states[0].counts == "4 processing", "the line shown while waiting"
    assert states[-1].counts == "4 succeeded"

    results = {r.custom_id: r for r in await client.results(job_id)}
    assert set(results) == {f"run{i}" for i in range(4)}
    for i in range(4):
        r = results[f"run{i}"]
        assert (r.status, r.error, r.finish_reason) == ("ok", None, "end_turn")
        assert r.text == f"answer to: {question(i)[:40]}", "each answer comes back under its own custom_id"
        assert r.usage is not None
        assert (r.usage.input_tokens, r.usage.output_tokens) == (120, 9), "input_tokens counts the whole prompt"
        assert (r.usage.cache_read_tokens, r.usage.cache_write_tokens) == (100, 5)


async def test_per_request_failures_come_back_as_errors_with_the_providers_message(server, client):
    def responder(body: dict):
        if "number 1" in content_text(body["messages"][-1]["content"]):
            return Reply.http_error(400, "this prompt was refused by policy", error_type="invalid_request_error")
        return echo_reply(body)

    server.responder = responder
    job_id = await client.submit(MODEL, requests(3), "b")
    state = await until_ended(client, job_id)
    assert state.counts == "2 succeeded, 1 errored"
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[c].status for c in ("run0", "run1", "run2")] == ["ok", "error", "ok"]
    assert results["run1"].error == "invalid_request_error: this prompt was refused by policy"
    assert results["run1"].usage is None


async def test_an_expired_job_keeps_its_answers_and_returns_the_rest_expired(server, client):
    job_id = await client.submit(MODEL, requests(4), "b")
    await client.poll(job_id)  # answers half of the requests
    server.expire(job_id)
    assert (await client.poll(job_id)).ended
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[f"run{i}"].status for i in range(4)] == ["ok", "ok", "expired", "expired"]
    assert results["run2"].error


async def test_a_cancelled_job_ends_at_its_next_poll_with_the_rest_cancelled(server, client):
    job_id = await client.submit(MODEL, requests(4), "b")
    await client.poll(job_id)
    cancelling = await client.cancel(job_id)
    assert (cancelling.status, cancelling.ended) == ("canceling", False)
    ended = await client.poll(job_id)
    assert (ended.status, ended.ended) == ("ended", True)
    assert server.job(job_id).outcome == "cancelled"
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[f"run{i}"].status for i in range(4)] == ["ok", "ok", "cancelled", "cancelled"]


async def test_params_are_the_streamed_request_without_stream_and_with_temperature_in_place(server, client):
    job_id = await client.submit(MODEL, requests(2), "b")
    sent = server.submitted(job_id)
    assert set(sent) == {"run0", "run1"}
    params = sent["run1"]
    assert "stream" not in params and "extra_body" not in params
    assert params["temperature"] == 0.3, "a batch request's params carry temperature directly"
    assert (params["model"], params["max_tokens"], params["system"]) == ("claude-haiku-4-5", 64, "Be brief.")
    assert params["messages"] == [{"role": "user", "content": question(1)}]


async def test_a_request_without_temperature_sends_none(server, client):
    plain = MODEL.model_copy(update={"params": ModelParams()})
    job_id = await client.submit(plain, requests(1, plain), "b")
    params = server.submitted(job_id)["run0"]
    assert "temperature" not in params and params["max_tokens"] == 1024


class CarelessServer(AnthropicBatchServer):
    """Refuses every status read with a 401 whose body repeats the credentials it was sent."""

    def _retrieve(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        sent = request.headers.get("Authorization") or request.headers.get("x-api-key")
        error = {"type": "authentication_error", "message": f"invalid x-api-key {sent}"}
        return web.json_response({"type": "error", "error": error}, status=401)


async def test_a_job_level_http_error_names_the_server_and_never_the_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with CarelessServer() as careless:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", careless.base_url)
        client = backend("anthropic-batch", MODEL, None)
        job_id = await client.submit(MODEL, requests(1), "b")
        with pytest.raises(BatchApiError) as caught:
            await client.poll(job_id)
    message = str(caught.value)
    assert careless.base_url in message and "401" in message and job_id in message
    assert KEY not in message, "a job-level error is shown and stored: the key must be redacted from it"


async def test_a_refused_job_is_a_job_level_error_naming_the_server(server, client):
    bad = [BatchRequest("has a space", MODEL, requests(1)[0].messages)]  # custom_id outside the API's pattern
    with pytest.raises(BatchApiError, match="400") as caught:
        await client.submit(MODEL, bad, "b")
    assert server.base_url in str(caught.value) and "submitting a job" in str(caught.value)
    assert server.job_ids() == []


async def test_a_missing_job_is_a_404_naming_the_job(server, client):
    with pytest.raises(BatchApiError, match="404") as caught:
        await client.poll("msgbatch_nosuchjob")
    assert "msgbatch_nosuchjob" in str(caught.value)


def test_without_a_key_or_base_url_the_backend_is_refused_with_the_variable_named():
    with pytest.raises(BatchApiError, match="ANTHROPIC_API_KEY is not set"):
        backend("anthropic-batch", MODEL, None)


def test_a_base_url_ending_in_v1_is_the_servers_root(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/v1")
    assert AnthropicBatch.for_model(MODEL, None).base_url == "http://127.0.0.1:9"
