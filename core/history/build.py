"""Context configurations → the ordered history a model sees, with token counts and evidence positions.

RealPref (Table 2) builds a history from the user-specific sessions (life events + the chosen
expression type's preference sessions, here also CUPID task sessions) in chronological order and
lengthens it with user-independent filler sessions: *interval* filler is scattered between the
user sessions, *tail* filler is appended after them, pushing the evidence away from the query.
CUPID adds *full*, *oracle* and *summaries*; *none* is the no-history baseline and *custom* takes
operator-picked sessions; *prefeval-turns* appends PrefEval's first 2N inter-turn messages after
the preference session (:mod:`core.history.prefeval_turns`).

Choices written down (the papers are silent on them):

* Chronology: sessions sort by date, ties and undated sessions keep their bundle order; an undated
  session inherits the date of the dated session before it, so it stays next to its neighbours.
* Interval filler goes into the gap *before* a user session chosen uniformly per filler session
  (so none lands after the last user session: that is what tail filler is for). A history of ONE
  user session (a PrefEval user) has no gap between sessions: its filler goes after it, between
  the preference and the question, as PrefEval's inter turns do.
* Filler: see :mod:`core.history.filler` (seeded, ±2 % of the target, reuse and cuts noted).
* A session's tokens = its turns' contents + the per-message overhead
  (:func:`core.history.tokens.session_tokens`), i.e. what those turns cost as chat messages.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from core.history.configs import ContextConfig, ContextError, config_named
from core.history.evidence_depth import evidence_depth_line
from core.history.evidence_placement import place_evidence
from core.history.filler import TOLERANCE, FillerSource, fill, scatter
from core.history.prefeval_turns import inter_pool, inter_turn_sessions
from core.history.selection import chronological, oracle_sessions, user_specific_sessions
from core.history.summaries import Summariser, summaries_async, summaries_sync
from core.history.tokens import DEFAULT_ENCODING, MESSAGE_OVERHEAD, count_tokens, session_tokens
from core.history.types import BuiltContext, ContextSession
from core.model import HISTORY_END, FillerPool, Query, Session, UserBundle
from core.plan import EvidencePosition


def build_context(
    bundle: UserBundle,
    *,
    query: Query | str | None = None,
    expression_type: int | None = None,
    config: str | ContextConfig = "simple",
    seed: int = 0,
    filler_pools: Iterable[FillerPool] = (),
    session_ids: Sequence[str] | None = None,
    summarise: Callable[[Session], str] | None = None,
    summary_cache=None,
    summary_model: str = "unknown",
    encoding: str = DEFAULT_ENCODING,
    turns: int | None = None,
    turns_order: str = "official",
    evidence_depth: float | None = None,
) -> BuiltContext:
    """Build the ordered history for one user, query and configuration (deterministic per seed).

    ``evidence_depth`` (0…1) moves the query's gold sessions to that depth of the history
    (:mod:`core.history.evidence_placement`).

    ``summarise`` (summaries configuration) is a synchronous ``session -> summary`` callable; use
    :func:`abuild_context` for an async one. Without it, sessions whose summary is not in
    ``summary_cache`` show a placeholder and are listed in ``summary_requests``.
    """
    cfg = config if isinstance(config, ContextConfig) else config_named(config)
    summaries: dict[str, str] = {}
    if cfg.name == "summaries":
        summaries = summaries_sync(bundle.sessions, summarise, summary_cache, summary_model)
    layout = Layout(turns, turns_order, evidence_depth)
    return _build(
        bundle, query, expression_type, cfg, seed, list(filler_pools), session_ids, summaries, encoding, layout
    )


async def abuild_context(
    bundle: UserBundle,
    *,
    query: Query | str | None = None,
    expression_type: int | None = None,
    config: str | ContextConfig = "simple",
    seed: int = 0,
    filler_pools: Iterable[FillerPool] = (),
    session_ids: Sequence[str] | None = None,
    summarise: Summariser | None = None,
    summary_cache=None,
    summary_model: str = "unknown",
    concurrency: int = 4,
    encoding: str = DEFAULT_ENCODING,
    turns: int | None = None,
    turns_order: str = "official",
    evidence_depth: float | None = None,
) -> BuiltContext:
    """:func:`build_context` with a sync or async summariser (summaries run ``concurrency`` at a time)."""
    cfg = config if isinstance(config, ContextConfig) else config_named(config)
    summaries: dict[str, str] = {}
    if cfg.name == "summaries":
        summaries = await summaries_async(bundle.sessions, summarise, summary_cache, summary_model, concurrency)
    layout = Layout(turns, turns_order, evidence_depth)
    return _build(
        bundle, query, expression_type, cfg, seed, list(filler_pools), session_ids, summaries, encoding, layout
    )


class Layout(NamedTuple):
    """Where things go in the built history besides the configuration: PrefEval inter turns and
    their order, and the depth the gold evidence is moved to."""

    turns: int | None = None
    turns_order: str = "official"
    evidence_depth: float | None = None


def _resolve_query(bundle: UserBundle, query: Query | str | None) -> Query | None:
    if query is None or isinstance(query, Query):
        return query
    try:
        return bundle.query(query)
    except KeyError as exc:
        raise ContextError(str(exc.args[0])) from None


def default_expression_type(bundle: UserBundle, expression_type: int | None) -> int | None:
    """``expression_type``, or when none is given the most implicit one the user has (None when
    untyped): the type a context built without one used, for whoever reads its evidence later."""
    types = bundle.expression_types()
    return types[-1] if expression_type is None and types != [0] else expression_type


def resolve_expression_type(
    bundle: UserBundle, expression_type: int | None, cfg: ContextConfig, notes: list[str]
) -> int | None:
    """The expression type the context uses (the most implicit one present when none is given, as
    the TUI and the CLI choose; None when untyped)."""
    types = bundle.expression_types()
    typed = types != [0]
    if typed and expression_type is None:
        notes.append(f"no expression type given; using type {types[-1]}")
        return default_expression_type(bundle, None)
    if typed and expression_type not in types and cfg.name not in ("full", "none", "custom"):
        raise ContextError(f"user {bundle.user.id!r} has no expression type {expression_type}; it has {types}")
    if not typed and expression_type not in (None, 0):
        notes.append(f"this history has no expression types; type {expression_type} ignored")
    return expression_type


def choose_sessions(
    bundle: UserBundle,
    query: Query | None,
    expression_type: int | None,
    cfg: ContextConfig,
    pools: list[FillerPool],
    session_ids: Sequence[str] | None,
    notes: list[str],
) -> list[Session]:
    """The user's sessions (or the picked ones) that the configuration shows, in order."""
    if cfg.name == "none":
        notes.append("no history: the model sees only the query (generic baseline)")
        return []
    if cfg.name in ("full", "summaries"):
        return chronological(bundle.sessions)
    if cfg.name == "oracle":
        return oracle_sessions(bundle, query, expression_type, notes)
    if cfg.name == "custom":
        if not session_ids:
            raise ContextError("the custom context needs session ids")
        by_id = {p_s.id: p_s for p in pools for p_s in p.sessions}
        by_id.update({s.id: s for s in bundle.sessions})
        unknown = [sid for sid in session_ids if sid not in by_id]
        if unknown:
            raise ContextError(f"unknown session ids: {', '.join(unknown)}")
        notes.append("custom: sessions in the order given")
        return [by_id[sid] for sid in dict.fromkeys(session_ids)]
    return user_specific_sessions(bundle, expression_type)


