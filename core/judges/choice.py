"""MCQ and true/false scoring: no model call, the answer parsers of ``core.methods.answers``
against the query's gold answer (RealPref §4.2: accuracy; random baselines 0.25 and 0.5).

A reply that names no option, or several, is a parse failure (``parse_ok=False``, no score, raw
text kept): it is neither right nor wrong, and accuracy helpers leave it out (and count it).
"""

from __future__ import annotations

from functools import partial

from core.judges.base import JudgeInput, Judgment
from core.methods.answers import parse_choice, parse_yes_no
from core.providers.calls import Complete

JUDGE_MODEL = "parser:choice"
VERSION = "choice-parser-v1"
SCALE = (0.0, 1.0)


def score_choice(query_kind: str, options: int, gold: str | None, text: str) -> Judgment:
    """One accuracy judgment for a reply to an MCQ (``options`` letters) or a yes/no question."""
    dimension = "accuracy"
    judgment = partial(
        Judgment,
        kind="choice",
        dimension=dimension,
        raw=text,
        judge_model=JUDGE_MODEL,
        prompt_version=VERSION,
        scale_min=SCALE[0],
        scale_max=SCALE[1],
    )
    if gold is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    if query_kind == "mcq":
        picked = parse_choice(text, options)
        what = f"one of {options} option letters"
    elif query_kind == "tf":
        picked = parse_yes_no(text)
        what = "a yes or no"
    else:
        return judgment(
            score=None,
            rationale="",
            parse_ok=False,
            error=f"choice scoring applies to mcq/tf queries, not {query_kind!r}",
        )
    if picked is None:
        return judgment(
            score=None, rationale="", parse_ok=False, error=f"the reply does not commit to {what}", extra={"gold": gold}
        )
    correct = picked == gold
    rationale = f"answered {picked!r}, gold {gold!r}: {'correct' if correct else 'wrong'}"
    return judgment(
        score=1.0 if correct else 0.0, rationale=rationale, parse_ok=True, extra={"parsed": picked, "gold": gold}
    )


class ChoiceJudge:
    kind = "choice"
    name = "choice"
    applies_to = ("mcq", "tf")

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        q = item.query
        return [score_choice(q.kind, len(q.options), q.answer, item.response_text)]
