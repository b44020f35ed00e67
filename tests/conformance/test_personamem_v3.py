"""PersonaMem-v3 (chatbot-response task) against ../shared/reference/personamem-v3: the agent prompt
templates equal the reference files byte for byte (MIT, citation at the commit SOURCE.txt names), the
message the method sends equals the official f-string construction from those files, and the metric
rules of PROTOCOL.md §4.2-4.3, §5 give the verdicts the notes state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.benchmarks.personamem_v3.methods import prompt_text
from core.benchmarks.personamem_v3.metrics import THRESHOLD, distance_bin, hashtag_overlap, tokens
from core.formats import load_path
from core.history.build import build_context
from core.methods import plan, prompts
from tests.conftest import reference

BACKEND = Path(__file__).parents[1] / "fixtures" / "personamem_v3" / "backend"
TEMPLATE_FILES = {"chatbot_response": "agent_chatbot_response.txt", "chatbot_control": "agent_chatbot_control.txt"}
PARTS = {
    "prior_block": "agent_prompt_prior_block (constructed)",
    "prior_turn_line": "agent_prompt_prior_turn_line (constructed; lines joined by \\n)",
    "history_block": "agent_prompt_history_block (constructed)",
}


def ref(name: str) -> str:
    return reference("personamem-v3", "prompts", name).read_bytes().decode("utf-8")


def parts() -> dict:
    return json.loads(ref("judge_fill_parts.json"))


def check_citation(table: dict) -> None:
    source = reference("personamem-v3", "SOURCE.txt").read_text(encoding="utf-8")
    assert table["verbatim"] is True and table["licence"] == "MIT"
    assert table["official"]["repo"] == "bowen-upenn/PersonaMem-v3" and table["official"]["commit"] in source
    assert table["official"]["path"] == "evaluation/prompts.py"


@pytest.mark.parametrize("key", TEMPLATE_FILES)
def test_agent_prompt_equals_the_reference_file(key):
    table = prompts.template("personamem-v3", key)
    assert table["text"] == ref(TEMPLATE_FILES[key])
    check_citation(table)


@pytest.mark.parametrize("key", PARTS)
def test_constructed_blocks_equal_the_reference_strings(key):
    table = prompts.template("personamem-v3", key)
    assert table["text"] == parts()[PARTS[key]] and table["constructed"] is True
    check_citation(table)


def test_the_sent_message_is_the_official_f_string_construction():
    bundle = load_path(BACKEND).bundles[0]
    for qid, template in (("7-q1", "agent_chatbot_response.txt"), ("7-q2", "agent_chatbot_control.txt")):
        query = bundle.query(qid)
        p = plan("personamem-v3", build_context(bundle, query=qid, config="full"), query)
        (step,) = p.steps
        (message,) = step.messages
        history = message.content.split("## Cross-app user history (time-masked)\n", 1)[1].split("\n\n## Current", 1)[0]
        turns = query.meta["prior_conversation"]
        lines = "\n".join(parts()[PARTS["prior_turn_line"]].format(**t) for t in turns)
        prior = parts()[PARTS["prior_block"]].format(turns=lines) if turns else ""
        block = parts()[PARTS["history_block"]].format(history_block=history)
        expected = ref(template).format(prior=prior, history=block, user_query=query.text)
        assert message.role == "user" and message.content == expected
        assert '{\n  "response": "the assistant\'s reply, as plain text"' in message.content  # {{ -> {
        assert any("history serialisation differs" in n for n in p.notes)
    assert prompt_text(bundle.query("7-q1"), "").count("## Cross-app user history") == 0  # no history: empty block


def test_metric_rules_as_the_notes_state_them():
    notes = reference("personamem-v3", "PROTOCOL.md").read_text(encoding="utf-8")
    # §4.2: "a response that writes `#hiking` with the `#` does not match `hiking`"
    assert "does not match `hiking`" in notes
    assert hashtag_overlap("Let's go #hiking", ["#hiking"]) == 0.0 and hashtag_overlap("go hiking", ["#hiking"]) == 1.0
    assert "#hiking" in tokens("Let's go #hiking")
    # §4.2: "Threshold 0.5 throughout"; §5: e.g. `[1024-2048)`, "n/a" if t < 0
    assert "Threshold 0.5 throughout" in notes and THRESHOLD == 0.5
    assert "`[1024-2048)`" in notes and distance_bin(1500) == "[1024-2048)" and distance_bin(-1) == "n/a"
