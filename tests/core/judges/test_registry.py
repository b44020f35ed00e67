"""Judge strings -> judges, and the rules they follow."""

from __future__ import annotations

import pytest

from core.judges import JUDGE_CHOICES, JUDGES, LLM_KINDS, JudgeSpecError, judges_for, make_judge, parse_judge
from core.judges.templates import family
from core.providers.base import ModelSpec
from core.run.spec import RunSpec
from core.settings import Settings


def test_judge_strings_resolve_to_kind_and_model():
    assert parse_judge("demo:heuristic") == ("heuristic", None)
    assert parse_judge("rubric:openai:gpt-4o-mini") == ("rubric", "openai:gpt-4o-mini")
    assert parse_judge("checklist", default_model="anthropic:claude-sonnet-4-5") == (
        "checklist",
        "anthropic:claude-sonnet-4-5",
    )
    for bad in ("rubric", "rubric:gpt-4o", "vibes:openai:gpt-4o"):
        with pytest.raises(JudgeSpecError):
            parse_judge(bad, default_model="demo:heuristic")


def test_judges_for_a_run_spec_adds_choice_once():
    spec = RunSpec(
        user_id="u",
        query_id="q",
        models=[ModelSpec(id="demo:generic")],
        judges=["demo:heuristic", "rubric:openai:gpt-4o-mini", "choice"],
    )
    names = [j.name for j in judges_for(spec, Settings())]
    assert names == ["demo:heuristic", "rubric:openai:gpt-4o-mini", "choice"]
    # no judge asked for: the free, deterministic choice parser still scores MCQ / true-false answers
    bare = judges_for(RunSpec(user_id="u", query_id="q", models=[ModelSpec(id="demo:generic")]), Settings())
    assert [j.name for j in bare] == ["choice"]


def test_the_registry_is_the_one_list_of_judges():
    assert list(JUDGE_CHOICES) == [
        *("demo:heuristic", "choice", "probe-recall", "restraint", "locomo", "mem0-f1", "mem0-bleu1", "rubric"),
        *("checklist", "matching", "taxonomy", "longmemeval", "mem0", "personamem-v2-boxed", "personamem-v2-vote"),
        *("op-bench", "pmv3-slice", "pmv3-slice-jaccard", "personalization"),
    ]
    assert LLM_KINDS == (
        *("rubric", "checklist", "matching", "taxonomy", "longmemeval", "mem0", "personamem-v2-boxed"),
        *("personamem-v2-vote", "op-bench", "personalization", "pairwise"),
    )
    for name, entry in JUDGES.items():
        assert entry.description and callable(entry.load()), name
    with pytest.raises(JudgeSpecError, match="two responses"):
        make_judge("pairwise:openai:gpt-4o-mini")
    assert parse_judge("heuristic") == ("heuristic", None) and parse_judge("RUBRIC:openai:x") == ("rubric", "openai:x")


def test_every_choice_is_a_valid_judge_string_given_a_model():
    for name in JUDGE_CHOICES:
        judges_for([name], Settings(judge="openai:gpt-4o-mini"))


@pytest.mark.parametrize("name", ["realpref_rubric", "cupid", "interpref", "prefeval", "recentering"])
def test_prompt_files_cite_a_source_and_carry_versions(name):
    data = family(name)
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    assert tables
    for key, table in tables.items():
        if "text" in table or "system" in table or "user" in table:
            assert table.get("source"), f"{name}.{key} needs a citation"
            assert table.get("version") or data.get("version"), f"{name}.{key} needs a version id"
