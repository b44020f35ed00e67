"""CUPID's response judge: the ``- item`` checklist, CUPID's score extraction and normalisation,
and 0 (counted) for every failure."""

from __future__ import annotations

import pytest

from core.benchmarks.cupid.judge_checklist import ChecklistJudge
from core.benchmarks.cupid.parsing import parse_cupid_score
from core.providers.calls import Completion
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel


@pytest.mark.parametrize(
    "reply,score",
    [
        ("### Evaluation Label\n\nGood\n\n### Evaluation Score\n\n8", 8.0),
        ("### Evaluation Score\n\n**7**", 7.0),
        ("### Evaluation Score\n9/10", 9.0),
        ("### Evaluation Score\n7.5", 7.0),  # decimals truncated by the cut at "."
        ("### Evaluation Score\n\n8\n\nThe response is fine.", 8.0),
        ("### Evaluation Score\n\n11", 11.0),  # no clamping
        ("### Evaluation Score\n\nEight", 0.0),
        ("Score: 8", 0.0),  # no heading
        ("### Evaluation Score\n6\n### **Evaluation Score**\n**4**", 4.0),  # the bold heading wins
        ("### Evaluation Score\n5\n### Evaluation Score\n9", 5.0),  # up to the second occurrence
    ],
)
def test_cupid_score_rule(reply, score):
    assert parse_cupid_score(reply) == score


@pytest.fixture
def item(priya):
    q = priya.query("p1-open").model_copy(
        update={"gold_preference": "Wants live calls.", "checklist": ["Live calls?", "No video?"]}
    )
    return item_for(priya.model_copy(update={"queries": [q]}), "p1-open", "Live calls twice a week.")


async def test_prompt_uses_bullets_and_the_repo_text(item):
    model = ScriptedJudgeModel(lambda s, m: "### Evaluation Score\n\n8")
    [j] = await ChecklistJudge("openai:gpt-4o").judge(item, model)
    system, user = (m.content for m in model.calls[0][1])
    assert '**Preference**: "Wants live calls."\n\n**Evaluation Checklist**:\n- Live calls?\n- No video?\n\n' in system
    assert "\n  - 1: Unacceptable\n" in system and "### Evaluation Label" in system
    assert user.endswith("### AI Assistant's Response\n\nLive calls twice a week.")
    assert j.score == 8 and j.parse_ok and j.extra["cupid_status"] == "ok"
    assert j.prompt_version == "cupid-judge-repo-a8560ca"


@pytest.mark.parametrize(
    "answer,status",
    [("I cannot score this.", "no_score_heading"), (Completion("", error="HTTP 500"), "judge_error")],
)
async def test_failures_score_zero_and_count(item, answer, status):
    [j] = await ChecklistJudge("openai:gpt-4o").judge(item, ScriptedJudgeModel(lambda s, m: answer))
    assert j.parse_ok and j.score == 0.0 and j.extra["cupid_status"] == status


async def test_decomposes_the_gold_when_the_dataset_has_no_checklist(priya):
    def answer(spec, messages):
        if "creating an evaluation checklist" in messages[0].content:
            return '```json\n{"checklist": ["Proposes live calls?", "Avoids recorded video?"]}\n```'
        return "### Evaluation Score\n\n6"

    model = ScriptedJudgeModel(answer)
    [j] = await ChecklistJudge("openai:gpt-4o").judge(item_for(priya, "p1-open", "Record Looms."), model)
    assert len(model.calls) == 2 and j.score == 6
    assert j.extra["checklist"] == ["Proposes live calls?", "Avoids recorded video?"]
    assert j.extra["checklist_source"] == "decomposed"
    assert "- Proposes live calls?\n- Avoids recorded video?" in model.calls[1][1][0].content
