"""The ``restraint`` judge (ours; no model): did an answer to a **restraint query** drag the
user's stored personal information in?

A restraint query is one whose gold says the user's preference should not change the answer
(``Query.meta["restraint"]``: OP-Bench's irrelevance tasks, generated restraint probes of any
benchmark's users, :mod:`core.analysis.restraint_probes`). The answer is checked against every
text the user has stored as a preference (for an OP-Bench user, its ``observation`` sentences) and
the query's own gold preference: with :func:`core.judges.probe_recall.recall` (content-word stems,
the question's own words left out), a text half of whose remaining words the answer states counts
as dragged in. Dimension ``held_back``: 1 = nothing dragged in, 0 = dragged in (the diagnosis then
labels the answer ``misapplied``). Lexical, so labelled heuristic: a paraphrase escapes it, and
the OP-Bench LLM judge (``op-bench:<model>``) is the official reading.
"""

from __future__ import annotations

from core.judges.base import JudgeInput, Judgment
from core.judges.common import gold_preference, missing_input
from core.judges.probe_recall import recall
from core.model import RESTRAINT
from core.providers.calls import Complete

KIND = "restraint"
DIMENSION = "held_back"
VERSION = "restraint-lexical-v1"
#: A stored text counts as dragged in when the answer states this share of its content words.
DRAGGED_AT = 0.5


def stored_texts(item: JudgeInput) -> list[str]:
    texts = [p.text for p in item.bundle.preferences]
    gold = gold_preference(item.bundle, item.query)
    return list(dict.fromkeys([*texts, *([gold] if gold else [])]))


def dragged_in(texts: list[str], answer: str, question: str) -> tuple[str, float] | None:
    """The stored text the answer states most of, when it states DRAGGED_AT of it or more."""
    best: tuple[str, float] | None = None
    for text in texts:
        share, _ = recall(text, [], answer, question)
        if share is not None and share >= DRAGGED_AT and (best is None or share > best[1]):
            best = (text, share)
    return best


class RestraintJudge:
    kind = KIND
    applies_to = ("open",)
    name = KIND

    def __init__(self, model_id: str | None = None):
        self.name = KIND

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        if item.query.meta.get(RESTRAINT) is not True:
            reason = "not a restraint query (its gold does not say the preference is irrelevant)"
            return [_missing(reason)]
        texts = stored_texts(item)
        if not texts:
            return [_missing("the user has no stored preference to hold back")]
        found = dragged_in(texts, item.response_text, item.query.text)
        if found is None:
            score, why = 1.0, f"none of the {len(texts)} stored preference(s) dragged in"
        else:
            text, share = found
            shown = text if len(text) <= 80 else text[:77] + "…"
            score, why = 0.0, f"drags in {shown!r} ({share:.2f} of its content words; lexical)"
        return [
            Judgment(
                kind=KIND,
                dimension=DIMENSION,
                score=score,
                rationale=why,
                raw="",
                parse_ok=True,
                judge_model="heuristic",
                prompt_version=VERSION,
                scale_min=0.0,
                scale_max=1.0,
                heuristic=True,
                extra={"stored": len(texts)},
            )
        ]


def _missing(reason: str) -> Judgment:
    return missing_input(
        kind=KIND,
        dimension=DIMENSION,
        judge_model="heuristic",
        version=VERSION,
        reason=reason,
        scale=(0.0, 1.0),
        heuristic=True,
    )
