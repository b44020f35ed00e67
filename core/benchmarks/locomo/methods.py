"""LoCoMo's own QA prompt (``locomo-qa``), as snap-research/locomo @ 9228632 builds it
(task_eval/evaluate_gpts.py, batch size 1): the opening sentence naming the two speakers, every
session as ``DATE: …\\nCONVERSATION:\\n`` + ``<name> said, "<text>"`` lines (no blank line between
sessions, ``\\n\\n`` per session once at the very end), ``\\n\\n``, then the question prompt. One user
message, temperature 0, max_tokens 32.

Ours, written next to the templates: speaker order (the code's is Python set order), the seeded
category-5 option order (the code's coin is unseeded), image captions shown (the code tests a field
the release does not have). Whole conversation, no budget walk (gpt-4-turbo's 128k window holds
every sample); evidence ids are never shown. Any other user can be asked in the same layout.
"""

from __future__ import annotations

import hashlib
import re

from core.benchmarks.locomo.format import ADVERSARIAL_CATEGORY
from core.benchmarks.locomo.format_session import speaker_names, turn_text
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import session_date_label
from core.model import Query
from core.plan import Message, PromptPlan

F = "locomo"
TEMPERATURE = 0.0
MAX_TOKENS = 32


#: Names for sessions that are not LoCoMo's (another dataset's user, filler): the roles.
ROLE_NAMES = {"user": "User", "assistant": "AI"}


def cat5_options(query: Query) -> tuple[str, str]:
    """Options (a), (b) of a category-5 question: "not mentioned" and the adversarial answer, in an
    order drawn by a coin seeded with the query id (the code: unseeded ``random.random() < 0.5``)."""
    not_mentioned = prompts.text(F, "not_mentioned")
    trap = str(query.meta.get("adversarial_answer", ""))
    heads = hashlib.sha256(query.id.encode("utf-8")).digest()[0] % 2 == 0
    return (not_mentioned, trap) if heads else (trap, not_mentioned)


def question(query: Query) -> str:
    category = query.meta.get("category")
    if category == 2:
        return query.text + prompts.text(F, "suffix_cat2")
    if category == ADVERSARIAL_CATEGORY:
        a, b = cat5_options(query)
        return query.text + prompts.text(F, "suffix_cat5", option_a=a, option_b=b)
    return query.text


def conversation(ctx: BuiltContext) -> tuple[list[str], str, int]:
    """(``[speaker_a, speaker_b]``, the dated conversation string, number of sessions that are not
    LoCoMo's). Other sessions (another benchmark's user, filler) are shown in the same layout with
    the roles as names and their ISO date (ours); a summarised session shows its summary as one turn."""
    pair: list[str] | None = None
    foreign = 0
    parts: list[str] = []
    for cs in ctx.sessions:
        names = speaker_names(cs.session)
        if names is None:
            foreign += 1
            by_role = ROLE_NAMES
        else:
            pair, by_role = names
        date = session_date_label(cs.session)
        if date is not None:
            parts.append(prompts.text(F, "session_header", date_time=date))
        if cs.summary is not None:
            parts.append(_fill(prompts.template(F, "dialog_turn")["text"], {"speaker": "Summary", "text": cs.summary}))
            continue
        for i, turn in enumerate(cs.session.turns):
            text, caption = turn_text(cs.session, i)
            line = prompts.template(F, "dialog_turn")["text"]
            parts.append(_fill(line, {"speaker": by_role[turn.role], "text": text}))
            if caption is not None:
                parts.append(prompts.text(F, "image_share", caption=caption))
    pair = pair or [ROLE_NAMES["user"], ROLE_NAMES["assistant"]]
    return pair, "".join(parts) + "\n\n" * len(ctx.sessions), foreign


def _fill(template: str, values: dict[str, str]) -> str:
    # prompts.fill takes names as keyword arguments, and "text" is its own parameter's name.
    return re.sub(r"\{(" + "|".join(values) + r")\}", lambda m: values[m[1]], template)


def qa(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    (speaker_a, speaker_b), conv, foreign = conversation(ctx)
    opening = prompts.text(F, "conv_start", speaker_1=speaker_a, speaker_2=speaker_b)
    key = "qa_cat5" if query.meta.get("category") == ADVERSARIAL_CATEGORY else "qa"
    prompt = opening + conv + "\n\n" + prompts.text(F, key, question=question(query))
    step = make_step("answer", [Message(role="user", content=prompt)], "LoCoMo's QA prompt", opts.encoding)
    step.temperature, step.max_tokens = TEMPERATURE, MAX_TOKENS
    notes = ["LoCoMo QA prompt as task_eval/evaluate_gpts.py @9228632 (batch size 1, one user message)"]
    if foreign:
        notes.append(f"{foreign} session(s) are not LoCoMo's: shown with role names and ISO dates (ours)")
    if key == "qa_cat5":
        a, b = cat5_options(query)
        notes.append(f"category-5 options (seeded by the query id): (a) {a!r} (b) {b!r}")
    return make_plan("locomo-qa", [step], ctx, query, notes=notes)
