"""Every CUPID template table with an ``official`` origin equals the official string byte for byte
(after the brace convention), and the matcher's system prompt rebuilds the rendered file."""

from __future__ import annotations

import re

import pytest

from tests.conformance.cupid_reference import (
    COMMIT,
    JUDGE_TEMPLATES,
    METHOD_TEMPLATES,
    brace_convention,
    official_string,
    official_tables,
    ref_text,
)

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_+ ]*)\}")


def _fields(table: dict) -> dict[str, str]:
    """Template field -> official key: ``text`` for method tables, system/user for judge tables."""
    if "text" in table:
        return {"text": table["official"].get("key", "")}
    return dict(table["official"]["fields"])


def _cases():
    for path in (METHOD_TEMPLATES, JUDGE_TEMPLATES):
        for key, table in official_tables(path):
            for field, official_key in _fields(table).items():
                yield pytest.param(table, field, official_key, id=f"{path.parent.name}:{key}.{field}")


@pytest.mark.parametrize("table,field,official_key", list(_cases()))
def test_template_equals_official(table, field, official_key):
    official = dict(table["official"])
    assert official["repo"] == "kixlab/CUPID" and official["commit"] == COMMIT
    if official_key:
        official["key"] = official_key
    else:
        official.pop("key", None)
    expected = official_string(official)
    if official["path"].endswith(".yaml"):  # the code calls .format on YAML strings, not on the .txt pieces
        expected = brace_convention(expected, PLACEHOLDER.findall(expected))
    assert table[field] == expected


def test_every_official_cupid_prompt_is_covered():
    covered = {t["official"]["path"] for p in (METHOD_TEMPLATES, JUDGE_TEMPLATES) for _, t in official_tables(p)}
    assert {
        "prompts/evaluation/preference_inferrer.yaml",
        "prompts/evaluation/response_generator.yaml",
        "utils/prompts/interaction_log_session_header.txt",
        "utils/prompts/interaction_log_message.txt",
        "utils/prompts/interaction_log_session_separator.txt",
    } <= covered


def test_matcher_system_prompt_equals_the_rendered_file():
    from core.benchmarks.cupid.judge_matching import matcher_system

    examples = ref_text("evaluation", "modules", "prompts", "preference_matcher_examples_rendered.txt")
    assert examples.count("#### Preference\n\n") == 8 and examples.endswith("```\n\n---")
    assert matcher_system() == ref_text("evaluation", "modules", "prompts", "preference_matcher_system_rendered.txt")


def test_judge_prompts_are_covered():
    covered = {t["official"]["path"] for _, t in official_tables(JUDGE_TEMPLATES)}
    assert covered == {
        "prompts/evaluation/response_judger.yaml",
        "prompts/evaluation/preference_matcher.yaml",
        "evaluation/modules/prompts/preference_matcher_examples_rendered.txt",
        "prompts/synthesis/preference_decomposer.yaml",
    }
