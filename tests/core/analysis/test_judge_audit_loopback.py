"""The position audit end to end: the preference-pair judge through the real openai SDK against the
loopback OpenAI server, which always answers "A". Every pair flips, and every verdict picks the
answer shown first."""

from __future__ import annotations

import json

import pytest

from core.analysis.judge_audit import position_audit
from core.judges.preference_pair import PreferencePairJudge, orders
from core.providers import get_provider
from core.providers.calls import collect
from core.settings import Endpoint, Settings
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply

PREFERENCE = "Wants short live calls where she can interrupt, not recorded video updates."
QUERY = "How should I keep the client team updated during the study?"
PAIRS = [
    ("Hold two short live calls a week, then send written notes.", "Record a Loom walkthrough every Friday."),
    ("Share recorded screen-shares they can watch later.", "A 20-minute live call twice a week works best."),
    ("Send long voice notes on WhatsApp.", "Book short calls where they can ask questions."),
    ("Live calls, then a written summary.", "A live call, then written notes."),
]


@pytest.fixture
def openai_server():
    with OpenAIServer() as server:
        yield server


def loop_complete(server, monkeypatch):
    monkeypatch.setenv("LOOP_KEY", "token-test")
    settings = Settings(endpoints={"loop": Endpoint(base_url=server.base_url, api_key_env="LOOP_KEY")})

    async def complete(spec, messages):
        return await collect(get_provider(spec, settings), spec, messages)

    return complete


async def test_a_judge_always_answering_a_flips_every_pair(openai_server, monkeypatch):
    openai_server.script(Reply.text('{"better": "A", "reason": "Answer A follows the preference."}'))
    judge = PreferencePairJudge("loop:gpt-4o-mini")
    complete = loop_complete(openai_server, monkeypatch)
    results = [await judge.judge_both_orders(QUERY, PREFERENCE, a1, a2, complete) for a1, a2 in PAIRS]

    assert all(j.parse_ok and j.extra["label"] == "A" for js in results for j in js)
    assert [orders(js) for js in results] == [(1.0, 0.0)] * len(PAIRS)
    audit = position_audit(orders(js) for js in results)
    assert (audit.n_pairs, audit.decided, audit.flips) == (len(PAIRS), len(PAIRS), len(PAIRS))
    assert audit.flip_rate == 1.0 and audit.first_shown_wins == 1.0 and audit.flips_to_first == len(PAIRS)

    requests = openai_server.requests
    assert len(requests) == 2 * len(PAIRS)
    for request in requests:
        body = request.body
        assert body["model"] == "gpt-4o-mini" and body["temperature"] == 0
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert PREFERENCE in body["messages"][1]["content"]
    # Each pair was sent once with answer 1 as A and once with answer 2 as A.
    shown_a = sorted(r.body["messages"][1]["content"].split("## Answer A\n", 1)[1].split("\n\n")[0] for r in requests)
    assert shown_a == sorted(a for pair in PAIRS for a in pair)
    assert json.loads(results[0][0].raw)["better"] == "A"
