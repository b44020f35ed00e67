"""The longmemeval judge's prompts are LongMemEval's reference files byte for byte, chosen per
question type as PROTOCOL.md §2.1 states evaluate_qa.py chooses them, and filled by str.format."""

from __future__ import annotations

import pytest

from core.benchmarks.longmemeval.format import QUESTION_TYPES
from core.benchmarks.longmemeval.judge import judge_prompt, prompt_key
from core.judges.templates import family, template
from tests.conformance.longmemeval_reference import ref_text
from tests.conftest import reference

TABLES = [k for k, v in family("longmemeval").items() if isinstance(v, dict)]


@pytest.mark.parametrize("key", TABLES)
def test_prompt_text_is_the_reference_file_byte_for_byte(key):
    t = template("longmemeval", key)
    assert t.verbatim and t.fields["text"] == ref_text(t.fields["reference"])
    assert "9e0b455" in t.source and "9e0b455" in reference("longmemeval", "SOURCE.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("qtype", QUESTION_TYPES)
@pytest.mark.parametrize("abstention", [False, True])
def test_each_type_gets_its_own_reference_file(qtype, abstention):
    official = ref_text(f"src/evaluation/prompts/judge_{'abstention' if abstention else qtype}.txt")
    question, answer, hypothesis = "When {did} I move?", 12, " In May.\n"
    # PROTOCOL.md §2.1: template.format(question, answer, hypothesis), values unmodified, str() semantics
    assert judge_prompt(qtype, abstention, question, answer, hypothesis) == official.format(
        question, answer, hypothesis
    )
    assert template("longmemeval", prompt_key(qtype, abstention)).fields["text"] == official


def test_every_judge_file_of_the_reference_is_used():
    folder = reference("longmemeval", "src", "evaluation", "prompts")
    used = {template("longmemeval", k).fields["reference"].rsplit("/", 1)[1] for k in TABLES}
    # three types share one template: their three files are byte-identical (PROTOCOL.md §0)
    shared = {f"judge_{t}.txt" for t in ("single-session-user", "single-session-assistant", "multi-session")}
    assert len({(folder / name).read_bytes() for name in shared}) == 1
    assert {p.name for p in folder.glob("judge_*.txt")} == used | shared
