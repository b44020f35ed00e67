from __future__ import annotations

from pathlib import Path

import pytest

from core.formats.native import load_file
from core.judges.base import JudgeInput
from core.plan import Message, PromptPlan, PromptStep

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "users"


@pytest.fixture(scope="session")
def priya():
    return load_file(SAMPLE / "priya.json").bundles[0]


def make_plan(method: str = "zero-shot") -> PromptPlan:
    return PromptPlan(method=method, steps=[PromptStep(name="answer", messages=[Message(role="user", content="q")])])


def item_for(
    bundle, query_id: str, response: str, *, method: str = "zero-shot", model: str = "demo:generic"
) -> JudgeInput:
    return JudgeInput(bundle, bundle.query(query_id), 1, make_plan(method), response, model)
