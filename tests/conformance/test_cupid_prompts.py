"""Full prompts of ``cupid-infer`` and ``cupid-generate`` on a hand-written CUPID instance, imported
through core/benchmarks/cupid/format.py, equal an independent rendering from the official YAML and log pieces."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.benchmarks.cupid import format as cupid_format
from core.benchmarks.cupid.render import cupid_log
from core.history.build import build_context
from core.methods import plan
from tests.conformance.cupid_reference import interaction_log, ref_yaml

INSTANCE = {
    "persona_id": "p-007",
    "instance_type": "changing",
    "current_request": "Draft the {interaction_log} agenda for Monday's   stand-up.\n",
    "current_context_factor": "Weekly team stand-up",
    "current_contextual_preference": "Agendas should list blockers first.",
    "current_checklist": ["Are blockers listed first?", "Is the agenda short?"],
    "prior_interactions": [
        {
            "context_factor": "Weekly team stand-up",
            "contextual_preference": "Agendas should list blockers first.",
            "dialogue": [
                {"role": "user", "content": "  Can you outline the stand-up? Use {curr_request} as a title.\n\n"},
                {"role": "assistant", "content": "Sure:\n\n1. Wins\n2. Blockers  "},
                {"role": "user", "content": "Blockers should come first, always."},
                {"role": "assistant", "content": "Understood {{ noted }}."},
            ],
        },
        {
            "context_factor": "Board report",
            "contextual_preference": "Reports open with one number.",
            "dialogue": [{"role": "user", "content": "Summarise Q3."}, {"role": "assistant", "content": "Q3: +4%."}],
        },
    ],
}


@pytest.fixture
def imported(tmp_path):
    path = tmp_path / "p-007.json"
    path.write_text(json.dumps(INSTANCE), encoding="utf-8")
    bundle = cupid_format.load(path).bundles[0]
    query = bundle.queries[0]
    return bundle, query, build_context(bundle, query=query, config="full")


def test_log_equals_the_official_layout(imported):
    _, _, ctx = imported
    expected = interaction_log(INSTANCE)
    assert cupid_log(ctx) == expected
    assert expected.startswith("### Session 1\n\n#### User\n\n  Can you outline") and expected.endswith("+4%.\n\n---")
    # every prior session, in dataset order, no filler
    assert [len(cs.session.turns) for cs in ctx.sessions] == [4, 2]


@pytest.mark.parametrize(
    "method,yaml_file",
    [("cupid-infer", "preference_inferrer.yaml"), ("cupid-generate", "response_generator.yaml")],
)
def test_full_prompt_equals_official(imported, method, yaml_file):
    bundle, query, ctx = imported
    official = ref_yaml("prompts", "evaluation", yaml_file)
    user = official["user_prompt"].format(
        curr_request=INSTANCE["current_request"], interaction_log=interaction_log(INSTANCE)
    )
    (step,) = plan(method, ctx, query).steps
    assert [(m.role, m.content) for m in step.messages] == [("system", official["system_prompt"]), ("user", user)]


def test_empty_history_is_an_empty_log(imported):
    _, _, ctx = imported
    assert cupid_log(dataclasses.replace(ctx, sessions=[])) == ""  # "".strip(), no placeholder text
