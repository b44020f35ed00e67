"""lm-eval `--log_samples` output: one answer per (task, doc_id, filter), metrics as recorded scores."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.results import detect_result_format, load_results
from core.results.model import ImportedAnswer
from tests.conftest import reference

FIXTURES = Path(__file__).parents[2] / "fixtures" / "lm_eval"
TOY = FIXTURES / "toy"
RUN = TOY / "org__toy-model"
DATE = "2026-01-02T03-04-05.000001"


def scores(answers: list[ImportedAnswer]) -> list[tuple]:
    return [(a.meta["doc_id"], r.dimension, r.score, r.judge, r.kind) for a in answers for r in a.recorded]


def test_a_run_folder_gives_one_answer_per_doc_and_filter_and_skips_loglikelihood_lines():
    assert detect_result_format(TOY) == "lm-eval"
    result = load_results(TOY)
    assert [(a.meta["task"], a.meta["doc_id"], a.meta["filter"], a.answer) for a in result.answers] == [
        ("toy_gen", 0, "strict-match", "5"),
        ("toy_gen", 0, "flexible-extract", "5"),
        ("toy_gen", 1, "strict-match", "4"),
        ("toy_gen", 1, "flexible-extract", "3"),
        ("toy_gen", 2, "strict-match", "41"),
        ("toy_gen", 2, "flexible-extract", "41"),
    ]
    assert {a.model for a in result.answers} == {"org/toy-model"}
    assert any("skipped 2 loglikelihood/multiple-choice lines" in n for n in result.notes)
    # the filter is in the dimension: strict and flexible scores of one metric never pool
    assert [s[1:3] for s in scores(result.answers)] == [
        ("exact_match,strict-match", 1.0),
        ("exact_match,flexible-extract", 1.0),
        ("exact_match,strict-match", 0.0),
        ("exact_match,flexible-extract", 1.0),
        ("exact_match,strict-match", 0.0),
        ("exact_match,flexible-extract", 0.0),
    ]
    first = result.answers[0]
    assert (first.user_id, first.query_id, first.method, first.context) == (
        "lm-eval-toy_gen-0",
        "doc-0",
        "imported",
        "imported",
    )
    assert first.messages is not None and [m.content for m in first.messages] == ["Question: What is 2+3?\nAnswer:"]
    assert first.fallback is not None and first.fallback.queries[0].text == "What is 2+3?"
    assert first.fallback.queries[0].answer == "5"  # gold from `target`


def test_a_results_file_reads_its_run_and_a_samples_file_reads_itself():
    assert detect_result_format(RUN / f"results_{DATE}.json") == "lm-eval"
    assert len(load_results(RUN / f"results_{DATE}.json").answers) == 6
    one = load_results(RUN / f"samples_toy_gen_{DATE}.jsonl")
    assert len(one.answers) == 6 and {a.model for a in one.answers} == {"org/toy-model"}


def test_without_a_results_file_the_model_is_the_folder_and_a_json_chat_prompt_is_messages():
    result = load_results(FIXTURES / "no_results")
    (a,) = result.answers
    assert a.model == "local-chat" and any("no results_" in n for n in result.notes)
    assert a.messages is not None
    assert [(m.role, m.content) for m in a.messages] == [
        ("system", "Be brief."),
        ("user", "I only eat fish on Fridays."),
        ("assistant", "Noted."),
        ("user", "Plan Friday dinner."),
    ]
    assert a.fallback is not None and a.fallback.preferences[0].text == "only eats fish on Fridays"
    assert [(r.dimension, r.score) for r in a.recorded] == [("pref_follow,none", 1.0), ("len_ok,none", 0.0)]


def _broken(tmp_path: Path, line: int, text: str) -> Path:
    run = tmp_path / "run" / "m"
    shutil.copytree(RUN, run)
    path = run / f"samples_toy_gen_{DATE}.jsonl"
    lines = path.read_text().splitlines()
    lines[line - 1] = text
    path.write_text("\n".join(lines) + "\n")
    return tmp_path / "run"


def test_a_truncated_line_names_file_and_line(tmp_path):
    root = _broken(tmp_path, 3, RUN.joinpath(f"samples_toy_gen_{DATE}.jsonl").read_text().splitlines()[2][:40])
    with pytest.raises(Exception, match=rf"m/samples_toy_gen_{DATE}\.jsonl: line 3: invalid JSON"):
        load_results(root)


def test_a_line_without_doc_id_names_file_and_line(tmp_path):
    root = _broken(tmp_path, 2, '{"doc": {}, "filter": "none", "filtered_resps": ["x"]}')
    with pytest.raises(Exception, match=rf"samples_toy_gen_{DATE}\.jsonl: line 2: doc_id: missing"):
        load_results(root)


@pytest.mark.parametrize(
    ("variant", "model", "chat"),
    [("api_chat", "openai/gpt-4o-mini", True), ("hf_local", "Qwen/Qwen2.5-0.5B-Instruct", False)],
)
def test_the_reference_examples_import_with_every_answer_and_score(variant, model, chat):
    folder = reference("formats", "lm_eval", "examples", variant)
    assert detect_result_format(folder) == "lm-eval"
    result = load_results(folder)
    assert [(a.meta["doc_id"], a.model) for a in result.answers] == [(0, model), (1, model)]
    assert [a.answer for a in result.answers] == [
        "Take the daytime flight that lands in Lisbon in the evening; no red-eye needed.",
        "Try bacalhau a bras, pasteis de nata and caldo verde.",
    ]
    assert scores(result.answers) == [
        (0, "pref_follow,none", 1.0, "lm-eval", "lm-eval"),
        (1, "pref_follow,none", 0.0, "lm-eval", "lm-eval"),
    ]
    first = result.answers[0]
    assert first.messages is not None
    if chat:
        assert [m.role for m in first.messages] == ["user", "assistant", "user"]
        assert first.query_text == "What's a good way to get from Boston to Lisbon next month?"
    else:
        assert len(first.messages) == 1 and first.messages[0].content.startswith("<|im_start|>user\n")
        assert first.query_text == "What's a good way to get from Boston to Lisbon next month?"
    assert first.fallback is not None and first.fallback.queries[0].answer == "never flies overnight"
