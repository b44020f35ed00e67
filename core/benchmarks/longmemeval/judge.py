"""LongMemEval's QA judge, as the official code runs it (xiaowu0162/LongMemEval @ 9e0b455,
``src/evaluation/evaluate_qa.py``; prompts verbatim in ``prompts.toml`` next to it).

Prompt choice (``get_anscheck_prompt``): a question whose id contains ``_abs`` -> the abstention
prompt, whatever its type; else by ``question_type``: single-session-user / -assistant and
multi-session share one prompt, temporal-reasoning, knowledge-update and
single-session-preference (the gold answer is the rubric) have their own; any other type is not
judged (the official code raises). Filled with ``template.format(question, answer, hypothesis)``.

Call: one user message, no system message, temperature 0, max_tokens 10. Reading (the main
block): ``label = 'yes' in reply.strip().lower()``, nothing else ("Yes." -> 1, "No" -> 0,
"yesterday" -> 1, "" -> 0). The judgment is accuracy 0/1 with the raw reply kept; a failed call
is a recorded failure, never a 0. Metrics (per type, task-averaged, abstention apart):
:mod:`core.benchmarks.longmemeval.metrics`.
"""

from __future__ import annotations

from core.benchmarks.longmemeval.format import QUESTION_TYPES, is_abstention
from core.judges.base import JudgeInput, Judgment
from core.judges.common import judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import Parsed
from core.judges.templates import template
from core.model import Query
from core.providers.calls import Complete

KIND = "longmemeval"
DIMENSION = "accuracy"
#: evaluate_qa.py: ``max_tokens=10``, ``temperature=0``, ``n=1``.
MAX_TOKENS = 10
#: question type -> table of prompts.toml (abstention overrides every type).
PROMPT_KEY = {
    "single-session-user": "default",
    "single-session-assistant": "default",
    "multi-session": "default",
    "temporal-reasoning": "temporal-reasoning",
    "knowledge-update": "knowledge-update",
    "single-session-preference": "single-session-preference",
}
assert set(PROMPT_KEY) == set(QUESTION_TYPES)


def question_id(query: Query) -> str:
    qid = query.meta.get("question_id")
    return qid if isinstance(qid, str) else query.id


def prompt_key(question_type: str, abstention: bool) -> str:
    """The prompt table for one question; KeyError for a type the official code does not judge."""
    return "abstention" if abstention else PROMPT_KEY[question_type]


def judge_prompt(question_type: str, abstention: bool, question: str, answer: object, hypothesis: str) -> str:
    return template(KIND, prompt_key(question_type, abstention)).fields["text"].format(question, answer, hypothesis)


def says_yes(reply: str) -> bool:
    """evaluate_qa.py: ``'yes' in response.strip().lower()``."""
    return "yes" in reply.strip().lower()


class LongMemEvalJudge:
    kind = KIND
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature, max_tokens=MAX_TOKENS)
        self.name = f"{KIND}:{model_id}"

    @property
    def version(self) -> str:
        return template(KIND, "default").version

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        query = item.query
        qtype = query.meta.get("question_type")
        abstention = is_abstention(question_id(query))
        if qtype not in PROMPT_KEY or query.answer is None:
            reason = (
                "not a LongMemEval question (no gold answer)"
                if qtype in PROMPT_KEY
                else f"not a LongMemEval question (question_type {qtype!r})"
            )
            return [
                missing_input(
                    kind=KIND, dimension=DIMENSION, judge_model=self.spec.id, version=self.version, reason=reason
                )
            ]
        key = prompt_key(qtype, abstention)
        prompt = judge_prompt(qtype, abstention, query.text, query.answer, item.response_text)
        completion = await complete(self.spec, messages(None, prompt))
        label = says_yes(completion.text) if completion.ok else False
        score = 1.0 if label else 0.0
        extra = {"question_type": qtype, "abstention": abstention, "prompt": key, "yes": label}
        return [
            to_judgment(
                kind=KIND,
                dimension=DIMENSION,
                spec=self.spec,
                version=self.version,
                completion=completion,
                parsed=Parsed(
                    score, f"{'yes' if label else 'no'} ({qtype}{', abstention' if abstention else ''})", True
                ),
                scale=(0.0, 1.0),
                score=score,
                extra=extra,
            )
        ]
