"""CUPID generation judge exactly as the official code (github.com/kixlab/CUPID @ a8560cab,
evaluation/modules/response_judger.py, pipeline/result.py): a 1–10 score of how well a response
satisfies the gold contextual preference, given its checklist as ``- item`` lines.

Scoring follows CUPID, not prefscope's strict parser: the text after ``### Evaluation Score`` is
normalised by :func:`core.benchmarks.cupid.parsing.parse_cupid_score`; a missing heading, an unreadable
value or a failed judge call is a score of 0 that COUNTS in the average (``extra["cupid_status"]``
says which). The checklist is the query's own (CUPID ships one); for datasets without one it is
first decomposed with the repo's decomposer (prefscope's extension).
"""

from __future__ import annotations

from core.benchmarks.cupid.judge_matching import decompose
from core.benchmarks.cupid.parsing import cupid_score_text, parse_cupid_score
from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input
from core.judges.templates import template
from core.plan import Message
from core.providers.calls import Complete

SCALE = (1.0, 10.0)


def bulleted(items: list[str]) -> str:
    """A checklist as ``- item`` lines, as CUPID's response judge shows it."""
    return "\n".join(f"- {text}" for text in items)


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
        # CUPID formats both templates with the same four values.
        values = {
            "preference": preference,
            "checklist": bulleted(checklist),
            "user_request": request,
            "ai_response": response,
        }
        return messages(t.text("system", **values), t.text("user", **values))

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        preference = item.query.gold_preference or item_preference(item)
        if not preference:
            return [self._missing("the query has no gold preference")]
        checklist = list(item.query.checklist)
        extra: dict = {
            "checklist": checklist,
            "checklist_source": "dataset",
            "instance": f"{item.bundle.user.id}/{item.query.id}",
        }
        if not checklist:
            decomposed = await decompose(preference, self.spec, complete)
            if not decomposed.ok:
                return [self._missing(f"no checklist, and decomposing the preference failed: {decomposed.error}")]
            checklist = decomposed.items
            extra |= {
                "checklist": checklist,
                "checklist_source": "decomposed",
                "decompose_raw": decomposed.raw,
                "decompose_version": decomposed.version,
            }
        completion = await complete(self.spec, self.prompt(preference, checklist, item.query.text, item.response_text))
        if not completion.ok:
            score, status, error = 0.0, "judge_error", f"judge call failed (CUPID scores 0): {completion.error}"
        elif cupid_score_text(completion.text) is None:
            score, status, error = 0.0, "no_score_heading", None
        else:
            score, status, error = parse_cupid_score(completion.text), "ok", None
        return [
            Judgment(
                kind=self.kind,
                dimension="preference",
                score=score,
                rationale=completion.text if completion.ok else "",
                raw=completion.text,
                parse_ok=True,
                judge_model=self.spec.id,
                prompt_version=self.version,
                temperature=self.spec.params.temperature,
                scale_min=SCALE[0],
                scale_max=SCALE[1],
                error=error,
                extra=extra | {"cupid_status": status},
            )
        ]

    def _missing(self, reason: str) -> Judgment:
        return missing_input(
            kind=self.kind,
            dimension="preference",
            judge_model=self.spec.id,
            version=self.version,
            reason=reason,
            scale=SCALE,
        )