def before_question(bundle: UserBundle, query: Query, chosen: list[Session], notes: list[str]) -> list[Session]:
    """Only the sessions up to the query's ``HISTORY_END`` (PersonaMem: the context up to the
    question's end index): what came after the question never reaches its prompt."""
    if HISTORY_END not in query.meta:
        return chosen
    end = query.meta[HISTORY_END]
    order = {s.id: i for i, s in enumerate(bundle.sessions)}
    last = order.get(end, -1) if end else -1
    kept = [s for s in chosen if s.kind == "filler" or order.get(s.id, -1) <= last]
    later = len(bundle.sessions) - (last + 1)
    if later:
        where = f"after session {end}" if end else "before the first session"
        notes.append(f"the question is asked {where}: the {later} later session(s) are never shown")
    return kept


def apply_summaries(
    user: list[ContextSession], summaries: dict[str, str], encoding: str, notes: list[str]
) -> list[str]:
    """Show each session as its summary (placeholder when missing); returns the ids still to summarise."""
    pending = []
    for cs in user:
        text = summaries.get(cs.id)
        if text is None:
            pending.append(cs.id)
            text = f"[summary of session {cs.id} not written yet: it needs a model call]"
        cs.summary = text
        cs.tokens = count_tokens(text, encoding) + MESSAGE_OVERHEAD
    if pending:
        notes.append(f"summaries: {len(pending)} of {len(user)} sessions have no summary yet (placeholders shown)")
    return pending


