"""CUPID preference matching as the official code: the inferred line, the repo's decomposer and
matcher prompts, CUPID's JSON and label rules, and which instances count (PROTOCOL §5–6)."""

from __future__ import annotations

import json
import re

import pytest

from core.benchmarks.cupid.judge_matching import (
    PreferenceMatchingJudge,
    matcher_system,
    micro_prf,
    parse_match,
    status_counts,
)
from core.benchmarks.cupid.parsing import cupid_parse_json
from core.providers.calls import Completion
from tests.core.judges.conftest import item_for
from tests.core.judges.scripted import ScriptedJudgeModel

GOLD = "Wants live calls with written notes afterwards."
GOLD_CHECKLIST = ["Proposes live calls?", "Sends written notes afterwards?"]
LINE = "Prefers live calls; likes emojis."
REPLY = f"### Analysis\n\nThe log shows calls.\n\n### Most Likely Preference\n\n{LINE}\nignored second line"
INFERRED_CHECKLIST = ["Proposes live calls?", "Uses emojis?"]
COVER = {
    "Proposes live calls?": "Fully Covered",
    "Sends written notes afterwards?": "Partially Covered",
    "Uses emojis?": "Not Covered",
}


def _fenced(obj: dict) -> str:
    return "**Analysis**\n\nsome prose\n\n```json\n" + json.dumps(obj) + "\n```\n"


def model_for(*, decomposed=INFERRED_CHECKLIST, matcher=None):
    def answer(spec, messages):
        system, user = messages[0].content, messages[1].content
        if "creating an evaluation checklist from the preference" in system:
            assert user == f"**Preferences**\n\n{LINE}"
            return decomposed if isinstance(decomposed, (str, Completion)) else _fenced({"checklist": decomposed})
        assert system == matcher_system() and user.startswith("#### Preference\n\n")
        if matcher is not None:
            return matcher(user)
        items = re.findall(r"^\d+\. (.+)$", user.split("#### Checklist\n\n")[1], re.M)
        return _fenced(
            {
                "results": [
                    {"index": i + 1, "entry": e, "reasoning": "r", "label": COVER[e]} for i, e in enumerate(items)
                ]
            }
        )

    return ScriptedJudgeModel(answer)


@pytest.fixture
def cupid_item(priya):
    def make(reply: str):
        q = priya.query("p1-open").model_copy(update={"gold_preference": GOLD, "checklist": GOLD_CHECKLIST})
        bundle = priya.model_copy(update={"queries": [q]})
        return item_for(bundle, "p1-open", reply, method="cupid-infer")

    return make


async def _judge(item, model):
    return {j.dimension: j for j in await PreferenceMatchingJudge("openai:gpt-4o").judge(item, model)}


async def test_counts_prompts_and_scores(cupid_item):
    model = model_for()
    by = await _judge(cupid_item(REPLY), model)
    assert len(model.calls) == 3  # one decomposition (the gold checklist is the dataset's), two matches
    matcher_users = sorted(m[1].content for _, m in model.calls[1:])
    assert matcher_users == sorted(
        [
            f"#### Preference\n\n{GOLD}\n\n#### Checklist\n\n1. Proposes live calls?\n2. Uses emojis?",
            f"#### Preference\n\n{LINE}\n\n#### Checklist\n\n1. Proposes live calls?\n2. Sends written notes afterwards?",
        ]
    )
    e = by["precision"].extra
    assert e["inferred_preference"] == LINE and e["cupid_status"] == "ok"
    assert (e["n_true"], e["n_predicted"], e["true_matched"], e["predicted_matched"]) == (2, 2, 1.5, 1.0)
    assert by["precision"].score == pytest.approx(0.5) and by["recall"].score == pytest.approx(0.75)
    assert by["f1"].score == pytest.approx(2 * 0.5 * 0.75 / 1.25)
    assert e["gold_reasonings"] == ["r", "r"] and e["inferred_labels"] == ["Fully Covered", "Not Covered"]


