"""PersonaMem's answers: its answer format, its reading of a reply (``Evaluation.extract_answer``
of ``inference_standalone_openai.py``, bowen-upenn/PersonaMem @ 041d82ac) and its scoring.

PersonaMem plans (answer format :data:`ANSWER_FORMAT`) are scored by ``extract_answer``
(:func:`score_reply`): right iff the text after the last ``<final_answer>``, or else the whole
reply, names exactly the correct letter; anything else is wrong (its accuracy is the mean of
``score`` over the rows it wrote). The choice judge finds :func:`score` through the descriptor's
``answer_formats``.
"""

from __future__ import annotations

import re

from core.judges.base import JudgeInput, Judgment
from core.judges.choice import accuracy_judgment

#: The plan's answer format: the choice judge then reads replies as PersonaMem does.
ANSWER_FORMAT = "mcq-personamem"
#: The version of the judgments of PersonaMem plans (answer format :data:`ANSWER_FORMAT`).
PERSONAMEM_VERSION = "personamem-extract-answer-041d82a"

_PARENTHESISED = re.compile(r"\(([a-d])\)")
_BARE = re.compile(r"\b([a-d])\b")
_OPEN, _CLOSE = "<final_answer>", "</final_answer>"


def options_of(text: str) -> set[str]:
    """Letters in parentheses, else standalone letters a-d (the article "a" counts), lower-cased."""
    low = text.lower()
    found = _PARENTHESISED.findall(low)
    return set(found) if found else set(_BARE.findall(low))


def predicted_answer(reply: str) -> str:
    """The text after the last ``<final_answer>`` (a trailing ``</final_answer>`` removed), else the reply."""
    pred = reply.strip()
    if _OPEN in pred:
        pred = pred.split(_OPEN)[-1].strip()
    if pred.endswith(_CLOSE):
        pred = pred[: -len(_CLOSE)].strip()
    return pred


def score_reply(reply: str, correct_answer: str) -> tuple[bool, str]:
    """(correct, predicted_answer) exactly as ``extract_answer``: right iff the prediction, or
    else the whole reply, names exactly the one correct letter."""
    correct = correct_answer.lower().strip("() ")
    pred = predicted_answer(reply)
    if options_of(pred) == {correct}:
        return True, pred
    return options_of(reply) == {correct}, pred


def score_personamem_choice(gold: str | None, correct_answer: str | None, text: str) -> Judgment:
    """One accuracy judgment for a PersonaMem reply: no single letter is wrong, as PersonaMem."""
    judgment = accuracy_judgment(text, PERSONAMEM_VERSION)
    if gold is None and correct_answer is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    correct = correct_answer if correct_answer is not None else f"({gold})"
    right, predicted = score_reply(text, correct)
    extra = {"predicted_answer": predicted, "correct_answer": correct, "gold": (gold or "").upper() or None}
    rationale = (
        f"predicted {predicted[:60]!r}, correct {correct}: {'correct' if right else 'wrong'} (PersonaMem's rule)"
    )
    return judgment(score=1.0 if right else 0.0, rationale=rationale, parse_ok=True, extra=extra)


def score(item: JudgeInput) -> list[Judgment]:
    """The choice judge's scorer for :data:`ANSWER_FORMAT` plans (the CSV's ``correct_answer``
    when the import kept it, else the gold letter)."""
    correct = item.query.meta.get("correct_answer")
    return [
        score_personamem_choice(item.query.answer, correct if isinstance(correct, str) else None, item.response_text)
    ]
