from __future__ import annotations

from core.judges.base import JudgeInput
from core.plan import Message, PromptPlan, PromptStep
from tests.conftest import REPO

SAMPLE = REPO / "sample_data" / "users"


def make_plan(method: str = "zero-shot") -> PromptPlan:
    return PromptPlan(method=method, steps=[PromptStep(name="answer", messages=[Message(role="user", content="q")])])


def item_for(
    bundle, query_id: str, response: str, *, method: str = "zero-shot", model: str = "demo:generic"
) -> JudgeInput:
    return JudgeInput(bundle, bundle.query(query_id), 1, make_plan(method), response, model)
