"""PrefEval's MCQ answers: its answer format, its reading of a reply, and its scoring.

PrefEval MCQ plans (answer format :data:`MCQ_ANSWER_FORMAT`) are scored as PrefEval scores them
(``benchmark_classification.py``): its own parser (:func:`parse_prefeval_choice`, with the
``<choice>`` prefill prepended when it was sent), and a reply it cannot read counts as WRONG, not
excluded, since PrefEval's accuracy is correct / processed. Those judgments carry their own
version. The choice judge finds :func:`score` through the descriptor's ``answer_formats``.
"""

from __future__ import annotations

import re

from core.judges.base import JudgeInput, Judgment
from core.judges.choice import accuracy_judgment, prefill_sent
from core.text.tags import first_tag_string

#: The answer format of PrefEval MCQ plans: the choice judge scores them with PrefEval's parser
#: (an unreadable reply is wrong, not left out).
MCQ_ANSWER_FORMAT = "mcq-prefeval"
#: The assistant prefill PrefEval sends after every MCQ prompt (Claude/Mistral).
PREFEVAL_PREFILL = "<choice>"
#: The version of the judgments of PrefEval MCQ plans.
PREFEVAL_VERSION = "prefeval-choice-v1"


def parse_prefeval_choice(reply: str, prefilled: bool) -> str | None:
    """PrefEval's MCQ reading (``utils/utils_mcq.py extract_choice``), quirks included.

    When the ``<choice>`` prefill was sent, the reply continues it, so it is prepended (as the
    official code does for Claude and Mistral). Then the first ``<choice>`` element (an unclosed one
    runs to the end), its single text (BeautifulSoup ``.string``), and the first of A–D anywhere in
    it, case-sensitive: "Based on…" reads as B, exactly as PrefEval reads it. None when any step
    finds nothing; PrefEval scores None as wrong.
    """
    inner = first_tag_string(PREFEVAL_PREFILL + reply if prefilled else reply, "choice")
    found = re.search("[ABCD]", inner) if inner is not None else None
    return found.group(0) if found else None


def score_prefeval_choice(gold: str | None, text: str, prefilled: bool) -> Judgment:
    """One accuracy judgment for a PrefEval MCQ reply: None (nothing read) is wrong, as PrefEval."""
    judgment = accuracy_judgment(text, PREFEVAL_VERSION)
    if gold is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    picked = parse_prefeval_choice(text, prefilled)
    extra = {"parsed": picked, "gold": gold, "prefilled": prefilled}
    if picked is None:
        return judgment(score=0.0, rationale="no letter: wrong, as PrefEval", parse_ok=True, extra=extra)
    correct = picked == gold
    rationale = f"answered {picked!r}, gold {gold!r}: {'correct' if correct else 'wrong'}"
    return judgment(score=1.0 if correct else 0.0, rationale=rationale, parse_ok=True, extra=extra)


def score(item: JudgeInput) -> list[Judgment]:
    """The choice judge's scorer for :data:`MCQ_ANSWER_FORMAT` plans."""
    prefilled = prefill_sent(item.plan, item.model_id)
    return [score_prefeval_choice(item.query.answer, item.response_text, prefilled)]