@dataclass
class _Filler:
    interval: list[ContextSession]
    tail: list[ContextSession]
    within: bool | None
    truncated: bool


def add_filler(cfg: ContextConfig, source: FillerSource, encoding: str, notes: list[str]) -> _Filler:
    """Interval and tail filler to the configuration's targets, with notes on misses and reuse."""
    out = _Filler([], [], None, False)
    if not cfg.filler_target:
        return out
    if not len(source):
        notes.append(f"filler pool is empty: {cfg.label} needs {cfg.filler_target:,} filler tokens; none added")
        out.within = False
        return out
    out.within = True
    for target, segment in ((cfg.interval, "interval"), (cfg.tail, "tail")):
        if not target:
            continue
        got, total, cut = fill(target, segment, source, encoding)
        out.truncated |= cut
        (out.interval if segment == "interval" else out.tail).extend(got)
        if abs(total - target) > TOLERANCE * target:
            out.within = False
            notes.append(f"{segment} filler: {total:,} tokens for a target of {target:,} (outside ±2%)")
    if out.truncated:
        notes.append("the last filler session was cut at a token boundary to land on the target")
    if source.reused:
        pool_tokens = sum(session_tokens(s, encoding) for _, s in source.items)
        notes.append(
            f"filler pool too small ({len(source)} sessions, {pool_tokens:,} tokens for "
            f"{cfg.filler_target:,} needed): sessions were reused (sampled with replacement)"
        )
    return out


def prefeval_inter_turns(
    pools: list[FillerPool], turns: tuple[int | None, str], seed: int, encoding: str, notes: list[str]
) -> list[ContextSession]:
    """PrefEval's inter turns, appended after the user's session (:mod:`core.history.prefeval_turns`)."""
    n, order = turns
    if n is None:
        notes.append("prefeval-turns without --turns: 0 inter turns")
        n = 0
    if n == 0:
        return []
    got = inter_turn_sessions(inter_pool(pools), n, order, seed, encoding)
    if order == "official":
        notes.append(f"PrefEval inter turns: the first {2 * n} messages of the pool, as PrefEval; --seed has no effect")
    else:
        notes.append(f"inter turns: {2 * n} messages after a seeded shuffle of the pool's conversations (ours)")
    return got


