"""LongMemEval's reader prompt (``longmemeval``, ``longmemeval-cot``), as
xiaowu0162/LongMemEval @ 9e0b455 ``src/generation/run_generation.py`` (``prepare_prompt``) builds it
for the full-history-session retriever with ``--history_format json`` and no key expansion:

* one chunk per session of the built context, content = its turns as ``{"role", "content"}``
  (``has_answer`` is never stored on a Turn, so it is removed as the code removes it);
* chunks **sorted by their date string** (plain, stable string sort: ``YYYY/MM/DD (Day) HH:MM``
  is chronological), numbered from 1 after sorting;
* per chunk the ``session_block`` template filled with (n, date, ``"\\n" + json.dumps(turns)``),
  default ``json.dumps`` settings (ASCII escapes, ``", "`` / ``": "`` separators);
* the history string into ``answer`` (direct, ``--cot false``) or ``answer_cot`` (step by step,
  ``--cot true``: the shell script's default "con" reading method) with the question date and
  question; one user message, temperature 0, max_tokens 800 (the code's effective default).

Ours, written in the plan notes: no ``topk_context`` cut (every session of the built context is
shown, as the README's large-topk advice for full history) and no ``o200k_base`` cut of the history
at context size - 1800 (prefscope's context configuration decides the length). A session without
LongMemEval's raw date shows its ISO date; a summarised session shows its summary string as the
JSON content; a query without ``question_date`` gets an empty "Current Date".
"""

from __future__ import annotations

import json

from core.history.types import BuiltContext, ContextSession
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import session_date_label
from core.model import Query
from core.plan import Message, PromptPlan

F = "longmemeval"
TEMPERATURE = 0.0
#: ``--gen_length`` unset: the code means 500/800 but tests the string 'true'/'false' (always truthy).
MAX_TOKENS = 800


def chunk_date(cs: ContextSession) -> str:
    raw = cs.session.meta.get("haystack_date")
    return raw if isinstance(raw, str) else session_date_label(cs.session) or ""


def chunk_content(cs: ContextSession) -> object:
    if cs.summary is not None:
        return cs.summary
    return [{"role": t.role, "content": t.content} for t in cs.session.turns]


def history_string(ctx: BuiltContext) -> str:
    """The dated history, sessions sorted by date string (stable), each as a JSON block."""
    chunks = sorted(((chunk_date(cs), chunk_content(cs)) for cs in ctx.sessions), key=lambda c: c[0])
    return "".join(
        prompts.text(F, "session_block", number=n, date=date, content="\n" + json.dumps(content))
        for n, (date, content) in enumerate(chunks, start=1)
    )


def _reader(ctx: BuiltContext, query: Query, opts: MethodOptions, *, cot: bool) -> PromptPlan:
    name = "longmemeval-cot" if cot else "longmemeval"
    question_date = query.meta.get("question_date")
    prompt = prompts.text(
        F,
        "answer_cot" if cot else "answer",
        history=history_string(ctx),
        question_date=question_date if isinstance(question_date, str) else "",
        question=query.text,
    )
    step = make_step("answer", [Message(role="user", content=prompt)], "LongMemEval's reader prompt", opts.encoding)
    step.temperature, step.max_tokens = TEMPERATURE, MAX_TOKENS
    notes = [
        "LongMemEval reader prompt as src/generation/run_generation.py @9e0b455 (full history, json format, "
        + ("step by step" if cot else "direct")
        + "); no topk_context or o200k length cut (ours: the context configuration sets the length)"
    ]
    if not isinstance(question_date, str):
        notes.append("the query has no question_date: 'Current Date' is left empty (ours)")
    if any(not isinstance(cs.session.meta.get("haystack_date"), str) for cs in ctx.sessions):
        notes.append("sessions without a LongMemEval date show their ISO date (or none) and sort by it (ours)")
    return make_plan(name, [step], ctx, query, notes=notes)


def direct(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _reader(ctx, query, opts, cot=False)


def step_by_step(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    return _reader(ctx, query, opts, cot=True)
