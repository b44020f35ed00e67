"""The longmemeval judge through a loopback OpenAI server with the real openai SDK: the prompt per
question type (abstention apart), the request LongMemEval's evaluate_qa.py makes, and its yes/no reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.benchmarks.longmemeval.judge import judge_prompt, says_yes
from core.formats import load_path
from core.judges import make_judge
from core.judges.apply import judge_answer
from core.providers import get_provider
from core.providers.calls import collect
from core.settings import Endpoint, Settings
from tests.core.judges.conftest import item_for
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

FIXTURE = Path(__file__).parents[1] / "formats" / "fixtures" / "longmemeval_small.json"
HEAD = {
    "default": "I will give you a question, a correct answer, and a response from a model.",
    "single-session-preference": "I will give you a question, a rubric for desired personalized response,",
    "abstention": "I will give you an unanswerable question, an explanation,",
    "temporal-reasoning": "I will give you a question, a correct answer, and a response from a model.",
}


@pytest.fixture
def openai_server():
    with OpenAIServer() as server:
        yield server


@pytest.fixture(scope="module")
def bundles():
    return {b.queries[0].id: b for b in load_path(FIXTURE).bundles}


def _complete(server, monkeypatch):
    monkeypatch.setenv("LOOP_KEY", "token-test")
    settings = Settings(endpoints={"loop": Endpoint(base_url=server.base_url, api_key_env="LOOP_KEY")})

    async def complete(spec, messages):
        return await collect(get_provider(spec, settings), spec, messages)

    return complete


@pytest.mark.parametrize(
    ("qid", "reply", "score", "prompt"),
    [
        ("q_user_1", "Yes.", 1.0, "default"),
        ("q_pref_2", "no", 0.0, "single-session-preference"),
        ("q_ms_3_abs", "yes", 1.0, "abstention"),
        ("q_tr_4", "No, it is off by three days.", 0.0, "temporal-reasoning"),
    ],
)
async def test_one_request_per_answer_with_the_official_prompt(
    openai_server, monkeypatch, bundles, qid, reply, score, prompt
):
    openai_server.script(Reply(chunks=[reply]))
    bundle = bundles[qid]
    query = bundle.queries[0]
    hypothesis = "  I think it is {something} \u2014 12 days.\n"
    item = item_for(bundle, qid, hypothesis)
    (j,) = await judge_answer(
        [make_judge("longmemeval:loop:gpt-4o-2024-08-06")], item, _complete(openai_server, monkeypatch)
    )
    (request,) = openai_server.requests
    body = request.body
    expected = judge_prompt(query.meta["question_type"], query.meta["abstention"], query.text, query.answer, hypothesis)
    assert body["messages"] == [{"role": "user", "content": expected}]  # no system message
    assert body["model"] == "gpt-4o-2024-08-06" and body["temperature"] == 0 and body["max_tokens"] == 10
    assert expected.startswith(HEAD[prompt]) and f"Model Response: {hypothesis}\n\n" in expected
    assert (j.kind, j.dimension, j.score, j.parse_ok, j.raw) == ("longmemeval", "accuracy", score, True, reply)
    assert j.extra["prompt"] == prompt and j.extra["question_type"] == query.meta["question_type"]
    assert j.judge_model == "loop:gpt-4o-2024-08-06" and j.temperature == 0.0


async def test_a_failed_call_is_a_recorded_failure_not_a_zero(openai_server, monkeypatch, bundles):
    openai_server.script(Reply.http_error(400))
    item = item_for(bundles["q_user_1"], "q_user_1", "A border collie")
    (j,) = await judge_answer([make_judge("longmemeval:loop:m")], item, _complete(openai_server, monkeypatch))
    assert j.score is None and not j.parse_ok and "judge call failed" in j.error


async def test_a_query_of_another_benchmark_is_not_judged(priya):
    async def never(spec, messages):
        raise AssertionError("no call expected")

    query = next(q for q in priya.queries if q.kind == "open")
    (j,) = await judge_answer([make_judge("longmemeval:openai:m")], item_for(priya, query.id, "x"), never)
    assert j.score is None and not j.parse_ok and "not a LongMemEval question" in j.error


@pytest.mark.parametrize(
    ("reply", "yes"),
    [("Yes", True), (" YES. ", True), ("No", False), ("yesterday", True), ("No, not yes", True), ("", False)],
)
def test_yes_no_reading_is_the_official_substring_test(reply, yes):
    assert says_yes(reply) is yes


def test_an_unknown_type_has_no_prompt():
    with pytest.raises(KeyError):
        judge_prompt("open-domain", False, "q", "a", "h")
