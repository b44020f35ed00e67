"""PrefEval MCQ results (``benchmark_classification.py`` output): what an imported answer records so
that the choice judge reads it as PrefEval did (reference PROTOCOL.md §5).

A record is the task's data record with, added: ``shuffled_options`` (the 4 options in the order
the model saw them), ``correct_idx`` (the aligned option's letter in that order), ``response_to_q``
(the reply; for Claude and Mistral with PrefEval's ``<choice>`` prefill prepended), ``choice``
(PrefEval's parse of it) and, for the self-critic method, ``first_choice`` and ``self_critic``.
Files live under ``…/mcq_results/<task>/<topic>/``; their names are read like the generation files'.

What the import records:

* the answer format ``mcq-prefeval`` (PrefEval's parser; an unreadable reply is wrong);
* the options as shown: the final user message is the question with PrefEval's MCQ block built from
  ``shuffled_options``, so the gold letter is the aligned option's letter there, whatever order the
  linked stored query has (the official run shuffles with seed 41, prefscope stores its own order);
* the prefill: PrefEval sends ``<choice>`` to a model whose short name contains ``mistral`` or
  ``claude`` (the file name's model) and stores it prepended to the reply. The import stores the
  reply without it and ends the messages with the assistant ``<choice>``, as prefscope's own runs
  hold a prefilled answer: the scorer prepends it again, reading exactly the text PrefEval read.
  Other models (``llama…``) had no prefill: the reply is read as stored;
* PrefEval's own verdict (``choice`` against ``correct_idx``) as a recorded score of
  ``recorded:prefeval-extract-choice``, never pooled with the judge's.
"""

from __future__ import annotations

import json

from core.benchmarks.prefeval.answers import MCQ_ANSWER_FORMAT, PREFEVAL_PREFILL
from core.formats.errors import FormatError
from core.formats.shapes import get
from core.model import MCQ_LETTERS, Query
from core.plan import Message
from core.results.model import RecordedScore

#: PrefEval's parse as its file records it, stored as ``recorded:<this>``.
RECORDED_JUDGE = "prefeval-extract-choice"
#: ``benchmark_classification.py``: the models whose reply continues the ``<choice>`` prefill.
_PREFILLED_MODELS = ("mistral", "claude")
_OPTIONS = 4


def is_mcq(rec: dict) -> bool:
    """A record of the MCQ task: it has the options as shown, or their correct letter."""
    return "shuffled_options" in rec or "correct_idx" in rec


def prefill_sent(model: str) -> bool:
    """PrefEval prepends ``<choice>`` to the replies of these models (PROTOCOL §5.4, step 1)."""
    return any(name in model for name in _PREFILLED_MODELS)


def shown_options(shown: str, rec: dict, label: str) -> tuple[list[str], str]:
    """The options in the order the model saw them and the aligned option's letter there."""
    options = get(shown, rec, "shuffled_options", list, "", label)
    if len(options) != _OPTIONS or not all(isinstance(o, str) and o for o in options):
        raise FormatError(shown, "expected 4 non-empty option texts", record=label, path="shuffled_options")
    letters = MCQ_LETTERS[:_OPTIONS]
    gold = get(shown, rec, "correct_idx", str, "", label, required=False)
    raw = get(shown, rec, "classification_task_options", list, "", label, required=False)
    aligned = letters[options.index(raw[0])] if raw and raw[0] in options else None
    if gold is None and aligned is None:
        raise FormatError(
            shown,
            "no correct letter (correct_idx) and no classification_task_options[0] among the options",
            record=label,
        )
    if gold is not None and gold not in letters:
        raise FormatError(
            shown, f"expected one of {', '.join(letters)}, got {gold!r}", record=label, path="correct_idx"
        )
    if gold is not None and aligned is not None and gold != aligned:
        raise FormatError(
            shown,
            f"correct_idx {gold!r} is not where classification_task_options[0] was shown ({aligned!r})",
            record=label,
            path="correct_idx",
        )
    return options, gold or aligned or ""


def mcq_query(query_id: str, question: str, options: list[str], gold: str, pref_id: str, group: str) -> Query:
    """The MCQ as the model saw it (a fallback user's query; its letters are the file's)."""
    return Query(
        id=query_id,
        kind="mcq",
        text=question,
        preference_id=pref_id,
        group=group,
        options=options,
        answer=gold,
        meta={"answer_convention": "correct_idx of the PrefEval results file"},
    )


def mcq_fields(shown: str, rec: dict, label: str, layout: dict, answer: str) -> dict:
    """The ImportedAnswer fields of an MCQ record: answer (without the prefill PrefEval prepended),
    answer format, messages as shown, matching kind, recorded verdict, notes."""
    from core.benchmarks.prefeval.methods import question_prompt  # the MCQ block, as prefscope builds it

    options, gold = shown_options(shown, rec, label)
    model = layout["model"]
    prefilled = prefill_sent(model)
    reply = answer[len(PREFEVAL_PREFILL) :] if prefilled and answer.startswith(PREFEVAL_PREFILL) else answer
    question = rec["question"]
    asked = Query(id="shown", kind="mcq", text=question, options=options, answer=gold)
    task = layout["task"] or ""
    messages = [Message(role="user", content=question_prompt(asked, task))]
    if prefilled:
        messages.append(Message(role="assistant", content=PREFEVAL_PREFILL))
    return {
        "answer": reply,
        "answer_format": MCQ_ANSWER_FORMAT,
        "messages": messages,
        "recorded": _recorded(shown, rec, label, gold),
        "notes": _notes(model, prefilled, reply != answer, task),
        "gold": gold,
        "options": options,
    }


def _recorded(shown: str, rec: dict, label: str, gold: str) -> list[RecordedScore]:
    if "choice" not in rec:
        return []
    choice = get(shown, rec, "choice", str, "", label, required=False)
    verdict = "correct" if choice == gold else "wrong"
    return [
        RecordedScore(
            kind="choice",
            dimension="accuracy",
            score=1.0 if choice == gold else 0.0,  # PrefEval counts no letter (None) as wrong
            scale_min=0.0,
            scale_max=1.0,
            judge=RECORDED_JUDGE,
            raw=json.dumps(choice),
            rationale=f"PrefEval read {choice!r}, correct_idx {gold!r}: {verdict}",
        )
    ]


def _notes(model: str, prefilled: bool, stripped: bool, task: str) -> list[str]:
    if prefilled:
        how = (
            f"PrefEval sent {model} the prefill {PREFEVAL_PREFILL} (its short name contains mistral or claude)"
            + (" and stored it prepended to the reply; the reply is stored without it" if stripped else "")
            + ", so the messages end with it and the choice judge prepends it again, as PrefEval read the reply."
        )
    else:
        how = f"PrefEval sent {model} no prefill (only mistral/claude models get {PREFEVAL_PREFILL}): read as stored."
    shown = (
        "The last user message is the question with PrefEval's MCQ block in the file's order (shuffled_options)"
        + (
            ""
            if task in ("zero-shot", "remind", "cot")
            else f"; the {task or 'unknown'} method's other text is not in the file"
        )
        + "; the gold letter is where the aligned option stood there."
    )
    return [how, shown]
