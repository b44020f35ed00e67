"""The call that summarises ONE session for the *summaries* context configuration (cached per
session), with CUPID's Fig. 23 prompt (template family ``cupid``, found through the registry),
and the parser that turns its JSON reply into the summary text."""

from __future__ import annotations

import json
import re

from core.history.tokens import DEFAULT_ENCODING
from core.methods import prompts
from core.methods.base import make_step
from core.methods.render import single_session_log
from core.model import Session
from core.plan import Message, PromptPlan

F = "cupid"


def session_summary_plan(session: Session, encoding: str = DEFAULT_ENCODING) -> PromptPlan:
    """The Fig. 23 call that summarises ONE session (the summaries context setting, cached per session)."""
    msgs = [
        Message(role="system", content=prompts.text(F, "summarise_system")),
        Message(role="user", content=prompts.text(F, "summarise_user", interaction_log=single_session_log(session))),
    ]
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
