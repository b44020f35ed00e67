"""PrefEval's MCQ answers: its answer format, its reading of a reply, and its scoring.

PrefEval MCQ plans (answer format :data:`MCQ_ANSWER_FORMAT`) are scored as PrefEval scores them
(``benchmark_classification.py``): its own parser (:func:`parse_prefeval_choice`, with the
``<choice>`` prefill prepended when it was sent), and a reply it cannot read counts as WRONG, not
excluded, since PrefEval's accuracy is correct / processed. Those judgments carry their own
version. The choice judge finds :func:`score` through the descriptor's ``answer_formats``.

Imported MCQ answers (``results.py``, or the generic JSONL naming this answer format) are plans
of the same format, so the same scorer reads them; two facts come from their messages: the prefill
was sent when the messages end with it as an assistant message, and the gold letter is the aligned
option's letter in the options the messages showed, since an official run shuffled them its own way
(seed 41), not in prefscope's stored order.
"""

from __future__ import annotations

import re

from core.judges.base import JudgeInput, Judgment
from core.judges.choice import accuracy_judgment, prefill_sent
from core.model import MCQ_LETTERS, Query
from core.plan import PromptPlan
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


def score_prefeval_choice(gold: str | None, text: str, prefilled: bool, note: dict | None = None) -> Judgment:
    """One accuracy judgment for a PrefEval MCQ reply: None (nothing read) is wrong, as PrefEval.
    ``note`` adds to the judgment's extra (where the gold letter came from)."""
    judgment = accuracy_judgment(text, PREFEVAL_VERSION)
    if gold is None:
        return judgment(score=None, rationale="", parse_ok=False, error="the query has no gold answer")
    picked = parse_prefeval_choice(text, prefilled)
    extra = {"parsed": picked, "gold": gold, "prefilled": prefilled, **(note or {})}
    if picked is None:
        return judgment(score=0.0, rationale="no letter: wrong, as PrefEval", parse_ok=True, extra=extra)
    correct = picked == gold
    rationale = f"answered {picked!r}, gold {gold!r}: {'correct' if correct else 'wrong'}"
    return judgment(score=1.0 if correct else 0.0, rationale=rationale, parse_ok=True, extra=extra)


#: ``mcq_option_line``: ``{letters[i]}. {option}``, one line per shown option.
_OPTION_LINE = re.compile(r"^([ABCD])\. (.*)$")


def shown_gold(plan: PromptPlan, query: Query) -> str | None:
    """The letter the query's aligned option had in the options the final step's last user message
    showed (the MCQ block's ``X. option`` lines; the last block counts); None when it shows none."""
    if query.answer is None or query.answer not in MCQ_LETTERS[: len(query.options)]:
        return None
    aligned = query.options[MCQ_LETTERS.index(query.answer)]
    users = [m for m in plan.steps[-1].messages if m.role == "user"]
    found = None
    for line in users[-1].content.splitlines() if users else []:
        m = _OPTION_LINE.match(line)
        if m and m.group(2) == aligned:
            found = m.group(1)
    return found


def prefill_in_messages(plan: PromptPlan) -> bool:
    """Whether the final step's messages end with PrefEval's prefill as an assistant message: what an
    imported answer's file says was sent (its reply continues it)."""
    last = plan.steps[-1].messages[-1:]
    return bool(last) and last[0].role == "assistant" and last[0].content == PREFEVAL_PREFILL


def score(item: JudgeInput) -> list[Judgment]:
    """The choice judge's scorer for :data:`MCQ_ANSWER_FORMAT` plans. The gold letter is the aligned
    option's letter in the options the prompt showed (for prefscope's plans the stored order; an
    imported official run shuffled them its own way), the stored query's letter when the prompt
    shows none; the prefill counts as sent when the engine sent it or the messages end with it."""
    gold = shown_gold(item.plan, item.query)
    note = {"gold_from": "shown options" if gold is not None else "stored query"}
    prefilled = prefill_in_messages(item.plan) or prefill_sent(item.plan, item.model_id)
    return [score_prefeval_choice(gold or item.query.answer, item.response_text, prefilled, note)]
