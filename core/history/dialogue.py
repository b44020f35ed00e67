"""A session's dialogue as plain text: the summary prompt's input and the summary cache's hash input."""

from __future__ import annotations

from core.model import Session

LOG_ROLES = {"user": "User", "assistant": "AI", "system": "System"}


def session_log(session: Session) -> str:
    """One session's turns as ``User:`` / ``AI:`` lines."""
    return "\n\n".join(f"{LOG_ROLES[t.role]}: {t.content}" for t in session.turns)
