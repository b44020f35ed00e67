"""The hooks through which generic code reaches a benchmark's own code without importing it: the
choice judge finds a benchmark's answer-format scorer, embed-ahead its extra RAG texts, and the
prompt families are found by name in the benchmark's folder."""

from __future__ import annotations

import pytest

from core import benchmark as benchmarks
from core.benchmarks.personamem import answers as personamem_answers
from core.benchmarks.prefeval import answers as prefeval_answers
from core.benchmarks.prefeval import methods as prefeval_methods
from core.judges import templates
from core.judges.choice import benchmark_scorer
from core.methods import prompts
from core.methods.embed_ahead import benchmark_rag_texts


def test_the_declared_answer_formats_are_the_ones_the_methods_write():
    declared = {e.name: e.target for b in benchmarks.installed() for e in b.answer_formats}
    assert declared == {
        prefeval_answers.MCQ_ANSWER_FORMAT: "core.benchmarks.prefeval.answers:score",
        personamem_answers.ANSWER_FORMAT: "core.benchmarks.personamem.answers:score",
        "mcq-personamem-v2": "core.benchmarks.personamem_v2.answers:score",
        "mcq-personamem-v2-recorded": "core.benchmarks.personamem_v2.answers:score_recorded",
    }


def test_the_choice_judge_finds_a_benchmarks_scorer_and_keeps_its_own_reading_otherwise():
    assert benchmark_scorer("mcq-prefeval") is prefeval_answers.score
    assert benchmark_scorer("mcq-personamem") is personamem_answers.score
    assert [benchmark_scorer(f) for f in ("mcq", "tf", "open")] == [None, None, None]


def test_embed_ahead_finds_the_rag_texts_of_the_users_benchmark_only():
    assert benchmark_rag_texts("prefeval") is prefeval_methods.rag_texts
    assert [benchmark_rag_texts(s) for s in ("sample", "native", "personamem", "longmemeval")] == [None] * 4


@pytest.mark.parametrize(
    ("kind", "family", "where"),
    [
        ("method", "prefeval", "core.benchmarks.prefeval:templates.toml"),
        ("judge", "prefeval", "core.benchmarks.prefeval:prompts.toml"),
        ("method", "personamem", "core.benchmarks.personamem:templates.toml"),
        ("method", "recentering", "core.benchmarks.recentering:templates.toml"),
        ("judge", "recentering", "core.benchmarks.recentering:prompts.toml"),
        ("method", "longmemeval", "core.benchmarks.longmemeval:templates.toml"),
        ("judge", "longmemeval", "core.benchmarks.longmemeval:prompts.toml"),
    ],
)
def test_moved_prompt_families_are_found_by_name(kind, family, where):
    assert benchmarks.prompt_file(kind, family) == where
    loaded = prompts.family(family) if kind == "method" else templates.family(family)
    assert loaded  # read from the benchmark's folder
