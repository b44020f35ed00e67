"""``demo:overeager`` – over-personalization on purpose (a demo model, offline and scripted).

It is ``demo:oracle`` that cannot hold back: where the query has a gold preference it answers as
the oracle does, and **every other answer** (a restraint query, whose gold says the preference
is irrelevant; a query with no preference at all) opens by dragging in the user's stored
preference before the answer to the question alone. The stored preference is, in order: the gold
preference from ``hints``; the first line of a memory block in the prompt (OP-Bench's
``Memories for user …:`` / ``Memory:``); the first earlier user turn. With none of these it
answers as ``demo:generic`` (nothing stored to drag in). What the diagnosis labels ``misapplied``
on restraint queries, where ``demo:oracle`` holds back.
"""

from __future__ import annotations

from core.plan import Message
from core.providers import demo_phrases as dp
from core.providers import demo_prose as prose
from core.providers import demo_text as dt
from core.providers.hints import Hints

#: Lines that open a memory block; the block ends at a line ending with ``Input:`` or ``Question:``.
MEMORY_HEADS = ("memories for user", "memory:")
MEMORY_ENDS = ("input:", "question:")


def memory_lines(messages: list[Message]) -> list[str]:
    """The lines of the memory blocks in the user messages (bullets stripped)."""
    out: list[str] = []
    for m in messages:
        if m.role != "user":
            continue
        inside = False
        for line in m.content.splitlines():
            low = line.strip().lower()
            if low.startswith(MEMORY_HEADS):
                inside = True
                continue
            if inside and low.endswith(MEMORY_ENDS):
                inside = False
            elif inside and low:
                out.append(line.strip().lstrip("-*• ").strip())
    return [line for line in out if line]


def stored_preference(prompt: dt.Prompt, messages: list[Message], hints: Hints) -> str | None:
    gold = str(hints.get("gold_preference") or "").strip()
    if gold:
        return gold
    lines = memory_lines(messages)
    if lines:
        return lines[0]
    return prompt.user_turns[0].strip() if prompt.user_turns else None


def lead(preference: str) -> str:
    return f"Since I know this about you ({preference.strip().rstrip('.')}), let me tie it in."


def wants_restraint(hints: Hints) -> bool:
    return hints.get("restraint") is True


def compose(prompt: dt.Prompt, messages: list[Message], hints: Hints, oracle_answer) -> str:
    """``oracle_answer(prompt, hints)`` is demo:oracle's answer, used where a gold preference applies."""
    pref = stored_preference(prompt, messages, hints)
    if prompt.answer_format != "open" or (hints.get("gold_preference") and not wants_restraint(hints)):
        return oracle_answer(prompt, hints)
    gold = hints.get("answer")
    body = str(gold).strip() if gold is not None and str(gold).strip() else None
    answer = body or prose.generic(dp.read_question(prompt.question), prompt.short_answer)
    return f"{lead(pref)}\n\n{answer}" if pref else answer
