"""An LLM judge goes through the same provider layer as the answering models: here the rubric
judge is a local OpenAI-compatible endpoint (the loopback server), called by the engine after the
demo model's answer. One scripted reply is valid, one is prose without a score: the first becomes
a score with its rationale, the second a recorded parse failure with the raw text kept."""

from __future__ import annotations

import asyncio
import json

from core.formats.native import load_file
from core.judges import judges_for
from core.plan import Message, PromptPlan, PromptStep
from core.providers import get_provider
from core.providers.base import ModelSpec
from core.run.engine import Engine
from core.run.spec import JudgeScored, RunSpec
from core.settings import Endpoint, Settings
from tests.conftest import SAMPLE_DATA
from tests.servers.openai_sse import OpenAIServer
from tests.servers.script import Reply


def test_rubric_judge_scores_through_a_local_endpoint():
    bundle = load_file(SAMPLE_DATA / "users" / "maya.json").bundles[0]
    good = json.dumps({"score": 4, "rationale": "Mentions the 3 a.m. meal and builds the plan around it."})
    replies = [Reply.text(good), Reply.text("I think this answer is rather good overall."), Reply.text(good)]
    with OpenAIServer(replies) as server:
        settings = Settings(endpoints={"local": Endpoint(base_url=server.base_url)}, demo_tokens_per_s=0)
        spec = RunSpec(
            user_id="maya",
            query_id="p1-open",
            models=[ModelSpec(id="demo:oracle")],
            judges=["rubric:local:judge-model"],
        )
        plan = PromptPlan(
            method="zero-shot",
            steps=[PromptStep(name="answer", messages=[Message(role="user", content=bundle.query("p1-open").text)])],
        )
        events = []
        engine = Engine(lambda s: get_provider(s, settings), events.append, judges=judges_for(spec, settings))
        asyncio.run(engine.run(spec, plan, bundle))
        sent = [r.body for r in server.requests]
    rubric = [e.judgment for e in events if isinstance(e, JudgeScored) and e.judgment.kind == "rubric"]
    assert len(rubric) == 3 and len(sent) == 3, "one judge call per rubric dimension"
    assert all(body["model"] == "judge-model" for body in sent)
    assert all(
        bundle.preference("p1").text in body["messages"][-1]["content"]
        or bundle.preference("p1").text in json.dumps(body["messages"])
        for body in sent
    )
    ok = [j for j in rubric if j.parse_ok]
    failed = [j for j in rubric if not j.parse_ok]
    assert [j.score for j in ok] == [4.0, 4.0] and all("3 a.m." in j.rationale for j in ok)
    assert len(failed) == 1 and failed[0].score is None
    assert failed[0].raw == "I think this answer is rather good overall." and failed[0].error
    assert all(j.judge_model == "local:judge-model" and j.prompt_version for j in rubric)
