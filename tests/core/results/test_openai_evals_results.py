"""OpenAI Evals {item, sample} JSON Lines: sample.output_text answers an item's question."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.formats import FormatError
from core.results import detect_result_format, load_results
from tests.conftest import reference

ITEMS = Path(__file__).parents[2] / "fixtures" / "openai_evals" / "items.jsonl"


def test_items_with_samples_become_answers_and_items_without_are_counted():
    assert detect_result_format(ITEMS) == "openai-evals"
    result = load_results(ITEMS)
    assert [(a.user_id, a.model, a.query_text, a.answer) for a in result.answers] == [
        ("openai-evals-q-1", "gpt-4.1-mini", "Suggest a weekend hobby.", "Try pottery at a local studio."),
        ("openai-evals-q-2", "gpt-4.1-mini", "Pick a film for tonight.", "Paddington 2."),
    ]
    assert any("skipped 1 item without a sample" in n for n in result.notes)
    hobby = result.answers[0].fallback
    assert hobby is not None and hobby.preferences[0].text == "prefers indoor activities"
    assert hobby.queries[0].answer == "pottery"


def test_a_sample_without_output_text_names_file_and_line(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text(
        '{"item": {"id": 1, "question": "q"}, "sample": {"model": "m", "output_text": "a"}}\n'
        '{"item": {"id": 2, "question": "q"}, "sample": {"model": "m"}}\n'
    )
    with pytest.raises(FormatError, match=r"e\.jsonl: line 2: sample\.output_text: missing"):
        load_results(path)


def test_the_reference_example_imports_both_samples():
    path = reference("formats", "openai_formats", "examples", "evals_items_with_samples.jsonl")
    assert detect_result_format(path) == "openai-evals"
    answers = load_results(path).answers
    assert [(a.user_id, a.model, a.answer) for a in answers] == [
        (
            "openai-evals-travel-001",
            "gpt-4o-mini",
            "Since you avoid overnight flights, take the daytime departure that lands in Lisbon in the evening.",
        ),
        ("openai-evals-food-002", "gpt-4o-mini", "Try bacalhau a bras, pasteis de nata and caldo verde."),
    ]
    assert answers[1].query_text == "Recommend three dishes I must try in Lisbon."
