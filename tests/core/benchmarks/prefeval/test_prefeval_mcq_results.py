"""PrefEval MCQ results (benchmark_classification.py output) imported so the choice judge reads them
as PrefEval did: the hand-made files in tests/fixtures/prefeval_results/ (a Llama file, read as
stored, and a Claude file, whose replies PrefEval stored with the `<choice>` prefill prepended).

Verdicts hand-worked from reference PROTOCOL.md §5.4 (prepend `<choice>` for mistral/claude, the
first `<choice>` element's single string, the first of A-D in it; nothing read = wrong)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from core.benchmarks.prefeval.answers import MCQ_ANSWER_FORMAT, score
from core.benchmarks.prefeval.results import load
from core.formats.errors import FormatError
from core.judges.base import JudgeInput
from core.judges.choice import ChoiceJudge
from core.model import Query
from core.plan import Message, PromptPlan, PromptStep

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "prefeval_results"
TOPIC = FIXTURES / "explicit" / "mcq_results" / "zero-shot" / "fixture_trips"
LLAMA = TOPIC / "llama370b_fixture_trips_0interturn.json"
CLAUDE = TOPIC / "claude3hk_fixture_trips_0interturn.json"
#: Per record, hand-worked: Llama (no prefill) and Claude (prefill) right (1) or wrong (0).
#:   0 "<choice>B</choice>", gold B: B, right for both
#:   1 "<choice>C" (unclosed: runs to the end), gold C: C, right for both
#:   2 "I cannot choose." / "<choice>I cannot choose.": no element / no capital A-D: wrong
#:   3 "A" / "<choice>A", gold A: Llama has no tag (wrong), Claude's prefill makes it A (right)
#:   4 "<choice>Based on your preference, A", gold A: "Based" reads as B, wrong for both
LLAMA_VERDICTS = [1.0, 1.0, 0.0, 0.0, 0.0]
CLAUDE_VERDICTS = [1.0, 1.0, 0.0, 1.0, 0.0]


def _judge(answer) -> list[float | None]:
    """The choice judge on an imported answer, on its fallback user's MCQ query."""
    assert answer.fallback is not None
    query = next(q for q in answer.fallback.queries if q.id == answer.fallback_query_id)
    plan = PromptPlan(
        method=answer.method,
        answer_format=answer.answer_format or "open",
        steps=[PromptStep(name="imported", messages=answer.messages or [])],
    )
    item = JudgeInput(answer.fallback, query, 1, plan, answer.answer, f"imported:{answer.model}")
    return [j.score for j in asyncio.run(ChoiceJudge().judge(item, None))]  # type: ignore[arg-type]


def test_an_mcq_file_records_its_answer_format_options_prefill_and_verdicts():
    llama = load(LLAMA).answers
    assert len(llama) == 5
    first = llama[0]
    assert first.answer_format == MCQ_ANSWER_FORMAT
    assert first.match == {
        "preference": "I never eat spicy food; chili makes me ill.",
        "question": "Where should I eat in Chengdu tonight?",
        "kind": "mcq",
    }
    assert first.method == "prefeval-zero-shot" and first.turns == 0 and first.model == "llama370b"
    # no prefill for a Llama model: the reply as stored, the messages end with the question
    assert first.answer == "<choice>B</choice>" and first.messages is not None
    assert first.messages[-1].role == "user"
    assert "\nA. A famous hot-pot restaurant.\nB. A mild Cantonese dim sum house.\n" in first.messages[-1].content
    # the fallback MCQ query is the one the model saw: the file's order and its correct_idx
    query = first.fallback.queries[0]  # type: ignore[union-attr]
    assert (query.kind, query.answer, query.options[1]) == ("mcq", "B", "A mild Cantonese dim sum house.")
    assert [_judge(a) for a in llama] == [[v] for v in LLAMA_VERDICTS]
    # PrefEval's own verdicts (choice vs correct_idx) come along as recorded scores
    assert [[r.score for r in a.recorded] for a in llama] == [[v] for v in LLAMA_VERDICTS]
    assert llama[2].recorded[0].judge == "prefeval-extract-choice" and llama[2].recorded[0].raw == "null"


