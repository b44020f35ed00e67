"""The response judge's messages equal CUPID's response_judger.yaml formatted by Python itself."""

from __future__ import annotations

from core.benchmarks.cupid.judge_checklist import ChecklistJudge
from core.benchmarks.cupid.judge_matching import decompose
from core.judges.common import judge_spec
from tests.conformance.cupid_reference import ref_text, ref_yaml
from tests.core.judges.scripted import ScriptedJudgeModel

VALUES = {
    "preference": "Agendas {checklist} list blockers first.",
    "user_request": "Draft the {ai_response} agenda.",
    "ai_response": "1. Blockers {preference}\n2. Wins",
}
CHECKLIST = ["Are blockers listed first?", "Is it {user_request} short?"]


def test_judge_prompt_equals_official():
    official = ref_yaml("prompts", "evaluation", "response_judger.yaml")
    line = ref_text("evaluation", "modules", "prompts", "response_judger_checklist_line.txt")
    values = VALUES | {"checklist": "\n".join(line.replace("{x}", x) for x in CHECKLIST)}
    msgs = ChecklistJudge("openai:gpt-4o").prompt(
        VALUES["preference"], CHECKLIST, VALUES["user_request"], VALUES["ai_response"]
    )
    assert [(m.role, m.content) for m in msgs] == [
        ("system", official["system_prompt"].format(**values)),
        ("user", official["user_prompt"].format(**values)),
    ]


async def test_decomposer_prompt_equals_official():
    official = ref_yaml("prompts", "synthesis", "preference_decomposer.yaml")
    pref = "Be {preferences} brief."
    model = ScriptedJudgeModel(lambda s, m: '{"checklist": []}')
    await decompose(pref, judge_spec("openai:gpt-4o"), model)
    [(_, msgs)] = model.calls
    assert [(m.role, m.content) for m in msgs] == [
        ("system", official["system_prompt"].format(preferences=pref)),
        ("user", official["user_prompt"].format(preferences=pref)),
    ]