def locate_evidence(
    bundle: UserBundle,
    query: Query,
    expression_type: int | None,
    ordered: list[ContextSession],
    cfg: ContextConfig,
    notes: list[str],
) -> tuple[list[EvidencePosition], list[str]]:
    """Where each gold evidence session sits (position, tokens between it and the query), and the
    ones the context left out."""
    gold = bundle.gold_evidence(query, expression_type)
    index = {cs.key: i for i, cs in enumerate(ordered) if cs.pool_id is None}
    suffix = [0] * (len(ordered) + 1)
    for i in range(len(ordered) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + ordered[i].tokens
    evidence: list[EvidencePosition] = []
    missing: list[str] = []
    for sid in gold:
        if sid in index:
            i = index[sid]
            evidence.append(EvidencePosition(session_id=sid, position=i, tokens_to_query=suffix[i + 1]))
        else:
            missing.append(sid)
    if missing and cfg.name != "none":
        notes.append(f"gold evidence not in this context: {', '.join(missing)}")
    depth = evidence_depth_line(query)
    if depth:
        notes.append(depth)
    elif not gold:
        notes.append("the query has no gold evidence sessions")
    return evidence, missing


def _build(
    bundle: UserBundle,
    query_ref: Query | str | None,
    expression_type: int | None,
    cfg: ContextConfig,
    seed: int,
    pools: list[FillerPool],
    session_ids: Sequence[str] | None,
    summaries: dict[str, str],
    encoding: str,
    layout: Layout,
) -> BuiltContext:
    query = _resolve_query(bundle, query_ref)
    turns = (layout.turns, layout.turns_order)
    evidence_depth = layout.evidence_depth
    notes: list[str] = []
    typed = bundle.expression_types() != [0]
    expression_type = resolve_expression_type(bundle, expression_type, cfg, notes)
    chosen = choose_sessions(bundle, query, expression_type, cfg, pools, session_ids, notes)
    if query is not None and cfg.name != "custom":
        chosen = before_question(bundle, query, chosen, notes)

    user = [ContextSession(s, session_tokens(s, encoding), s.kind == "filler") for s in chosen]
    for cs in user:
        if cs.is_filler:
            cs.segment = "interval"
    pending = apply_summaries(user, summaries, encoding, notes) if cfg.name == "summaries" else []

    source = FillerSource(pools, seed)
    filler = add_filler(cfg, source, encoding, notes)
    if cfg.name == "prefeval-turns":
        filler.tail = prefeval_inter_turns(pools, turns, seed, encoding, notes)
    elif turns[0] is not None:
        notes.append(f"--turns {turns[0]} ignored: only the prefeval-turns context takes inter turns")
    ordered = scatter(user, filler.interval, seed) + filler.tail
    if len(user) == 1 and filler.interval:
        notes.append("one user session: its interval filler goes after it, between it and the question (as PrefEval)")
    if evidence_depth is not None:
        if query is None:
            notes.append(f"evidence depth {evidence_depth:g} ignored: no query, so no gold evidence")
        else:
            gold = bundle.gold_evidence(query, expression_type if typed else None)
            ordered = place_evidence(ordered, set(gold), evidence_depth, notes)

    evidence: list[EvidencePosition] = []
    missing: list[str] = []
    if query is not None:
        evidence, missing = locate_evidence(bundle, query, expression_type if typed else None, ordered, cfg, notes)

    user_tokens = sum(cs.tokens for cs in user)
    interval_tokens = sum(cs.tokens for cs in filler.interval)
    tail_tokens = sum(cs.tokens for cs in filler.tail)
    return BuiltContext(
        config=cfg.name,
        seed=seed,
        expression_type=expression_type if typed else None,
        query_id=query.id if query is not None else None,
        sessions=ordered,
        history_tokens=user_tokens + interval_tokens + tail_tokens,
        user_tokens=user_tokens,
        interval_tokens=interval_tokens,
        tail_tokens=tail_tokens,
        target_tokens=cfg.filler_target or None,
        within_target=filler.within,
        evidence=evidence,
        missing_evidence=missing,
        notes=notes,
        reused_filler=source.reused,
        truncated_filler=filler.truncated,
        summary_requests=pending,
        encoding=encoding,
    )