def test_a_claude_file_sent_the_prefill_which_prefeval_stored_prepended():
    claude = load(CLAUDE).answers
    # the reply without the prefix PrefEval added; the prefill is the messages' last, as sent
    assert [a.answer for a in claude[:4]] == ["B</choice>", "C", "I cannot choose.", "A"]
    assert all(a.messages and a.messages[-1] == Message(role="assistant", content="<choice>") for a in claude)
    assert claude[3].meta["response_to_q"] == "<choice>A"
    assert [_judge(a) for a in claude] == [[v] for v in CLAUDE_VERDICTS]
    assert [[r.score for r in a.recorded] for a in claude] == [[v] for v in CLAUDE_VERDICTS]
    # the same record lands on the same fallback user from both files (the options as shown agree)
    llama = load(LLAMA).answers
    assert [a.fallback_query_id for a in claude] == [a.fallback_query_id for a in llama]


def _item(query: Query, shown: list[str], reply: str, prefill: bool) -> JudgeInput:
    block = "\n".join(f"{'ABCD'[i]}. {o}" for i, o in enumerate(shown))
    messages = [Message(role="user", content=f"{query.text}\n    options: \n{block}\nNow pick one.")]
    if prefill:
        messages.append(Message(role="assistant", content="<choice>"))
    plan = PromptPlan(method="m", answer_format=MCQ_ANSWER_FORMAT, steps=[PromptStep(name="s", messages=messages)])
    from core.model import UserBundle

    bundle = UserBundle.model_validate({"user": {"id": "u", "name": "u"}, "queries": [query.model_dump()]})
    return JudgeInput(bundle, query, 1, plan, reply, "imported:x")


STORED = Query(id="q", kind="mcq", text="Which?", options=["w", "x", "y", "z"], answer="A")  # "w" is aligned


@pytest.mark.parametrize(
    ("reply", "prefill", "verdict", "parsed"),
    [
        ("<choice>C</choice>", False, 1.0, "C"),  # tag written out
        ("<choice>C", False, 1.0, "C"),  # unclosed tag: runs to the end
        ("I would not choose.", False, 0.0, None),  # unreadable: wrong, not left out
        ("C", False, 0.0, None),  # no tag, no prefill
        ("C", True, 1.0, "C"),  # the prefill sent: <choice> + "C"
        ("<choice>C</choice> because", True, 0.0, None),  # <choice><choice>C</choice> because: two children
    ],
)
def test_the_gold_is_the_aligned_options_letter_as_shown_not_as_stored(reply, prefill, verdict, parsed):
    # the model saw the aligned option "w" third (C); the stored query has it first (A)
    [j] = score(_item(STORED, ["y", "x", "w", "z"], reply, prefill))
    assert (j.score, j.parse_ok, j.extra["parsed"], j.extra["gold"]) == (verdict, True, parsed, "C")
    assert j.extra["gold_from"] == "shown options" and j.extra["prefilled"] is prefill


def test_without_options_in_the_messages_the_stored_letter_is_the_gold():
    plan = PromptPlan(method="m", answer_format=MCQ_ANSWER_FORMAT, steps=[PromptStep(name="s", messages=[])])
    bundle_item = _item(STORED, [], "<choice>A</choice>", False)
    item = JudgeInput(bundle_item.bundle, STORED, 1, plan, "<choice>A</choice>", "imported:x")
    [j] = score(item)
    assert (j.score, j.extra["gold"], j.extra["gold_from"]) == (1.0, "A", "stored query")


def test_a_correct_idx_that_contradicts_the_options_is_refused(tmp_path):
    records = json.loads(LLAMA.read_text())
    records[0]["correct_idx"] = "D"  # classification_task_options[0] was shown as B
    bad = tmp_path / "llama370b_fixture_trips_0interturn.json"
    bad.write_text(json.dumps(records))
    with pytest.raises(FormatError, match="correct_idx 'D' is not where classification_task_options"):
        load(bad)


def test_a_jsonl_names_how_its_replies_are_read_and_a_misspelt_reading_is_refused(tmp_path):
    from core.results import generic_jsonl

    line = {"user": "u", "query": "q", "model": "m", "answer": "B", "answer_format": "mcq-prefeval"}
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps({**line, "answer_format": "mcq-prefevl"}) + "\n")
    with pytest.raises(FormatError, match="unknown answer format 'mcq-prefevl'"):
        generic_jsonl.load(path)
    path.write_text(json.dumps(line) + "\n")
    assert generic_jsonl.load(path).answers[0].answer_format == MCQ_ANSWER_FORMAT
