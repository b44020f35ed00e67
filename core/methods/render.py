"""How a built history is shown to a model: chat messages, a CUPID-style log, or a transcript.

* :func:`history_messages` – each turn becomes a message with its own role, in order (RealPref and
  InterPref put the history in the conversation and the question last). Consecutive messages of
  the same role are merged with a blank line, so roles always alternate whatever the sessions'
  boundaries (some providers reject two user messages in a row). A summarised session (CUPID
  summaries setting) becomes one user message ``Summary of an earlier conversation …``.
* :func:`interaction_log` – one text block, ``### Session n (date)`` then ``User:`` / ``AI:``
  lines; CUPID's Figures 21–23 take the log as text but do not print its layout, so this is ours.
* :func:`transcript` – turns prefixed with their reference ``[session#index]`` so an extractor can
  cite evidence (Re-Centering attributes point at turns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.history.dialogue import LOG_ROLES, session_log
from core.model import MCQ_LETTERS, Query, Session
from core.plan import Message

if TYPE_CHECKING:
    from core.history.types import BuiltContext, ContextSession


def merge_same_role(messages: list[Message]) -> list[Message]:
    out: list[Message] = []
    for m in messages:
        if out and out[-1].role == m.role and m.role != "system":
            out[-1] = Message(role=m.role, content=out[-1].content + "\n\n" + m.content)
        else:
            out.append(m)
    return out


def _date(cs: ContextSession) -> str:
    return f" ({cs.session.date.isoformat()})" if cs.session.date else ""


def history_messages(ctx: BuiltContext) -> list[Message]:
    """The history as chat messages (not yet merged: see :func:`conversation`)."""
    out: list[Message] = []
    for cs in ctx.sessions:
        if cs.summary is not None:
            when = f" on {cs.session.date.isoformat()}" if cs.session.date else ""
            out.append(Message(role="user", content=f"Summary of an earlier conversation{when}:\n{cs.summary}"))
            continue
        out += [Message(role=t.role, content=t.content) for t in cs.session.turns]
    return out


def conversation(ctx: BuiltContext, final_user: str, system: str | None = None) -> list[Message]:
    """System prompt (if any) + history + the final user message, roles alternating."""
    msgs = [Message(role="system", content=system)] if system else []
    msgs += history_messages(ctx)
    msgs.append(Message(role="user", content=final_user))
    return merge_same_role(msgs)


def interaction_log(ctx: BuiltContext) -> str:
    blocks = []
    for n, cs in enumerate(ctx.sessions, 1):
        if cs.summary is not None:
            blocks.append(f"### Session {n}{_date(cs)} – summary\n\n{cs.summary}")
        else:
            blocks.append(f"### Session {n}{_date(cs)}\n\n{session_log(cs.session)}")
    return "\n\n".join(blocks) if blocks else "(no previous sessions)"


def single_session_log(session: Session) -> str:
    date = f" ({session.date.isoformat()})" if session.date else ""
    return f"### Session 1{date}\n\n{session_log(session)}"


def transcript(ctx: BuiltContext) -> str:
    blocks = []
    for n, cs in enumerate(ctx.sessions, 1):
        lines = [f"## Conversation {n}{_date(cs)}"]
        if cs.summary is not None:
            lines.append(f"[{cs.key}] Summary: {cs.summary}")
        else:
            lines += [f"[{cs.key}#{i}] {LOG_ROLES[t.role]}: {t.content}" for i, t in enumerate(cs.session.turns)]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) if blocks else "(no earlier conversations)"


def question_text(query: Query) -> str:
    """The question as the user asks it: open as is; MCQ with lettered options and the answer-format
    instruction; true/false with the yes/no instruction."""
    from core.methods.answers import answer_instruction

    if query.kind == "mcq":
        options = "\n".join(f"{MCQ_LETTERS[i]}. {opt}" for i, opt in enumerate(query.options))
        return f"{query.text}\n\n{options}\n\n{answer_instruction(query)}"
    if query.kind == "tf":
        return f"{query.text}\n\n{answer_instruction(query)}"
    return query.text
