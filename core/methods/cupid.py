"""CUPID prompts (seeds/003 §4, Figs 21–23): response generation with the interaction log,
preference inference (≤30 words), and summary memory (summarise, then answer).

Also the per-session summary call used by the *summaries* context configuration
(:func:`session_summary_plan`) and the parser that turns its JSON reply into the summary text
(:func:`summary_from_reply`).
"""

from __future__ import annotations

import json
import re

from core.history.tokens import DEFAULT_ENCODING
from core.history.types import BuiltContext
from core.methods import prompts
from core.methods.base import MethodOptions, make_plan, make_step
from core.methods.render import interaction_log, question_text, single_session_log
from core.model import Query, Session
from core.plan import Message, PromptPlan

F = "cupid"


def _pair(system: str, user: str) -> list[Message]:
    return [Message(role="system", content=system), Message(role="user", content=user)]


def generation(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    user = prompts.text(F, "generate_user", interaction_sessions=interaction_log(ctx), request=question_text(query))
    msgs = _pair(prompts.text(F, "generate_system"), user)
    notes = ["interaction-log layout (### Session n / User: / AI:) is prefscope's; CUPID does not print it"]
    return make_plan(
        "cupid-generate",
        [make_step("answer", msgs, "Fig. 22: interaction log + request", opts.encoding)],
        ctx,
        query,
        notes=notes,
    )


def inference(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    system = prompts.text(F, "infer_system", examples=prompts.text(F, "infer_examples"))
    user = prompts.text(F, "infer_user", previous_interactions=interaction_log(ctx), current_request=query.text)
    msgs = _pair(system, user)
    notes = ["Fig. 21's {examples} are prefscope's own (not published)"]
    step = make_step("infer", msgs, "Fig. 21: infer the preference (≤30 words)", opts.encoding)
    return make_plan("cupid-infer", [step], ctx, query, notes=notes, answer_format_override="preference")


def summary_memory(ctx: BuiltContext, query: Query, opts: MethodOptions) -> PromptPlan:
    first = _pair(
        prompts.text(F, "summarise_system"), prompts.text(F, "summarise_user", interaction_log=interaction_log(ctx))
    )
    second = _pair(
        prompts.text(F, "generate_system"),
        prompts.text(F, "generate_user", interaction_sessions="{{output:summaries}}", request=question_text(query)),
    )
    steps = [
        make_step("summaries", first, "Fig. 23: summarise every session (context + preferences)", opts.encoding),
        make_step("answer", second, "Fig. 22 with the summaries in place of the log", opts.encoding),
    ]
    return make_plan("summary-memory", steps, ctx, query)


def session_summary_plan(session: Session, encoding: str = DEFAULT_ENCODING) -> PromptPlan:
    """The Fig. 23 call that summarises ONE session (the summaries context setting, cached per session)."""
    msgs = _pair(
        prompts.text(F, "summarise_system"),
        prompts.text(F, "summarise_user", interaction_log=single_session_log(session)),
    )
    return PromptPlan(
        method="cupid-session-summary",
        steps=[make_step("summary", msgs, f"Fig. 23 summary of session {session.id}", encoding)],
        answer_format="summary",
        notes=[f"session {session.id}"],
    )


def summary_from_reply(text: str) -> str:
    """The Fig. 23 JSON reply as bullet text (context, then preferences); the raw reply if not JSON."""
    match = re.search(r"```(?:json)?\s*(\{.*\})\s*```", text, re.S) or re.search(r"(\{.*\})", text, re.S)
    try:
        data = json.loads(match.group(1)) if match else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("summaries"), list):
        return text.strip()
    lines: list[str] = []
    for item in data["summaries"]:
        if not isinstance(item, dict):
            continue
        lines.append("Context:")
        lines += [f"- {c}" for c in item.get("context", []) if isinstance(c, str)]
        lines.append("Preferences:")
        lines += [f"- {p}" for p in item.get("preferences", []) if isinstance(p, str)]
    return "\n".join(lines) if lines else text.strip()
