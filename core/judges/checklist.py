"""CUPID generation judge (seeds/003 App. A.2, Figure 16, verbatim): a 1–10 score of how well a
response satisfies the gold contextual preference, given the preference's atomic checklist.

The checklist is the query's own (``query.checklist``, as CUPID ships it); when a dataset has
none, it is first decomposed from the preference with the decomposer of
:mod:`core.judges.preference_matching` and stored in the judgment's ``extra``.
"""

from __future__ import annotations

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, numbered, to_judgment
from core.judges.parsing import parse_score
from core.judges.preference_matching import decompose
from core.judges.templates import template
from core.plan import Message
from core.providers.calls import Complete

SCALE = (1.0, 10.0)


class ChecklistJudge:
    kind = "checklist"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"checklist:{model_id}"

    @property
    def version(self) -> str:
        return template("cupid", "checklist_judge").version

    def prompt(self, preference: str, checklist: list[str], request: str, response: str) -> list[Message]:
        t = template("cupid", "checklist_judge")
        system = t.text("system", preference=preference, checklist=numbered(checklist))
        return messages(system, t.text("user", user_request=request, ai_response=response))

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        preference = item.query.gold_preference or item_preference(item)
        if not preference:
            return [
                missing_input(
                    kind=self.kind,
                    dimension="preference",
                    judge_model=self.spec.id,
                    version=self.version,
                    reason="the query has no gold preference",
                    scale=SCALE,
                )
            ]
        checklist = list(item.query.checklist)
        extra: dict = {"checklist": checklist, "checklist_source": "dataset"}
        if not checklist:
            decomposed = await decompose(preference, self.spec, complete)
            if not decomposed.ok:
                return [
                    missing_input(
                        kind=self.kind,
                        dimension="preference",
                        judge_model=self.spec.id,
                        version=self.version,
                        scale=SCALE,
                        reason=f"no checklist, and decomposing the preference failed: {decomposed.error}",
                    )
                ]
            checklist = decomposed.items
            extra = {
                "checklist": checklist,
                "checklist_source": "decomposed",
                "decompose_raw": decomposed.raw,
                "decompose_version": decomposed.version,
            }
        completion = await complete(self.spec, self.prompt(preference, checklist, item.query.text, item.response_text))
        parsed = parse_score(completion.text, *SCALE) if completion.ok else None
        return [
            to_judgment(
                kind=self.kind,
                dimension="preference",
                spec=self.spec,
                version=self.version,
                completion=completion,
                parsed=parsed,
                scale=SCALE,
                extra=extra,
            )
        ]
