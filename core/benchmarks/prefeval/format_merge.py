"""Re-importing PrefEval: merge a topic's newly imported forms into the stored users."""

from __future__ import annotations

from core.benchmarks.prefeval.format_files import FORM_DIRS
from core.benchmarks.prefeval.format_topic import SAME_PREFERENCE, similarity
from core.formats.errors import FormatError
from core.model import Query, Session, UserBundle

FORM_ORDER = list(FORM_DIRS.values())


def merge_bundles(stored: UserBundle, new: UserBundle) -> UserBundle:
    """One PrefEval user from the stored one and a new import of (some of) its files.

    Sessions and queries by id, the new one winning, except that an MCQ whose options are
    unchanged keeps its stored order (runs stay comparable). The preference text is the explicit
    wording when either side has it; the persona comes from the persona-driven file; evidence is
    the union. A different question means a different record: FormatError, nothing is merged.
    """
    uid = new.user.id
    old_q, new_q = _open_question(stored), _open_question(new)
    if old_q is not None and new_q is not None and old_q.strip() != new_q.strip():
        raise FormatError(
            uid, f"expected the same question as the stored user (files are matched by index), got {new_q!r}"
        )
    wording = {s.id: _session_wording(s, b) for b in (stored, new) for s in b.sessions}
    sessions = {s.id: s for s in stored.sessions} | {s.id: s for s in new.sessions}
    has_explicit = [b for b in (new, stored) if any(s.meta.get("prefeval_form") == "explicit" for s in b.sessions)]
    (base_pref,) = (has_explicit[0] if has_explicit else new).preferences
    text = base_pref.text
    merged_sessions = []
    for s in sorted(sessions.values(), key=lambda s: FORM_ORDER.index(s.meta.get("prefeval_form", "mcq"))):
        own = wording[s.id]
        if own.strip() != text.strip() and similarity(own, text) < SAME_PREFERENCE:
            raise FormatError(uid, f"expected the same preference as the stored user, got {own!r}")
        meta = {k: v for k, v in s.meta.items() if k != "prefeval_preference"}
        if own != text:
            meta["prefeval_preference"] = own
        merged_sessions.append(s.model_copy(update={"meta": meta}))
    queries = {q.id: q for q in stored.queries}
    for q in new.queries:
        kept = queries.get(q.id)
        queries[q.id] = kept if kept is not None and q.kind == "mcq" and _raw_options(kept) == _raw_options(q) else q
    evidence: dict[int, list[str]] = {}
    for b in (stored, new):
        for expr, sids in b.preferences[0].evidence.items():
            evidence[expr] = list(dict.fromkeys([*evidence.get(expr, []), *sids]))
    pref = base_pref.model_copy(update={"text": text, "evidence": dict(sorted(evidence.items()))})
    persona_side = next(
        (b for b in (new, stored) if any(s.meta.get("prefeval_form") == "persona-driven" for s in b.sessions)), new
    )
    user = new.user.model_copy(update={"persona": persona_side.user.persona})
    order = {"open": 0, "mcq": 1}
    return UserBundle.model_validate(
        {
            "user": user,
            "sessions": merged_sessions,
            "preferences": [pref],
            "queries": sorted(queries.values(), key=lambda q: order.get(q.kind, 2)),
            "attributes": [*new.attributes],
        }
    )


def _open_question(b: UserBundle) -> str | None:
    return next((q.text for q in b.queries), None)


def _session_wording(s: Session, b: UserBundle) -> str:
    return str(s.meta.get("prefeval_preference") or b.preferences[0].text)


def _raw_options(q: Query) -> list[str] | None:
    order = q.meta.get("option_order")
    if not isinstance(order, list) or sorted(order) != list(range(len(q.options))):
        return None
    return [q.options[order.index(k)] for k in range(len(q.options))]
