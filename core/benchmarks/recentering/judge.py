"""Re-Centering stage 3 (Re-Centering paper §6, App. G): is the personalised response better than a generic
one, on a 1–5 scale?

The generic response is the answering model's reply to the query alone (no history), produced
through the same ``complete`` callable unless given. The two responses are shown as A and B in an
order fixed by a hash of (query, model) – shuffled across items, reproducible for one item. The
judge rates 1 = strongly prefer A … 5 = strongly prefer B; the stored score is re-oriented so that
5 = strongly prefers the PERSONALISED response and 3 = no preference (the paper's neutral line).
The raw orientation is kept in ``extra``. Remember the paper's warning: LLM judges inflate this.
"""

from __future__ import annotations

import hashlib

from core.judges.base import JudgeInput, Judgment
from core.judges.common import item_preference, judge_spec, messages, missing_input, to_judgment
from core.judges.parsing import parse_score
from core.judges.templates import template
from core.plan import Message
from core.providers.base import ModelSpec
from core.providers.calls import Complete

SCALE = (1.0, 5.0)


def personalized_is_b(query_id: str, model_id: str) -> bool:
    return hashlib.sha256(f"{query_id}\x00{model_id}".encode()).digest()[0] % 2 == 1


class PersonalizationJudge:
    kind = "personalization"
    applies_to = ("open",)

    def __init__(self, model_id: str, *, temperature: float | None = 0.0):
        self.spec = judge_spec(model_id, temperature)
        self.name = f"personalization:{model_id}"

    @property
    def version(self) -> str:
        return template("recentering", "personalization").version

    async def judge(self, item: JudgeInput, complete: Complete, generic: str | None = None) -> list[Judgment]:
        profile = item_preference(item)
        if not profile:
            return [
                missing_input(
                    kind=self.kind,
                    dimension="personalized_vs_generic",
                    judge_model=self.spec.id,
                    version=self.version,
                    reason="the query has no target preference",
                    scale=SCALE,
                )
            ]
        extra: dict = {}
        if generic is None:
            gen = await complete(ModelSpec(id=item.model_id), [Message(role="user", content=item.query.text)])
            if not gen.ok:
                return [
                    missing_input(
                        kind=self.kind,
                        dimension="personalized_vs_generic",
                        judge_model=self.spec.id,
                        version=self.version,
                        scale=SCALE,
                        reason=f"generating the generic response with {item.model_id} failed: {gen.error}",
                    )
                ]
            generic = gen.text
            extra["generic_source"] = item.model_id
        return [
            await self.compare(
                profile, item.query.id, item.query.text, item.model_id, item.response_text, generic, complete, extra
            )
        ]

    async def compare(
        self,
        profile: str,
        query_id: str,
        query: str,
        model_id: str,
        personalized: str,
        generic: str,
        complete: Complete,
        extra: dict | None = None,
    ) -> Judgment:
        t = template("recentering", "personalization")
        b_is_personal = personalized_is_b(query_id, model_id)
        a, b = (generic, personalized) if b_is_personal else (personalized, generic)
        completion = await complete(
            self.spec,
            messages(t.fields["system"], t.text("user", profile=profile, query=query, response_a=a, response_b=b)),
        )
        parsed = parse_score(completion.text, *SCALE) if completion.ok else None
        ex = {**(extra or {}), "generic": generic, "personalized_position": "B" if b_is_personal else "A"}
        score = None
        if parsed is not None and parsed.ok and isinstance(parsed.value, float):  # parse_score's values are floats
            ex["raw_score"] = parsed.value
            score = parsed.value if b_is_personal else 6.0 - parsed.value
        return to_judgment(
            kind=self.kind,
            dimension="personalized_vs_generic",
            spec=self.spec,
            version=self.version,
            completion=completion,
            parsed=parsed,
            scale=SCALE,
            score=score,
            extra=ex,
        )
