"""PrefEval error taxonomy (Zhao et al., 2025; not among the seed papers, so the check prompts in
``prompts/prefeval.toml`` are prefscope's own wording). Four yes/no checks, one judge call each:

    acknowledged?  hallucinated?  violated?  helpful?

and one label from them (:func:`classify`, precedence is prefscope's reading of PrefEval):

1. acknowledged and hallucinated          -> hallucinated violation (states a preference the user does not hold)
2. violated and not acknowledged          -> preference-unaware violation
3. violated and acknowledged (correctly)  -> inconsistency violation (knows it, breaks it anyway)
4. not helpful                            -> unhelpful
5. otherwise                              -> accurate

Judgments: one per check (score 1 yes / 0 no) and one ``label`` judgment whose score is 1 for
accurate and 0 for any error, with the label in ``extra``. If a check cannot be parsed the label
is a recorded failure.
"""

from __future__ import annotations

import asyncio
from functools import partial

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import parse_label
from core.judges.templates import template
from core.plan import Message
from core.providers.calls import Complete

CHECKS = ("acknowledge", "hallucinate", "violate", "helpful")
DIMENSION = {"acknowledge": "acknowledged", "hallucinate": "hallucinated", "violate": "violated", "helpful": "helpful"}
LABELS = ("preference-unaware violation", "hallucinated violation", "inconsistency violation", "unhelpful", "accurate")
YES_NO = {"yes": ("y", "true"), "no": ("n", "false")}


def classify(acknowledged: bool, hallucinated: bool, violated: bool, helpful: bool) -> str:
    if acknowledged and hallucinated:
        return "hallucinated violation"
    if violated:
        return "inconsistency violation" if acknowledged else "preference-unaware violation"
    if not helpful:
        return "unhelpful"
    return "accurate"


class TaxonomyJudge:
    kind = "taxonomy"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"taxonomy:{model_id}"

    @property
    def version(self) -> str:
        return template("prefeval", "shared").version

    def prompt(self, check: str, preference: str, query: str, response: str) -> list[Message]:
        shared = template("prefeval", "shared")
        question = template("prefeval", check).fields["question"]
        return messages(
            shared.fields["system"],
            shared.text("user", preference=preference, query=query, response=response, question=question),
        )

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        preference = item_preference(item)
        if not preference:
            return [
                missing_input(
                    kind=self.kind,
                    dimension="label",
                    judge_model=self.spec.id,
                    version=self.version,
                    reason="the query has no target preference",
                    scale=(0.0, 1.0),
                )
            ]
        checks = list(await asyncio.gather(*(self._check(c, preference, item, complete) for c in CHECKS)))
        return [*checks, self.label(checks)]

    async def _check(self, check: str, preference: str, item: JudgeInput, complete: Complete) -> Judgment:
        completion = await complete(self.spec, self.prompt(check, preference, item.query.text, item.response_text))
        parsed = parse_label(completion.text, YES_NO, key=("answer",)) if completion.ok else None
        score = None if parsed is None or not parsed.ok else (1.0 if parsed.value == "yes" else 0.0)
        return to_judgment(
            kind=self.kind,
            dimension=DIMENSION[check],
            spec=self.spec,
            version=self.version,
            completion=completion,
            parsed=parsed,
            scale=(0.0, 1.0),
            score=score,
        )

    def label(self, checks: list[Judgment]) -> Judgment:
        judgment = partial(
            Judgment,
            kind=self.kind,
            dimension="label",
            judge_model=self.spec.id,
            prompt_version=self.version,
            temperature=self.spec.params.temperature,
            scale_min=0.0,
            scale_max=1.0,
            raw="",
        )
        failed = [c.dimension for c in checks if not c.parse_ok]
        if failed:
            return judgment(score=None, rationale="", parse_ok=False, error=f"check(s) {failed} failed; no label")
        v = {c.dimension: bool(c.score) for c in checks}
        name = classify(v["acknowledged"], v["hallucinated"], v["violated"], v["helpful"])
        why = ", ".join(f"{k}={'yes' if b else 'no'}" for k, b in v.items())
        return judgment(
            score=1.0 if name == "accurate" else 0.0,
            rationale=f"{name} ({why})",
            parse_ok=True,
            extra={"label": name, **v},
        )
