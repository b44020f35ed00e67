"""PrefEval's error-type judge: the five prompt texts equal the official files byte for byte, and
the filled prompts equal the official plain replacement of the reference files."""

from __future__ import annotations

import pytest

from core.benchmarks.prefeval import judge as taxonomy
from core.judges.templates import family, template
from tests.conftest import reference

TABLES = {k: v for k, v in family("prefeval").items() if isinstance(v, dict)}


def ref_text(key: str) -> str:
    return reference("prefeval", TABLES[key]["reference"]).read_bytes().decode("utf-8")


def test_tables_are_the_system_prompt_and_the_four_checks_cited():
    assert set(TABLES) == {"system", *taxonomy.CHECKS}
    for key, table in TABLES.items():
        assert table["verbatim"] is True and table["licence"] == "CC BY-NC 4.0", key
        assert table["source"].startswith("PrefEval @50795054"), key


@pytest.mark.parametrize("key", sorted(TABLES))
def test_prompt_equals_reference_file(key):
    assert template("prefeval", key).fields["text"] == ref_text(key)


def test_known_byte_traps():
    assert ref_text("hallucination").endswith("</answer>\n")
    assert not ref_text("violation").endswith("\n")
    assert "reponse" in ref_text("system") and not ref_text("system").endswith((".", "\n"))


def official_fill(text: str, pairs: list[tuple[str, str]]) -> str:
    """llm_based_evaluation_errortypes.py: str.replace of each literal placeholder, in order."""
    for name, value in pairs:
        text = text.replace("{" + name + "}", value)
    return text


# A response that itself holds a placeholder: the official order decides what it becomes.
RESPONSE = "Try the night market. {question} {preference}"
PREF, QUESTION, RESTATED = "I avoid street food.", "Where should I eat in Bangkok?", "you avoid street food"


def test_filled_prompts_equal_the_official_replacement():
    got = {
        c: taxonomy.check_prompt(c, preference=PREF, question=QUESTION, response=RESPONSE, restatement=RESTATED)
        for c in taxonomy.CHECKS
    }
    assert got["acknowledge"] == official_fill(
        ref_text("acknowledge"), [("end_generation", RESPONSE), ("question", QUESTION)]
    )
    assert got["violation"] == official_fill(
        ref_text("violation"), [("preference", PREF), ("question", QUESTION), ("end_generation", RESPONSE)]
    )
    assert got["hallucination"] == official_fill(
        ref_text("hallucination"), [("preference", PREF), ("assistant_restatement", RESTATED)]
    )
    assert got["helpful"] == official_fill(
        ref_text("helpful"), [("preference", PREF), ("question", QUESTION), ("end_generation", RESPONSE)]
    )
    # the acknowledgement fills the response first, so its "{question}" becomes the question too
    assert f"Try the night market. {QUESTION} {{preference}}" in got["acknowledge"]
