"""PersonaMem-v2's MCQ answers: its answer format, its letter extraction (``extract_final_answer``
of ``inference.py``, bowen-upenn/PersonaMem-v2 @ 6a36975f; PROTOCOL.md §3.5) and its option-text
scoring. A parser, no model call: the ``choice`` judge finds :func:`score` through the descriptor's
``answer_formats``.

Extraction: :data:`PATTERNS` in order, each with IGNORECASE | MULTILINE; the first that matches
anywhere wins and its letter is upper-cased; none -> ``""``. Because of IGNORECASE the letter class
matches lower-case letters too (``Answer: the …`` -> ``T``), as in the official code.
Scoring: right iff the option text at the predicted letter **equals** ``correct_answer``; an empty
or out-of-range letter is wrong (counted, as the official ``is_correct``; not a parse failure).
"""

from __future__ import annotations

import re

from core.judges.base import JudgeInput, Judgment
from core.judges.choice import accuracy_judgment
from core.model import MCQ_LETTERS

ANSWER_FORMAT = "mcq-personamem-v2"
VERSION = "personamem-v2-extract-final-answer-6a36975"
BENCHMARK = "personamem-v2"

_FLAGS = re.IGNORECASE | re.MULTILINE
#: extract_final_answer's patterns, in its order (PROTOCOL.md §3.5, items 1-11). Where the notes say
#: "spaces" we read ``\s*`` (zero or more, newlines included).
PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, _FLAGS)
    for p in (
        r"\$\\boxed\{([A-Z])\}\$",  # 1. $\boxed{X}$
        r"\\boxed\{([A-Z])\}",  # 2. \boxed{X}
        r"Final Answer:\s*([A-Z])",  # 3.
        r"final answer:\s*([A-Z])",  # 4. the same, lower-case
        r"Answer:\s*([A-Z])",  # 5.
        r"answer:\s*([A-Z])",  # 6. the same, lower-case
        r"final answer is\s*\$?\\boxed\{([A-Z])\}",  # 7.
        r"final answer is\s*([A-Z])",  # 8.
        r"the answer is\s*\$?\\boxed\{([A-Z])\}",  # 9.
        r"the answer is\s*([A-Z])",  # 10.
        r"^([A-Z])\.\s*$",  # 11. a lone letter and a full stop ending a line
    )
)


def extract_final_answer(reply: str | None) -> str:
    """The predicted letter (upper case), or ``""``."""
    if not reply:
        return ""
    for pattern in PATTERNS:
        m = pattern.search(reply)
        if m:
            return m.group(1).upper()
    return ""


def is_correct(predicted: str, options: list[str], correct_answer: str) -> bool:
    """The option text mapped to ``predicted`` equals ``correct_answer`` (string equality)."""
    if len(predicted) != 1 or predicted not in MCQ_LETTERS:
        return False
    i = MCQ_LETTERS.index(predicted)
    return i < len(options) and options[i] == correct_answer


def score(item: JudgeInput) -> list[Judgment]:
    q = item.query
    judgment = accuracy_judgment(item.response_text, VERSION)
    correct = q.meta.get("correct_answer")
    if not isinstance(correct, str):
        gold = q.answer or ""
        correct = q.options[MCQ_LETTERS.index(gold)] if gold and gold in MCQ_LETTERS[: len(q.options)] else None
    extra = {
        "benchmark": BENCHMARK,
        "distance_bin": q.meta.get("distance_bin", "(none)"),
        "size": q.meta.get("size"),
    }
    if correct is None:
        return [
            judgment(score=None, rationale="", parse_ok=False, error="the query has no correct answer", extra=extra)
        ]
    predicted = extract_final_answer(item.response_text)
    right = is_correct(predicted, list(q.options), correct)
    rationale = f"extracted {predicted or 'no letter'}; {'correct' if right else 'wrong'} (PersonaMem-v2's extract_final_answer)"
    extra |= {"predicted_answer": predicted, "gold": q.answer}
    return [judgment(score=1.0 if right else 0.0, rationale=rationale, parse_ok=True, extra=extra)]


#: Imported replies of an official run: its option order is unknown (the official shuffle is seeded
#: with Python's salted ``hash()``), so a letter cannot be mapped to an option text here.
RECORDED_FORMAT = "mcq-personamem-v2-recorded"
RECORDED_NOTE = "PersonaMem-v2 recorded verdict: "
_RECORDED = re.compile(r"^PersonaMem-v2 recorded verdict: predicted=(?P<letter>\S*) is_correct=(?P<verdict>\S*)$")


def recorded_note(predicted: str, verdict: str) -> str:
    """The plan note the result-CSV reader writes, read back by :func:`score_recorded`."""
    return f"{RECORDED_NOTE}predicted={predicted.strip() or '-'} is_correct={verdict.strip() or '-'}"


def score_recorded(item: JudgeInput) -> list[Judgment]:
    """Re-scoring an imported official reply: the official extraction is run again; when it gives
    the letter the file recorded, the file's verdict stands (the option texts agreed then); when it
    does not, no score (a parse failure naming both letters), since the run's option order is unknown."""
    q = item.query
    judgment = accuracy_judgment(item.response_text, VERSION)
    extra = {"benchmark": BENCHMARK, "distance_bin": q.meta.get("distance_bin", "(none)"), "size": q.meta.get("size")}
    found = next((m for n in item.plan.notes if (m := _RECORDED.match(n))), None)
    predicted = extract_final_answer(item.response_text)
    extra["predicted_answer"] = predicted
    if found is None or found["verdict"] not in ("True", "False"):
        return [judgment(score=None, rationale="", parse_ok=False, error="the file recorded no verdict", extra=extra)]
    recorded = "" if found["letter"] == "-" else found["letter"]
    if predicted != recorded.upper():
        error = (
            f"the official extraction gives {predicted or 'no letter'}, the file recorded {recorded or 'no letter'}:"
            " not re-scored (that run's option order is unknown)"
        )
        return [judgment(score=None, rationale="", parse_ok=False, error=error, extra=extra)]
    right = found["verdict"] == "True"
    rationale = f"extracted {predicted or 'no letter'}, as recorded; the file's verdict stands: {'correct' if right else 'wrong'}"
    return [judgment(score=1.0 if right else 0.0, rationale=rationale, parse_ok=True, extra=extra)]
