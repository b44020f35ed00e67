"""How a built history is shown to a model: chat messages, a CUPID-style log, or a transcript.

* :func:`history_messages` – each turn becomes a message with its own role, in order (RealPref and
  InterPref put the history in the conversation and the question last). Consecutive messages of
  the same role are merged with a blank line, so roles always alternate whatever the sessions'
  boundaries (some providers reject two user messages in a row). A summarised session (CUPID
  summaries setting) becomes one user message ``Summary of an earlier conversation …``. A PrefEval
  explicit preference is followed by ``{{output:preference}}``: the model's own reply to it,
  written in a first plan step (PrefEval's ``create_user_pref_message``).
* :func:`interaction_log` – one text block in the layout of CUPID's official code (``### Session n``,
  ``#### User`` / ``#### AI Assistant``, ``---`` after each session): CUPID's prompts and the
  *summaries* context's per-session call (:mod:`core.methods.session_summary`) use it.
* :func:`transcript` – turns prefixed with a neutral reference ``[S<n>#index]`` so an extractor can
  cite evidence (Re-Centering attributes point at turns); the plan keeps the alias table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.history.dialogue import LOG_ROLES
from core.methods import prompts
from core.methods.aliases import Aliases
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


def session_date_label(session: Session) -> str | None:
    """The session's date as its dataset wrote it (LoCoMo's ``4:04 pm on 20 January, 2023``), else ISO."""
    raw = session.meta.get("date_time")
    if isinstance(raw, str) and raw.strip():
        return raw
    return session.date.isoformat() if session.date else None


def dated_header(session: Session) -> str | None:
    """LoCoMo's ``DATE: …\nCONVERSATION:\n`` for a session that carries its raw ``date_time``.

    Data-driven: only the LoCoMo importer stores ``meta["date_time"]``, so RealPref, PrefEval and
    CUPID prompts (whose own protocols show no dates) stay as their papers have them."""
    raw = session.meta.get("date_time")
    if not (isinstance(raw, str) and raw.strip()):
        return None
    return prompts.text("locomo", "session_header", date_time=raw)


def _date(cs: ContextSession) -> str:
    label = session_date_label(cs.session)
    return f" ({label})" if label else ""


#: The step in which the model answers PrefEval's bare explicit preference; its reply follows the
#: preference in the history as ``{{output:preference}}`` (PrefEval ``create_user_pref_message``).
PREFERENCE_STEP = "preference"
PREFERENCE_REPLY = "{{output:" + PREFERENCE_STEP + "}}"


def generated_reply_session(session: Session) -> bool:
    """A PrefEval explicit preference: one user turn whose assistant reply the model writes live."""
    return session.meta.get("prefeval_form") == "explicit" and bool(session.turns) and session.turns[-1].role == "user"


def history_messages(ctx: BuiltContext) -> list[Message]:
    """The history as chat messages (not yet merged: see :func:`conversation`).

    A LoCoMo session's first message starts with LoCoMo's ``DATE:`` header (prefscope's adaptation
    of its one-string context to chat messages), so temporal questions can be answered."""
    out: list[Message] = []
    for cs in ctx.sessions:
        header = dated_header(cs.session)
        if cs.summary is not None:
            if header is not None:
                label = header.removesuffix("CONVERSATION:\n")
                out.append(Message(role="user", content=f"{label}Summary of an earlier conversation:\n{cs.summary}"))
                continue
            when = f" on {cs.session.date.isoformat()}" if cs.session.date else ""
            out.append(Message(role="user", content=f"Summary of an earlier conversation{when}:\n{cs.summary}"))
            continue
        msgs = [Message(role=t.role, content=t.content) for t in cs.session.turns]
        if header is not None and msgs:
            msgs[0] = Message(role=msgs[0].role, content=header + msgs[0].content)
        out += msgs
        if generated_reply_session(cs.session):
            out.append(Message(role="assistant", content=PREFERENCE_REPLY))
    return out


def conversation(ctx: BuiltContext, final_user: str, system: str | None = None) -> list[Message]:
    """System prompt (if any) + history + the final user message, roles alternating."""
    msgs = [Message(role="system", content=system)] if system else []
    msgs += history_messages(ctx)
    msgs.append(Message(role="user", content=final_user))
    return merge_same_role(msgs)


def single_session_log(session: Session) -> str:
    """One session in the interaction-log layout, numbered 1 (the per-session summary call)."""
    return interaction_log([(session, None)])


def interaction_log(sessions: list[tuple[Session, str | None]]) -> str:
    """Sessions as one text block in the layout of CUPID's official code (``### Session n``,
    ``#### User`` / ``#### AI Assistant``, ``---`` after each; the pieces are the ``log_*``
    templates of family ``cupid``); a summarised session shows ``#### Summary`` in place of its
    messages (prefscope's: the repo has no summaries setting)."""

    def piece(key: str, **values: object) -> str:
        return prompts.text("cupid", key, **values)

    out = ""
    for i, (session, summary) in enumerate(sessions):
        out += piece("log_session_header", **{"i+1": i + 1})
        if summary is not None:
            out += piece("log_message", role_str="Summary", content=summary)
        else:
            for t in session.turns:
                out += piece("log_message", role_str="User" if t.role == "user" else "AI Assistant", content=t.content)
        out += piece("log_session_separator")
    return out.strip()


def transcript_aliases(ctx: BuiltContext) -> Aliases:
    """``S1, S2, …`` for the context's sessions in prompt order (filler included)."""
    return Aliases.for_sessions(cs.key for cs in ctx.sessions)


def transcript(ctx: BuiltContext, aliases: Aliases | None = None) -> str:
    """Turns prefixed with a neutral reference ``[S<n>#<index>]`` (never the dataset's session id,
    which can carry gold); ``aliases`` maps them back (default: :func:`transcript_aliases`)."""
    aliases = aliases or transcript_aliases(ctx)
    blocks = []
    for n, cs in enumerate(ctx.sessions, 1):
        lines = [f"## Conversation {n}{_date(cs)}"]
        name = aliases.alias(cs.key)
        if cs.summary is not None:
            lines.append(f"[{name}] Summary: {cs.summary}")
        else:
            lines += [f"[{name}#{i}] {LOG_ROLES[t.role]}: {t.content}" for i, t in enumerate(cs.session.turns)]
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
