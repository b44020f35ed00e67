"""OpenAI Batch files: input joined with output and error files on custom_id."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from core.formats import FormatError
from core.results import detect_result_format, load_results
from tests.conftest import reference

JOB = Path(__file__).parents[2] / "fixtures" / "openai_batch" / "job"


def by_id(answers):
    return {a.meta["custom_id"]: a for a in answers}


def test_a_job_folder_joins_requests_answers_and_failures():
    assert detect_result_format(JOB) == "openai-batch"
    result = load_results(JOB)
    got = by_id(result.answers)
    assert sorted(got) == ["exp1:ana:tea-1:e1", "exp1:ana:tea-1:e2", "exp1:bo:run-2:e1", "plain-7"]
    ok = got["exp1:ana:tea-1:e1"]
    assert (ok.answer, ok.model, ok.user_id, ok.query_id, ok.meta["epoch"]) == (
        "Try rooibos: no caffeine.",
        "gpt-4o-mini-2024-07-18",
        "ana",
        "tea-1",
        1,
    )
    assert ok.meta["usage"] == {"prompt_tokens": 35, "completion_tokens": 7, "total_tokens": 42}
    assert ok.messages is not None and [(m.role, m.content) for m in ok.messages] == [
        ("system", "Be kind."),  # developer -> system
        ("user", "I dislike caffeine."),
        ("assistant", "Got it."),
        ("user", "What should I drink tonight?"),  # content parts flattened
    ]
    failed = got["exp1:bo:run-2:e1"]
    assert failed.answer == "" and failed.meta["status"] == "error"
    assert failed.error == "HTTP 429: Rate limit reached for requests."
    assert failed.model == "gpt-4o-mini"  # the request's model: no response body names one
    plain = got["plain-7"]
    assert (plain.user_id, plain.query_id) == ("openai-batch-plain-7", "q")
    assert plain.fallback is not None and plain.fallback.queries[0].text == "Name a quiet city."


def test_an_output_file_alone_imports_with_unknown_prompts_and_an_input_alone_is_refused():
    result = load_results(JOB / "output.jsonl")
    assert len(result.answers) == 3 and all(a.messages is None for a in result.answers)
    assert any("prompts are unknown" in n for n in result.notes)
    with pytest.raises(FormatError, match="requests.jsonl: a Batch input file holds requests"):
        load_results(JOB / "requests.jsonl", format="openai-batch")


def test_a_truncated_line_names_file_and_line(tmp_path):
    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    text = (job / "output.jsonl").read_text().splitlines()
    (job / "output.jsonl").write_text(text[0] + "\n" + text[1][:50] + "\n")
    with pytest.raises(FormatError, match=r"output\.jsonl: line 2: invalid JSON"):
        load_results(job)


def test_a_folder_whose_output_file_starts_broken_names_what_it_read(tmp_path):
    job = tmp_path / "job"
    job.mkdir()
    (job / "output.jsonl").write_text('{"custom_id": "a", "response": \n')
    with pytest.raises(FormatError, match=r"no Batch output or error file .*read, not Batch results: output\.jsonl"):
        load_results(job, format="openai-batch")


def test_the_reference_examples_import_with_every_answer_and_failure(tmp_path):
    examples = reference("formats", "openai_formats", "examples")
    job = tmp_path / "job"
    job.mkdir()
    for name in ("batch_input.jsonl", "batch_output.jsonl", "batch_errors.jsonl"):
        shutil.copy(examples / name, job / name)
    assert detect_result_format(job) == "openai-batch"
    got = by_id(load_results(job).answers)
    assert {k: (a.meta["status"], a.answer) for k, a in got.items()} == {
        "run42:u-17:travel-001:e1": (
            "ok",
            "Since you avoid overnight flights, take the daytime departure that lands in Lisbon in the evening.",
        ),
        "run42:u-18:food-002:e1": ("ok", "Try bacalhau a bras, pasteis de nata and caldo verde."),
        "run42:u-19:books-003:e1": ("expired", ""),
        "run42:u-20:music-004:e1": ("error", ""),
    }
    assert got["run42:u-19:books-003:e1"].error == (
        "batch_expired: This request could not be executed before the completion window expired."
    )
    assert got["run42:u-20:music-004:e1"].error == "HTTP 400: Invalid 'max_tokens': integer below minimum value."
    travel = got["run42:u-17:travel-001:e1"]
    assert (travel.user_id, travel.query_id, travel.model) == ("u-17", "travel-001", "gpt-4o-mini-2024-07-18")
    assert travel.meta["usage"]["total_tokens"] == 83 and travel.messages is not None and len(travel.messages) == 4