async def test_missing_heading_is_excluded_without_calls(cupid_item):
    model = model_for()
    by = await _judge(cupid_item(f"### Most Likely Preferneces\n\n{LINE}"), model)
    assert model.calls == []
    assert all(not j.parse_ok and j.extra["cupid_status"] == "no_heading" for j in by.values())
    assert micro_prf([by["precision"].extra]).recall == 0.0  # excluded: nothing counted


async def test_empty_inference_counts_as_zero_with_its_gold_items(cupid_item):
    model = model_for()
    by = await _judge(cupid_item("### Most Likely Preference\n\n"), model)
    assert model.calls == []
    e = by["recall"].extra
    assert by["recall"].parse_ok and by["recall"].score == 0.0 and e["cupid_status"] == "empty"
    assert (e["n_true"], e["n_predicted"], e["true_matched"]) == (2, 0, 0.0)


async def test_decomposer_failure_is_excluded(cupid_item):
    by = await _judge(cupid_item(REPLY), model_for(decomposed='```\n{"checklist": ["x"]}\n```'))
    assert all(not j.parse_ok and j.extra["cupid_status"] == "decompose_failed" for j in by.values())


async def test_matcher_failure_counts_with_empty_match_lists(cupid_item):
    by = await _judge(cupid_item(REPLY), model_for(matcher=lambda user: '{"items": []}'))
    e = by["precision"].extra
    assert by["precision"].parse_ok and e["cupid_status"] == "match_failed"
    assert (e["n_true"], e["n_predicted"], e["true_matched"], e["predicted_matched"]) == (2, 2, 0.0, 0.0)


async def test_empty_decomposed_checklist_is_accepted(cupid_item):
    by = await _judge(cupid_item(REPLY), model_for(decomposed=[]))
    e = by["precision"].extra
    assert e["cupid_status"] == "ok" and e["n_predicted"] == 0 and by["precision"].score == 0.0


def test_matcher_rules_no_count_check_exact_labels():
    three = parse_match(
        "```json\n"
        + json.dumps({"results": [{"label": "Fully Covered"}, {"label": "Fully Covered"}, {"label": "Fully Covered"}]})
        + "\n```"
    )
    assert sum(three.scores) == 3  # 3 entries for a 2-item checklist: CUPID does not check
    assert parse_match('{"results": [{"label": "fully covered"}, {}, {"label": "Partially Covered"}]}').scores == [
        0,
        0,
        0.5,
    ]
    assert not parse_match('```json\n{"checklist": []}\n```').ok  # no results key: matcher failure
    assert not parse_match("Fully Covered").ok


@pytest.mark.parametrize(
    "text,expected",
    [
        ('Prose first\n```json\n{"a": 1}\n```\nprose after', {"a": 1}),
        ('```json\n{"a": "```"}\n```', {"a": "```"}),  # cut at the LAST fence
        ('  {"a": 2}  ', {"a": 2}),
    ],
)
def test_cupid_parse_json(text, expected):
    assert cupid_parse_json(text) == expected


@pytest.mark.parametrize("text", ['```\n{"a": 1}\n```', 'The object is {"a": 1}', ""])
def test_cupid_parse_json_repairs_nothing(text):
    with pytest.raises(ValueError):
        cupid_parse_json(text)


def test_status_counts_and_legacy_extras():
    extras = [
        {"cupid_status": "ok", "n_true": 2, "n_predicted": 2, "true_matched": 1.0, "predicted_matched": 2.0},
        {"cupid_status": "no_heading"},
        {"inferred_coverage": [1.0, 0.0], "gold_coverage": [0.5]},  # stored before the counts existed
    ]
    prf = micro_prf(extras)
    assert prf.precision == pytest.approx(3 / 4) and prf.recall == pytest.approx(1.5 / 3)
    assert status_counts(extras) == {"ok": 1, "no_heading": 1, "unknown": 1}
