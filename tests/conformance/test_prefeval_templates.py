"""PrefEval's prompts in core/methods/templates/prefeval.toml equal the official text byte for byte.

Each table names its file in the shared reference copy (``reference``); the comparison reads that
file as bytes → UTF-8 and never strips, so a lost leading newline or trailing space fails here.
"""

from __future__ import annotations

import pytest

from core.methods import prompts
from tests.conftest import reference

TABLES = prompts.family("prefeval")
FILES = sorted(k for k, t in TABLES.items() if t.get("reference", "").endswith(".txt"))


def test_every_prefeval_template_is_verbatim_and_cited():
    for key, table in TABLES.items():
        assert table["verbatim"] is True, key
        assert table["licence"] == "CC BY-NC 4.0", key
        assert table["source"].startswith("PrefEval @50795054"), key
        assert table.get("reference"), key


@pytest.mark.parametrize("key", FILES)
def test_template_equals_reference_file(key):
    path = reference("prefeval", TABLES[key]["reference"])
    assert prompts.template("prefeval", key)["text"] == path.read_bytes().decode("utf-8")


def test_system_prompt_is_the_config_value():
    text = reference("prefeval", "config.yaml").read_bytes().decode("utf-8")
    line = next(x for x in text.splitlines() if x.startswith("system_prompt:"))
    assert line == f"system_prompt: '{prompts.text('prefeval', 'system_prompt')}'"


def test_classification_rag_pieces_match_the_generation_ones():
    """PrefEval stores the RAG exchange strings twice; prefscope keeps one copy."""
    for name in (
        "rag_exchange_user_preference",
        "rag_exchange_assistant_preference_reply",
        "rag_exchange_role_content",
    ):
        mcq = reference("prefeval", "classification_task", "prompts", f"{name}.txt").read_bytes().decode("utf-8")
        assert prompts.template("prefeval", name)["text"] == mcq
