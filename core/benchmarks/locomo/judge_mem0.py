"""mem0's LoCoMo scores as judges: its LLM judge (``mem0:<model>``) and its F1 and BLEU-1 as metrics
(``mem0-f1``, ``mem0-bleu1``: no model call), so a LoCoMo answer gets both numbers memory-system
papers report (LoCoMo's F1 from the ``locomo`` judge, mem0's "J" / F1 / BLEU-1 from these) out of
one database. Source: mem0ai/mem0 @ b3ede5b (Apache-2.0), ``evaluation/evals.py``,
``evaluation/metrics/llm_judge.py``, ``evaluation/metrics/utils.py``.

* ``mem0`` (LLM): one user message, mem0's ``ACCURACY_PROMPT`` verbatim (``prompts_mem0.toml``)
  filled with the question, the gold answer and the answer; temperature 0. The reply is read as
  mem0 reads it: parsed as JSON, label 1 iff its ``label`` is exactly ``"CORRECT"``, else 0. mem0
  also asks for JSON mode (``response_format``), which prefscope's model parameters do not carry;
  a reply that is not a JSON object with ``label`` is a recorded parse failure here (mem0's script
  stops on it).
* ``mem0-f1`` / ``mem0-bleu1``: :func:`core.benchmarks.locomo.metrics_mem0.mem0_f1` /
  :func:`~core.benchmarks.locomo.metrics_mem0.mem0_bleu1` of the answer against the gold, as given
  (mem0 does not map category-5 answers).

``evals.py`` skips category-5 questions; so do these judges (a recorded failure naming the reason,
never a 0). A query without a gold answer is refused the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from core.benchmarks.locomo.format import ADVERSARIAL_CATEGORY, CATEGORY_NAMES
from core.benchmarks.locomo.metrics_mem0 import mem0_bleu1, mem0_f1, tokenizer_name
from core.judges.base import JudgeInput, Judgment
from core.judges.common import judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import Parsed
from core.judges.templates import template
from core.model import Query
from core.providers.calls import Complete

KIND = "mem0"
DIMENSION = "accuracy"
F1_KIND, F1_DIMENSION, F1_MODEL = "mem0-f1", "f1", "metric:mem0-f1"
BLEU_KIND, BLEU_DIMENSION, BLEU_MODEL = "mem0-bleu1", "bleu1", "metric:mem0-bleu1"
METRIC_VERSION = "mem0-metrics-b3ede5b"
CORRECT = "CORRECT"


def refusal(query: Query) -> str | None:
    """Why mem0's evals.py would not score this question (None: it would)."""
    category = query.meta.get("category")
    if category == ADVERSARIAL_CATEGORY:
        return "category 5 (adversarial): mem0's evals.py skips it"
    if not query.answer:
        return "no gold answer"
    return None


def judge_prompt(question: str, gold: str, answer: str) -> str:
    return template(KIND, "accuracy").text("text", question=question, gold_answer=gold, generated_answer=answer)


def read_label(reply: str) -> tuple[float | None, str]:
    """``json.loads(reply)["label"] == "CORRECT"`` -> (1.0 / 0.0, label); (None, why) when unreadable."""
    try:
        data = json.loads(reply)
    except ValueError:
        return None, "reply is not JSON"
    if not isinstance(data, dict) or "label" not in data:
        return None, "reply has no 'label'"
    label = data["label"]
    return (1.0 if label == CORRECT else 0.0), str(label)


def _extra(query: Query) -> dict:
    category = query.meta.get("category")
    return {"category": category, "category_name": CATEGORY_NAMES.get(category) if isinstance(category, int) else None}


class Mem0Judge:
    kind = KIND
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"{KIND}:{model_id}"

    @property
    def version(self) -> str:
        return template(KIND, "accuracy").version

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        query = item.query
        why = refusal(query)
        if why is not None:
            return [
                missing_input(
                    kind=KIND, dimension=DIMENSION, judge_model=self.spec.id, version=self.version, reason=why,
                    scale=(0.0, 1.0),
                )
            ]  # fmt: skip
        prompt = judge_prompt(query.text, str(query.answer), item.response_text)
        completion = await complete(self.spec, messages(None, prompt))
        score, label = read_label(completion.text) if completion.ok else (None, "call failed")
        return [
            to_judgment(
                kind=KIND,
                dimension=DIMENSION,
                spec=self.spec,
                version=self.version,
                completion=completion,
                parsed=Parsed(score, label, score is not None, None if score is not None else label),
                scale=(0.0, 1.0),
                score=score,
                extra={**_extra(query), "label": label},
            )
        ]


def _metric(
    kind: str, dimension: str, model: str, query: Query, reply: str, fn: Callable[[object, object], float]
) -> Judgment:
    judgment = partial(
        Judgment,
        kind=kind,
        dimension=dimension,
        raw=reply,
        judge_model=model,
        prompt_version=METRIC_VERSION,
        scale_min=0.0,
        scale_max=1.0,
    )
    why = refusal(query)
    if why is not None:
        return judgment(score=None, rationale="", parse_ok=False, error=why)
    score = fn(reply, query.answer)
    extra = {**_extra(query), "gold": query.answer}
    if kind == BLEU_KIND:
        extra["tokenizer"] = tokenizer_name()
    return judgment(score=score, rationale=f"{dimension} {score:.3f}", parse_ok=True, extra=extra)


def score_f1(query: Query, reply: str) -> Judgment:
    return _metric(F1_KIND, F1_DIMENSION, F1_MODEL, query, reply, mem0_f1)


def score_bleu1(query: Query, reply: str) -> Judgment:
    return _metric(BLEU_KIND, BLEU_DIMENSION, BLEU_MODEL, query, reply, mem0_bleu1)


class Mem0F1Judge:
    kind = F1_KIND
    name = F1_KIND
    applies_to = ("open",)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return [score_f1(item.query, item.response_text)]


class Mem0Bleu1Judge:
    kind = BLEU_KIND
    name = BLEU_KIND
    applies_to = ("open",)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return [score_bleu1(item.query, item.response_text)]
