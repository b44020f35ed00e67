"""RealPref rubric judge: three dimensions scored 1–5, one judge call per dimension.

Each call gets the dimension's definition and criteria table (RealPref App. B.2, Tables 4–6,
verbatim in ``prompts.toml``, judge prompt family ``realpref_rubric``), the target preference, the query and the answer,
and must return a score with a rationale. Applies to open-ended queries.
"""

from __future__ import annotations

import asyncio

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import parse_score
from core.judges.templates import template
from core.plan import Message
from core.providers.calls import Complete

DIMENSIONS = ("awareness", "alignment", "quality")
SCALE = (1.0, 5.0)
FAMILY = "realpref_rubric"


class RubricJudge:
    kind = "rubric"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0, dimensions: tuple[str, ...] = DIMENSIONS):
        self.spec = judge_spec(model_id, temperature)
        self.dimensions = dimensions
        self.name = f"rubric:{model_id}"

    @property
    def version(self) -> str:
        return template(FAMILY, "instruction").version

    def prompt(self, dimension: str, preference: str, query: str, response: str) -> list[Message]:
        wrapper = template(FAMILY, "instruction")
        dim = template(FAMILY, dimension)
        user = wrapper.text(
            "user",
            dimension=dim.fields["name"],
            definition=dim.fields["definition"],
            criteria=dim.fields["criteria"],
            preference=preference,
            query=query,
            response=response,
        )
        return messages(wrapper.fields["system"], user)

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        preference = item_preference(item)
        if not preference:
            return [
                missing_input(
                    kind=self.kind,
                    dimension=d,
                    judge_model=self.spec.id,
                    version=self.version,
                    reason="the query has no target preference to judge against",
                    scale=SCALE,
                )
                for d in self.dimensions
            ]
        return list(await asyncio.gather(*(self._one(d, preference, item, complete) for d in self.dimensions)))

    async def _one(self, dimension: str, preference: str, item: JudgeInput, complete: Complete) -> Judgment:
        completion = await complete(self.spec, self.prompt(dimension, preference, item.query.text, item.response_text))
        parsed = parse_score(completion.text, *SCALE) if completion.ok else None
        return to_judgment(
            kind=self.kind,
            dimension=dimension,
            spec=self.spec,
            version=self.version,
            completion=completion,
            parsed=parsed,
            scale=SCALE,
        )
