"""The gold facts a demo model may be given (``demo:oracle`` is the upper bound), read once per run.

Only providers whose ``capabilities.accepts_hints`` is True ever receive them; a real model never
sees the gold preference.
"""

from __future__ import annotations

from typing import TypedDict

from core.model import RESTRAINT, UserBundle


class Hints(TypedDict, total=False):
    gold_preference: str | None
    #: "open" | "mcq" | "tf"; ``answer_format`` overrides it for one call.
    query_kind: str
    answer_format: str
    #: ``{"A": text, …}`` or a list in letter order.
    options: dict[str, str] | list[str]
    #: The gold letter for MCQ, or yes/no for true/false.
    answer: str | bool | None
    #: The query as asked, so a demo model knows which step of a multi-step plan asks it.
    question: str
    #: Hand-written answers from the sample data (``follows`` / ``generic`` / ``violates``).
    reference_answers: dict[str, str]
    #: A restraint query (``Query.meta["restraint"]``): its gold says the preference should not change the answer.
    restraint: bool


def gold_hints(bundle: UserBundle, query_id: str) -> Hints:
    query = bundle.query(query_id)
    pref = bundle.preference(query.preference_id).text if query.preference_id else query.gold_preference
    refs = query.meta.get("reference_answers")
    return Hints(
        gold_preference=pref,
        query_kind=query.kind,
        options=list(query.options),
        answer=query.answer,
        question=query.text,
        reference_answers={k: v for k, v in refs.items() if isinstance(v, str)} if isinstance(refs, dict) else {},
        restraint=query.meta.get(RESTRAINT) is True,
    )
