"""Add generated restraint probes (:mod:`core.analysis.restraint_probes`) to stored users: read each
user, generate the probes it lacks, store them as queries of that user (``storage.user_queries``).
Idempotent: a second call adds nothing."""

from __future__ import annotations

from collections.abc import Sequence

from app.base import Base
from core.analysis.restraint_probes import ProbeSet, restraint_probes


def add_restraint_probes(workbench: Base, user_ids: Sequence[str]) -> list[ProbeSet]:
    """One :class:`ProbeSet` per user (full ids, in the order given), its ``added`` stored."""
    from storage.user_queries import add_queries

    out = []
    for uid in user_ids:
        found = restraint_probes(workbench.user(uid))
        if found.added:
            add_queries(workbench.db, uid, found.added)
            workbench.forget_user(uid)  # the cached bundle lacks the new queries
        out.append(found)
    return out
