"""A pairwise PREFERENCE judge: which of two answers follows the user's preference better?

Used by the judge bias audits (``prefscope audit-judge``, :mod:`core.analysis.judge_audit`): every
pair is judged in both orders (:meth:`PreferencePairJudge.judge_both_orders`), first with
answer 1 shown as A, then with answer 2 shown as A. Each of the two Judgments (kind
``pairwise``, dimension ``preferred``, scale 0–1) scores ANSWER 1's outcome whatever the order
shown: 1 = answer 1 follows the preference better, 0.5 = tie, 0 = answer 2 does. ``extra`` says
which answer was shown first (``shown_first``: 1 or 2) and the label as the judge gave it
(``label``: ``A`` / ``B`` / ``tie``, None when unread). A consistent judge gives the same score in
both orders; a judge that always answers "A" scores (1, 0): a flip.

Two variants:

- **an LLM judge** (``PreferencePairJudge("openai:gpt-4o-mini")``): one call per order through the
  ``complete`` callable, temperature 0, prompt ``prompts/preference_pair.toml`` (prefscope's own
  wording). An unreadable reply or a failed call is a recorded failure (``score=None``,
  ``parse_ok=False``, ``error`` set), never a tie.
- **the offline heuristic** (``PreferencePairJudge(None)``, judge model ``demo:heuristic``,
  ``heuristic=True``): no model call; it compares the two answers' heuristic *alignment* scores
  (:func:`core.judges.heuristic.score_heuristic`, 1–5) and the higher one wins. **On equal
  scores it picks the answer shown first (A).** That is a deliberate, documented position bias:
  it gives the offline demo of ``audit-judge`` something to find (every equal-scored pair flips
  between the two orders). It is a demo, not a judge to trust.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from core.judges.base import Judgment
from core.judges.common import judge_spec, messages, to_judgment
from core.judges.heuristic import JUDGE_MODEL as HEURISTIC_MODEL
from core.judges.heuristic import score_heuristic
from core.judges.parsing import parse_label
from core.judges.templates import template
from core.providers.base import ModelSpec
from core.providers.calls import Complete

KIND = "pairwise"
DIMENSION = "preferred"
SCALE = (0.0, 1.0)
TEMPLATE = ("preference_pair", "compare")
#: The heuristic variant's version: alignment scores compared, the first shown wins on equal scores.
HEURISTIC_VERSION = "preference-pair-heuristic-v1"
LABELS = {
    "A": ("a", "answer a", "response a"),
    "B": ("b", "answer b", "response b"),
    "tie": ("draw", "tied", "equal", "neither", "both"),
}
#: JSON fields the label may come in (the prompt asks for ``better``).
LABEL_KEYS = ("better", "winner", "answer")
#: The label as shown -> the outcome of the answer shown as A.
SHOWN_A_OUTCOME = {"A": 1.0, "B": 0.0, "tie": 0.5}


def answer_1_outcome(label: str, shown_first: int) -> float:
    """Answer 1's outcome (1 / 0.5 / 0) from the label the judge gave when answer ``shown_first``
    (1 or 2) was shown as A."""
    a = SHOWN_A_OUTCOME[label]
    return a if shown_first == 1 else 1.0 - a


def orders(judgments: Sequence[Judgment]) -> tuple[float | None, float | None]:
    """(answer 1's outcome with answer 1 shown first, … with answer 2 shown first) from the two
    judgments of :meth:`PreferencePairJudge.judge_both_orders`, in any order: one pair for
    :func:`core.analysis.judge_audit.position_audit`."""
    by_order = {j.extra.get("shown_first"): j.score for j in judgments}
    return by_order.get(1), by_order.get(2)


class PreferencePairJudge:
    kind = KIND

    def __init__(self, model_id: str | None):
        self.heuristic = model_id is None
        self.name = HEURISTIC_MODEL if model_id is None else model_id
        self.spec = None if model_id is None else judge_spec(model_id)

    async def judge_both_orders(
        self, query: str, preference: str, answer_1: str, answer_2: str, complete: Complete
    ) -> list[Judgment]:
        """Two judgments of the same pair: answer 1 shown as A, then answer 2 shown as A."""
        if self.spec is None:
            scores = (_alignment(preference, query, answer_1), _alignment(preference, query, answer_2))
            return [self._heuristic(scores, shown_first) for shown_first in (1, 2)]
        return list(
            await asyncio.gather(
                self._order(self.spec, query, preference, answer_1, answer_2, 1, complete),
                self._order(self.spec, query, preference, answer_2, answer_1, 2, complete),
            )
        )

    @staticmethod
    async def _order(
        spec: ModelSpec,
        query: str,
        preference: str,
        answer_a: str,
        answer_b: str,
        shown_first: int,
        complete: Complete,
    ) -> Judgment:
        t = template(*TEMPLATE)
        user = t.text("user", query=query, preference=preference, answer_a=answer_a, answer_b=answer_b)
        completion = await complete(spec, messages(t.fields["system"], user))
        parsed = parse_label(completion.text, LABELS, key=LABEL_KEYS) if completion.ok else None
        label = parsed.value if parsed is not None and parsed.ok and isinstance(parsed.value, str) else None
        return to_judgment(
            kind=KIND,
            dimension=DIMENSION,
            spec=spec,
            version=t.version,
            completion=completion,
            parsed=parsed,
            scale=SCALE,
            score=None if label is None else answer_1_outcome(label, shown_first),
            extra={"shown_first": shown_first, "label": label},
        )

    def _heuristic(self, scores: tuple[float, float], shown_first: int) -> Judgment:
        s1, s2 = scores
        a, b = (s1, s2) if shown_first == 1 else (s2, s1)
        label = "B" if b > a else "A"  # equal scores: the answer shown first (the demo's position bias)
        why = f"heuristic alignment: A (answer {shown_first}) {a:g}, B (answer {3 - shown_first}) {b:g}; " + (
            "equal, so the answer shown first (A) wins: this heuristic's deliberate position bias"
            if a == b
            else f"{label} is higher"
        )
        return Judgment(
            kind=KIND,
            dimension=DIMENSION,
            score=answer_1_outcome(label, shown_first),
            rationale=why,
            raw=why,
            parse_ok=True,
            judge_model=HEURISTIC_MODEL,
            prompt_version=HEURISTIC_VERSION,
            temperature=None,
            scale_min=SCALE[0],
            scale_max=SCALE[1],
            heuristic=True,
            extra={"shown_first": shown_first, "label": label},
        )


def _alignment(preference: str, query: str, answer: str) -> float:
    return score_heuristic(preference, query, answer)["alignment"][0]
