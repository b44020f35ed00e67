"""LoCoMo's QA score (snap-research/locomo @ 9228632, task_eval/evaluation.py): no model call.

Prediction: the reply stripped; for a category-5 question asked with LoCoMo's own prompt
(``locomo-qa``, which offers options (a)/(b)), a one-character reply picks (a) if it contains
``a`` else (b), a three-character reply picks (a) if it contains ``(a)`` else (b), anything else is
the lower-cased reply (``get_cat_5_answer``). Score: :func:`core.benchmarks.locomo.metrics.locomo_score` (token F1
with the Porter stemmer; category 1 multi-answer F1; category 3 gold before ``;``; category 5 is
1 iff the prediction says "not mentioned" / "no information available").

A metric, not a judge model: never pooled with LLM judges (``judge_model`` ``metric:locomo``).
"""

from __future__ import annotations

from functools import partial

from core.benchmarks.locomo.format import CATEGORY_NAMES
from core.benchmarks.locomo.methods import cat5_options
from core.benchmarks.locomo.metrics import locomo_score
from core.judges.base import JudgeInput, Judgment
from core.model import Query
from core.providers.calls import Complete

#: Its "parser:"/"metric:" prefix makes the judge source "parser" (core.judges.aggregate.source_of).
JUDGE_MODEL = "metric:locomo"
VERSION = "locomo-f1-repo-9228632"
#: Category names, INFERRED from the evaluation code (it only uses the numbers): see core.benchmarks.locomo.format.
CATEGORIES = CATEGORY_NAMES
#: The order evaluation_stats.py prints categories in.
PRINT_ORDER = (4, 1, 2, 3, 5)


def cat5_prediction(reply: str, options: tuple[str, str]) -> str:
    """``get_cat_5_answer`` then ``.strip()``."""
    r = reply.strip().lower()
    if len(r) == 1:
        r = options[0] if "a" in r else options[1]
    elif len(r) == 3:
        r = options[0] if "(a)" in r else options[1]
    return r.strip()


def prediction(query: Query, reply: str, method: str) -> str:
    if query.meta.get("category") == 5 and method == "locomo-qa":
        return cat5_prediction(reply, cat5_options(query))
    return reply.strip()


def score_locomo(query: Query, reply: str, method: str) -> Judgment:
    judgment = partial(
        Judgment,
        kind="locomo",
        dimension="f1",
        raw=reply,
        judge_model=JUDGE_MODEL,
        prompt_version=VERSION,
        scale_min=0.0,
        scale_max=1.0,
    )
    category = query.meta.get("category")
    if category not in CATEGORIES:
        return judgment(
            score=None, rationale="", parse_ok=False, error=f"not a LoCoMo question (category {category!r})"
        )
    gold = query.answer or ""
    pred = prediction(query, reply, method)
    score = locomo_score(category, pred, gold)
    extra = {"category": category, "category_name": CATEGORIES[category], "prediction": pred, "gold": gold}
    rationale = f"category {category} ({CATEGORIES[category]}): {score:.3f}"
    return judgment(score=score, rationale=rationale, parse_ok=True, extra=extra)


class LocomoJudge:
    kind = "locomo"
    name = "locomo"
    applies_to = ("open",)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        return [score_locomo(item.query, item.response_text, item.plan.method)]
