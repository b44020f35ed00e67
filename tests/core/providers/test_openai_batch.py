"""``openai-batch``: :class:`OpenAIBatch` through the real openai SDK against the loopback Files +
Batches server. Jobs move only when polled, so every state is reached without sleeping."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from core.plan import Message
from core.providers.base import ModelParams, ModelSpec
from core.providers.batch_api import BatchApiError, BatchRequest
from core.providers.batch_backends import backend, serves
from core.providers.openai_batch import OpenAIBatch
from core.providers.openai_chat import OpenAIChatProvider
from core.settings import Endpoint, Settings
from tests.servers.batch_jobs import content_text, echo_reply
from tests.servers.batch_openai import OpenAIBatchServer
from tests.servers.script import Reply

KEY = "sk-test-openai-batch-0123456789"
MODEL = ModelSpec(id="openai:gpt-4o-mini", params=ModelParams(max_tokens=64, temperature=0.3, seed=7))


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
    with OpenAIBatchServer(polls_to_finish=2) as s:
        yield s


@pytest.fixture
def client(server, monkeypatch) -> OpenAIBatch:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    made = backend("openai-batch", MODEL, None)
    assert isinstance(made, OpenAIBatch)
    return made


async def test_a_job_is_submitted_polled_to_its_end_and_its_answers_map_to_results(server, client):
    server.responder = lambda body: echo_reply(body, usage=(120, 9), cache_read=100)
    job_id = await client.submit(MODEL, requests(4), "my-batch")
    assert server.job_ids() == [job_id]
    assert server.job(job_id).info["metadata"] == {"prefscope_batch": "my-batch"}

    states = [await client.poll(job_id) for _ in range(3)]
    assert [s.status for s in states] == ["in_progress", "finalizing", "completed"]
    assert [s.ended for s in states] == [False, False, True]
    assert states[-1].counts == "4 completed, 0 failed of 4" and states[-1].error is None

    results = {r.custom_id: r for r in await client.results(job_id)}
    assert set(results) == {f"run{i}" for i in range(4)}
    for i in range(4):
        r = results[f"run{i}"]
        assert (r.status, r.error, r.finish_reason) == ("ok", None, "stop")
        assert r.text == f"answer to: {question(i)[:40]}", "each answer comes back under its own custom_id"
        assert r.usage is not None
        # prompt_tokens already counts the cached ones: input_tokens is the whole prompt
        assert (r.usage.input_tokens, r.usage.output_tokens, r.usage.cache_read_tokens) == (120, 9, 100)
        assert r.usage.cache_write_tokens is None


async def test_per_request_failures_come_back_as_errors_with_the_providers_message(server, client):
    def responder(body: dict):
        text = content_text(body["messages"][-1]["content"])
        if "number 1" in text:
            return Reply.http_error(400, "this prompt was refused by policy")
        return echo_reply(body)

    server.responder = responder
    job_id = await client.submit(MODEL, requests(3), "b")
    while not (await client.poll(job_id)).ended:
        pass
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[c].status for c in ("run0", "run1", "run2")] == ["ok", "error", "ok"]
    assert results["run1"].error is not None
    assert "HTTP 400" in results["run1"].error and "this prompt was refused by policy" in results["run1"].error
    assert results["run1"].text == "" and results["run1"].usage is None


async def test_an_expired_job_keeps_its_answers_and_returns_the_rest_expired(server, client):
    job_id = await client.submit(MODEL, requests(4), "b")
    first = await client.poll(job_id)  # answers half of the requests
    assert not first.ended
    server.expire(job_id)
    state = await client.poll(job_id)
    assert (state.status, state.ended) == ("expired", True)
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[f"run{i}"].status for i in range(4)] == ["ok", "ok", "expired", "expired"]
    assert "batch_expired" in (results["run3"].error or "")


async def test_a_cancelled_job_ends_cancelled_at_its_next_poll(server, client):
    job_id = await client.submit(MODEL, requests(4), "b")
    await client.poll(job_id)
    cancelling = await client.cancel(job_id)
    assert (cancelling.status, cancelling.ended) == ("cancelling", False)
    ended = await client.poll(job_id)
    assert (ended.status, ended.ended) == ("cancelled", True)
    assert server.job(job_id).outcome == "cancelled"
    results = {r.custom_id: r for r in await client.results(job_id)}
    assert [results[f"run{i}"].status for i in range(4)] == ["ok", "ok", "cancelled", "cancelled"]


async def test_a_job_refused_at_validation_reports_why_in_its_state(server, client):
    other = MODEL.model_copy(update={"id": "openai:gpt-4o"})
    mixed = [requests(1)[0], BatchRequest("run1", other, requests(1)[0].messages)]  # two models in one file
    job_id = await client.submit(MODEL, mixed, "b")
    state = await client.poll(job_id)
    assert (state.status, state.ended) == ("failed", True)
    assert state.error is not None and "does not match the model" in state.error
    assert await client.results(job_id) == []


def test_a_request_line_is_the_streamed_body_without_stream_and_with_the_right_token_limit(client, monkeypatch):
    request = requests(1)[0]
    line = client.line(MODEL, request)
    assert (line["custom_id"], line["method"], line["url"]) == ("run0", "POST", "/v1/chat/completions")
    body = line["body"]
    assert "stream" not in body and "stream_options" not in body
    # a base_url server takes max_tokens, as the streaming provider sends it there
    streamed = OpenAIChatProvider(base_url=client.base_url).request_kwargs(MODEL, request.messages, hosted=False)
    assert body == {k: v for k, v in streamed.items() if k not in ("stream", "stream_options")}
    assert body["max_tokens"] == 64 and "max_completion_tokens" not in body
    assert (body["temperature"], body["seed"]) == (0.3, 7)

    monkeypatch.delenv("OPENAI_BASE_URL")
    hosted = backend("openai-batch", MODEL, None)
    assert isinstance(hosted, OpenAIBatch) and hosted.base_url is None
    hosted_body = hosted.line(MODEL, request)["body"]
    assert hosted_body["max_completion_tokens"] == 64 and "max_tokens" not in hosted_body


async def test_the_uploaded_file_holds_one_line_per_request_with_each_requests_own_limits(server, client):
    short = MODEL.model_copy(update={"params": ModelParams(max_tokens=5)})
    job_id = await client.submit(MODEL, [*requests(1), BatchRequest("run9", short, requests(1)[0].messages)], "b")
    lines = [json.loads(x) for x in server.file_content(server.job(job_id).info["input_file_id"]).splitlines()]
    assert [(x["custom_id"], x["body"]["max_tokens"]) for x in lines] == [("run0", 64), ("run9", 5)]
    assert ("POST", "/v1/batches") in server.batch_log


class CarelessServer(OpenAIBatchServer):
    """Refuses every status read with a 401 whose body repeats the credentials it was sent."""

    def _retrieve(self, request: web.Request, raw: bytes, batch_id: str) -> web.Response:
        error = {"message": f"bad key {request.headers.get('Authorization')}", "type": "invalid_request_error"}
        return web.json_response({"error": {**error, "param": None, "code": "invalid_api_key"}}, status=401)


async def test_a_job_level_http_error_names_the_server_and_never_the_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with CarelessServer() as careless:
        monkeypatch.setenv("OPENAI_BASE_URL", careless.base_url)
        client = backend("openai-batch", MODEL, None)
        job_id = await client.submit(MODEL, requests(1), "b")
        with pytest.raises(BatchApiError) as caught:
            await client.poll(job_id)
    message = str(caught.value)
    assert careless.base_url in message and "401" in message and job_id in message
    assert KEY not in message, "a job-level error is shown and stored: the key must be redacted from it"


async def test_a_missing_job_is_a_404_naming_the_job_and_the_server(server, client):
    with pytest.raises(BatchApiError, match="404") as caught:
        await client.poll("batch_nosuchjob")
    assert "batch_nosuchjob" in str(caught.value) and server.base_url in str(caught.value)


async def test_an_unreachable_server_is_a_job_level_error_naming_it(monkeypatch):
    with OpenAIBatchServer() as gone:
        url = gone.base_url
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    client = OpenAIBatch(base_url=url, key_env="OPENAI_API_KEY", label=f"openai batch API at {url}")
    with pytest.raises(BatchApiError, match="could not connect") as caught:
        await client.submit(MODEL, requests(1), "b")
    assert url in str(caught.value) and KEY not in str(caught.value)


def test_without_a_key_or_base_url_the_backend_is_refused_with_the_variable_named():
    with pytest.raises(BatchApiError, match="OPENAI_API_KEY is not set"):
        backend("openai-batch", MODEL, None)


def test_an_endpoint_model_goes_to_its_own_server_and_key():
    settings = Settings(endpoints={"local": Endpoint(base_url="http://127.0.0.1:9/v1", api_key_env="LOCAL_KEY")})
    model = ModelSpec(id="local:test-model")
    assert serves("openai-batch", model, settings) is None
    made = OpenAIBatch.for_model(model, settings)
    assert (made.base_url, made.key_env) == ("http://127.0.0.1:9/v1", "LOCAL_KEY")
    assert serves("openai-batch", model, None) is not None
    assert serves("openai-batch", ModelSpec(id="anthropic:claude-haiku-4-5"), settings) is not None
    assert serves("anthropic-batch", ModelSpec(id="openai:gpt-4o"), settings) is not None
