"""MCQ and true/false scoring: no model call, the answer parsers of ``core.methods.answers``
against the query's gold answer (RealPref §4.2: accuracy; random baselines 0.25 and 0.5).

A reply that names no option, or several, is a parse failure (``parse_ok=False``, no score, raw
text kept): it is neither right nor wrong, and accuracy helpers leave it out (and count it).

PrefEval MCQ plans (``answer_format == "mcq-prefeval"``) are scored as PrefEval scores them
(``benchmark_classification.py``): its own parser (:func:`parse_prefeval_choice`, with the
``<choice>`` prefill prepended when it was sent), and a reply it cannot read counts as WRONG, not
excluded, since PrefEval's accuracy is correct / processed. Those judgments carry their own version.

PersonaMem plans (``answer_format == "mcq-personamem"``) are scored by PersonaMem's
``extract_answer`` (:func:`core.methods.personamem.score_reply`): right iff the text after the last
``<final_answer>``, or else the whole reply, names exactly the correct letter; anything else is
wrong (its accuracy is the mean of ``score`` over the rows it wrote).
"""

from __future__ import annotations

from functools import partial

from core.judges.base import JudgeInput, Judgment
from core.methods.answers import parse_choice, parse_prefeval_choice, parse_yes_no
from core.methods.personamem import ANSWER_FORMAT as PERSONAMEM_MCQ
from core.methods.personamem import score_reply as personamem_score
from core.methods.prefeval import MCQ_ANSWER_FORMAT as PREFEVAL_MCQ
from core.plan import PromptPlan
from core.providers import PROVIDERS
from core.providers.calls import Complete

#: Its "parser:"/"metric:" prefix makes the judge source "parser" (core.judges.aggregate.source_of).
JUDGE_MODEL = "parser:choice"
VERSION = "choice-parser-v1"
#: The version of the judgments of PrefEval MCQ plans (answer format PREFEVAL_MCQ).
PREFEVAL_VERSION = "prefeval-choice-v1"
#: The version of the judgments of PersonaMem plans (answer format PERSONAMEM_MCQ).
PERSONAMEM_VERSION = "personamem-extract-answer-041d82a"
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


def prefill_sent(plan: PromptPlan, model_id: str) -> bool:
    """Whether the final step's prefill reached the model: the engine appends it only for
    providers that continue a trailing assistant message (``supports_prefill``). A replayed
    response is read as its recorded model's (``replay:<model id>``)."""
    if plan.steps[-1].prefill is None:
        return False
    provider, _, rest = model_id.partition(":")
    if provider == "replay" and ":" in rest:
        provider = rest.partition(":")[0]
    entry = PROVIDERS.get(provider)
    return entry is not None and bool(getattr(entry.load(), "supports_prefill", False))


def _accuracy(text: str, version: str) -> partial[Judgment]:
    """A choice accuracy judgment of ``text`` under a benchmark's own reading ``version``."""
    return partial(
        Judgment,
        kind="choice",
        dimension="accuracy",
        raw=text,
        judge_model=JUDGE_MODEL,
        prompt_version=version,
        scale_min=SCALE[0],
        scale_max=SCALE[1],
    )


def score_prefeval_choice(gold: str | None, text: str, prefilled: bool) -> Judgment:
    """One accuracy judgment for a PrefEval MCQ reply: None (nothing read) is wrong, as PrefEval."""
    judgment = _accuracy(text, PREFEVAL_VERSION)
    if gold is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    picked = parse_prefeval_choice(text, prefilled)
    extra = {"parsed": picked, "gold": gold, "prefilled": prefilled}
    if picked is None:
        return judgment(score=0.0, rationale="no letter: wrong, as PrefEval", parse_ok=True, extra=extra)
    correct = picked == gold
    rationale = f"answered {picked!r}, gold {gold!r}: {'correct' if correct else 'wrong'}"
    return judgment(score=1.0 if correct else 0.0, rationale=rationale, parse_ok=True, extra=extra)


def score_personamem_choice(gold: str | None, correct_answer: str | None, text: str) -> Judgment:
    """One accuracy judgment for a PersonaMem reply: no single letter is wrong, as PersonaMem."""
    judgment = _accuracy(text, PERSONAMEM_VERSION)
    if gold is None and correct_answer is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    correct = correct_answer if correct_answer is not None else f"({gold})"
    right, predicted = personamem_score(text, correct)
    extra = {"predicted_answer": predicted, "correct_answer": correct, "gold": (gold or "").upper() or None}
    rationale = (
        f"predicted {predicted[:60]!r}, correct {correct}: {'correct' if right else 'wrong'} (PersonaMem's rule)"
    )
    return judgment(score=1.0 if right else 0.0, rationale=rationale, parse_ok=True, extra=extra)


class ChoiceJudge:
    kind = "choice"
    name = "choice"
    applies_to = ("mcq", "tf")

    async def judge(self, item: JudgeInput, complete: Complete) -> list[Judgment]:
        q = item.query
        if item.plan.answer_format == PREFEVAL_MCQ:
            prefilled = prefill_sent(item.plan, item.model_id)
            return [score_prefeval_choice(q.answer, item.response_text, prefilled)]
        if item.plan.answer_format == PERSONAMEM_MCQ:
            correct = q.meta.get("correct_answer")
            return [
                score_personamem_choice(q.answer, correct if isinstance(correct, str) else None, item.response_text)
            ]
        return [score_choice(q.kind, len(q.options), q.answer, item.response_text)]
