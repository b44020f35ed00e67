"""CUPID's interaction log of a built context, exactly as its ``utils/formatting.py`` builds it
(the layout, shared with the *summaries* context's per-session call, is
:func:`core.methods.render.interaction_log`; its pieces are the ``log_*`` tables of ``templates.toml``)."""

from __future__ import annotations

from core.history.types import BuiltContext
from core.methods.render import interaction_log


def cupid_log(ctx: BuiltContext) -> str:
    """Every session of the context in CUPID's log layout; a summarised session shows
    ``#### Summary`` in place of its messages (prefscope's: the repo has no summaries setting)."""
    return interaction_log([(cs.session, cs.summary) for cs in ctx.sessions])
