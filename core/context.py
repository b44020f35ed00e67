"""Context configurations → the ordered history a model sees, with token counts and evidence positions.

RealPref (Table 2) builds a history from the user-specific sessions (life events + the chosen
expression type's preference sessions, here also CUPID task sessions) in chronological order and
lengthens it with user-independent filler sessions: *interval* filler is scattered between the
user sessions, *tail* filler is appended after them, pushing the evidence away from the query.
CUPID adds *full*, *oracle* and *summaries*; *none* is the no-history baseline and *custom* takes
operator-picked sessions.

Choices written down (the papers are silent on them):

* Chronology: sessions sort by date, ties and undated sessions keep their bundle order; an undated
  session inherits the date of the dated session before it, so it stays next to its neighbours.
* Interval filler goes into the gap *before* a user session chosen uniformly per filler session
  (so none lands after the last user session: that is what tail filler is for).
* Filler is drawn without replacement from one seeded permutation of all given pools (interval
  first, then tail). When the pools run out, a fresh permutation is drawn and sessions repeat;
  ``reused_filler`` is set and the notes say how short the pools were.
* Targets are filler tokens (35K interval, 105K tail …), hit within ±2 % with whole sessions; a
  session that would overshoot is skipped, and after a run of skips the last one is cut at a turn
  and token boundary to land on the target (``truncated_filler``, noted).
* A session's tokens = its turns' contents + the per-message overhead of :mod:`core.tokens`,
  i.e. what those turns cost as chat messages.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import inspect
import random
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

from core.model import FillerPool, Query, Session, Turn, UserBundle
from core.plan import EvidencePosition
from core.tokens import DEFAULT_ENCODING, MESSAGE_OVERHEAD, count_many, count_tokens, truncate_to_tokens

#: Allowed relative deviation from a filler target.
TOLERANCE = 0.02
#: Consecutive too-large filler sessions skipped before the last one is cut to size.
MAX_SKIPS = 25


@dataclass(frozen=True)
class ContextConfig:
    name: str
    label: str
    interval: int = 0
    tail: int = 0
    description: str = ""
    source: str = ""

    @property
    def filler_target(self) -> int:
        return self.interval + self.tail


CONFIGS: dict[str, ContextConfig] = {
    c.name: c
    for c in [
        ContextConfig("simple", "Simple", 0, 0, "user-specific sessions only (~2K)", "RealPref Table 2"),
        ContextConfig("normal", "Normal", 35_000, 0, "35K filler scattered between user sessions", "RealPref Table 2"),
        ContextConfig("long", "Long", 70_000, 0, "70K filler scattered between user sessions", "RealPref Table 2"),
        ContextConfig("very_long", "Very Long", 140_000, 0, "140K filler scattered between user sessions", "RealPref Table 2"),
        ContextConfig("extended", "Extended", 35_000, 105_000, "35K interval + 105K tail filler", "RealPref Table 2"),
        ContextConfig("extreme", "Extreme", 35_000, 210_000, "35K interval + 210K tail filler", "RealPref Table 2"),
        ContextConfig("full", "Full", 0, 0, "every prior session of the user, all kinds", "CUPID §4"),
        ContextConfig("oracle", "Oracle", 0, 0, "only sessions sharing the query's context factor and preference", "CUPID §4"),
        ContextConfig("summaries", "Summaries", 0, 0, "every prior session replaced by a model-written summary", "CUPID §4.2.3, Fig. 23"),
        ContextConfig("none", "No history", 0, 0, "no history: the generic baseline", "Re-Centering §6, InterPref"),
        ContextConfig("custom", "Custom", 0, 0, "operator-picked sessions, in the order given", "prefscope"),
    ]
}
_ALIASES = {"very-long": "very_long", "verylong": "very_long", "very long": "very_long", "no_history": "none", "no-history": "none"}


def config_named(name: str) -> ContextConfig:
    key = _ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in CONFIGS:
        raise ContextError(f"unknown context configuration {name!r}; expected one of {', '.join(CONFIGS)}")
    return CONFIGS[key]


class ContextError(ValueError):
    """A context cannot be built as asked (unknown config, missing sessions, missing query …)."""


class ContextWindowExceeded(ContextError):
    """The history is larger than the model's context window (raised unless forced)."""

    def __init__(self, tokens: int, window: int):
        self.tokens = tokens
        self.window = window
        super().__init__(
            f"the prompt is {tokens:,} tokens but the model's window is {window:,} tokens "
            f"({tokens - window:,} over); choose a shorter context or force it"
        )


def check_window(tokens: int, window: int | None, force: bool = False) -> str | None:
    """Refuse a prompt larger than ``window`` (raise :class:`ContextWindowExceeded`) unless forced.

    Returns a note to show the operator when forced past the window, else ``None``.
    """
    if window is None or tokens <= window:
        return None
    if not force:
        raise ContextWindowExceeded(tokens, window)
    return f"forced: {tokens:,} tokens sent to a model with a {window:,}-token window ({tokens - window:,} over)"


@dataclass
class ContextSession:
    session: Session
    tokens: int
    is_filler: bool
    #: "user" (user-specific), "interval" or "tail" filler.
    segment: str = "user"
    pool_id: str | None = None
    #: 1 for the first use of a filler session; 2, 3 … when a too-small pool is reused.
    copy: int = 1
    truncated: bool = False
    #: Summaries configuration: the model-written summary shown instead of the turns.
    summary: str | None = None

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def key(self) -> str:
        """Unique within a built context (reused filler sessions get ``@<copy>``)."""
        return self.session.id if self.copy == 1 else f"{self.session.id}@{self.copy}"


@dataclass
class BuiltContext:
    config: str
    seed: int
    expression_type: int | None
    query_id: str | None
    sessions: list[ContextSession]
    history_tokens: int
    user_tokens: int = 0
    interval_tokens: int = 0
    tail_tokens: int = 0
    #: Filler tokens aimed at (interval + tail); None when the configuration adds no filler.
    target_tokens: int | None = None
    #: Whether interval and tail each landed within ±2 % of their targets (None: no target).
    within_target: bool | None = None
    evidence: list[EvidencePosition] = field(default_factory=list)
    #: Gold evidence sessions the configuration left out.
    missing_evidence: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reused_filler: bool = False
    truncated_filler: bool = False
    #: Summaries configuration: session ids whose summary is not available yet.
    summary_requests: list[str] = field(default_factory=list)
    encoding: str = DEFAULT_ENCODING

    @property
    def filler_tokens(self) -> int:
        return self.interval_tokens + self.tail_tokens

    @property
    def evidence_ids(self) -> set[str]:
        return {e.session_id for e in self.evidence} | set(self.missing_evidence)

    def summary_row(self) -> dict:
        """A compact JSON-able description (for the CLI and the runs table)."""
        return {
            "config": self.config,
            "seed": self.seed,
            "expression_type": self.expression_type,
            "sessions": len(self.sessions),
            "filler_sessions": sum(1 for s in self.sessions if s.is_filler),
            "history_tokens": self.history_tokens,
            "user_tokens": self.user_tokens,
            "interval_tokens": self.interval_tokens,
            "tail_tokens": self.tail_tokens,
            "target_tokens": self.target_tokens,
            "within_target": self.within_target,
            "reused_filler": self.reused_filler,
            "truncated_filler": self.truncated_filler,
            "evidence": [e.model_dump() for e in self.evidence],
            "missing_evidence": self.missing_evidence,
            "notes": self.notes,
        }


class InMemorySummaryCache:
    """A process-local :class:`core.ports.SummaryCache` (tests, CLI without a database)."""

    def __init__(self) -> None:
        self._data: dict[tuple[str, str], str] = {}

    def get_summary(self, model: str, text_hash: str) -> str | None:
        return self._data.get((model, text_hash))

    def put_summary(self, model: str, text_hash: str, summary: str) -> None:
        self._data[(model, text_hash)] = summary


# -- counting -----------------------------------------------------------------------------------


def session_tokens(session: Session, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens the session's turns cost as chat messages (memoised per turn text)."""
    return sum(count_many([t.content for t in session.turns], encoding)) + MESSAGE_OVERHEAD * len(session.turns)


def session_hash(session: Session) -> str:
    """sha256 of the session's dialogue as the summary prompt shows it (the summary cache key)."""
    from core.methods.render import session_log

    return hashlib.sha256(session_log(session).encode("utf-8")).hexdigest()


# -- selection ----------------------------------------------------------------------------------


def chronological(sessions: Sequence[Session]) -> list[Session]:
    """Sort by date; undated sessions inherit the previous dated session's date; ties keep order."""
    keyed = []
    last = dt.date.min
    for i, s in enumerate(sessions):
        if s.date is not None:
            last = s.date
        keyed.append((last, i, s))
    keyed.sort(key=lambda k: (k[0], k[1]))
    return [s for _, _, s in keyed]


def user_specific_sessions(bundle: UserBundle, expression_type: int | None) -> list[Session]:
    """Life-event and task sessions, plus the chosen expression type's preference sessions."""
    typed = bundle.expression_types() != [0]
    out = []
    for s in bundle.sessions:
        if s.kind in ("life_event", "task"):
            out.append(s)
        elif s.kind == "preference":
            if not typed or s.expression_type is None or s.expression_type == expression_type:
                out.append(s)
    return chronological(out)


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def oracle_sessions(bundle: UserBundle, query: Query | None, expression_type: int | None, notes: list[str]) -> list[Session]:
    if query is None:
        raise ContextError("the oracle context needs a query (it keeps only the sessions relevant to it)")
    if query.context_factor:
        factor = _norm(query.context_factor)
        pref = _norm(query.gold_preference)
        picked = [
            s for s in bundle.sessions
            if _norm(s.context_factor) == factor and (not pref or _norm(s.contextual_preference) == pref)
        ]
        if not query.gold_preference:
            notes.append("oracle: the query has no gold preference; matched on the context factor only")
        if not picked:
            notes.append(f"oracle: no session shares the context factor {query.context_factor!r} and its preference")
        return chronological(picked)
    ids = set(bundle.gold_evidence(query, expression_type))
    notes.append("oracle: the query has no context factor (not CUPID-style); using its gold evidence sessions")
    return chronological([s for s in bundle.sessions if s.id in ids])


# -- filler -------------------------------------------------------------------------------------


class _FillerSource:
    """Seeded draw of filler sessions: one permutation of all pools, redrawn (with notice) when spent."""

    def __init__(self, pools: Sequence[FillerPool], seed: int):
        self.items = [(p.id, s) for p in pools for s in p.sessions]
        self.rng = random.Random(f"prefscope-filler/{seed}")
        self.round = 0
        self.order: list[int] = []
        self.pos = 0
        self.reused = False

    def __len__(self) -> int:
        return len(self.items)

    def next(self) -> tuple[str, Session, int] | None:
        if not self.items:
            return None
        if self.pos >= len(self.order):
            self.round += 1
            if self.round > 1:
                self.reused = True
            self.order = list(range(len(self.items)))
            self.rng.shuffle(self.order)
            self.pos = 0
        pool_id, session = self.items[self.order[self.pos]]
        self.pos += 1
        return pool_id, session, self.round


def _cut_session(session: Session, budget: int, encoding: str) -> Session | None:
    """The session cut to at most ``budget`` tokens at a turn, then token, boundary."""
    turns: list[Turn] = []
    used = 0
    for turn in session.turns:
        cost = count_tokens(turn.content, encoding) + MESSAGE_OVERHEAD
        if used + cost <= budget:
            turns.append(turn)
            used += cost
            continue
        room = budget - used - MESSAGE_OVERHEAD
        if room > 0:
            turns.append(turn.model_copy(update={"content": truncate_to_tokens(turn.content, room, encoding)}))
        break
    if not turns:
        return None
    return session.model_copy(update={"turns": turns, "meta": {**session.meta, "truncated": True}})


def _fill(target: int, segment: str, source: _FillerSource, encoding: str) -> tuple[list[ContextSession], int, bool]:
    """Whole filler sessions summing to within ±TOLERANCE of ``target`` (last one cut if needed)."""
    lo, hi = target * (1 - TOLERANCE), target * (1 + TOLERANCE)
    picked: list[ContextSession] = []
    total = 0
    skips = 0
    truncated = False
    while total < target:
        item = source.next()
        if item is None:
            break
        pool_id, session, copy = item
        n = session_tokens(session, encoding)
        if total + n <= hi:
            picked.append(ContextSession(session, n, True, segment, pool_id, copy))
            total += n
            skips = 0
            continue
        if total >= lo:
            break  # within tolerance and the next whole session would overshoot
        skips += 1
        if skips < min(MAX_SKIPS, len(source)):
            continue
        cut = _cut_session(session, target - total, encoding)
        if cut is not None:
            n = session_tokens(cut, encoding)
            picked.append(ContextSession(cut, n, True, segment, pool_id, copy, truncated=True))
            total += n
            truncated = True
        break
    return picked, total, truncated


def _scatter(user: list[ContextSession], filler: list[ContextSession], seed: int) -> list[ContextSession]:
    """Interval filler into the gaps before user sessions, gap chosen per filler session (seeded)."""
    if not user:
        return list(filler)
    rng = random.Random(f"prefscope-scatter/{seed}")
    gaps: list[list[ContextSession]] = [[] for _ in user]
    for f in filler:
        gaps[rng.randrange(len(user))].append(f)
    out: list[ContextSession] = []
    for gap, u in zip(gaps, user, strict=True):
        out += gap
        out.append(u)
    return out


# -- the builder --------------------------------------------------------------------------------

Summariser = Callable[[Session], "str | Awaitable[str]"]


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
) -> BuiltContext:
    """Build the ordered history for one user, query and configuration (deterministic per seed).

    ``summarise`` (summaries configuration) is a synchronous ``session -> summary`` callable; use
    :func:`abuild_context` for an async one. Without it, sessions whose summary is not in
    ``summary_cache`` show a placeholder and are listed in ``summary_requests``.
    """
    cfg = config if isinstance(config, ContextConfig) else config_named(config)
    summaries: dict[str, str] = {}
    if cfg.name == "summaries":
        summaries = _summaries_sync(bundle.sessions, summarise, summary_cache, summary_model)
    return _build(bundle, query, expression_type, cfg, seed, list(filler_pools), session_ids, summaries, encoding)


async def abuild_context(
    bundle: UserBundle,
    *,
    summarise: Summariser | None = None,
    summary_cache=None,
    summary_model: str = "unknown",
    concurrency: int = 4,
    **kwargs,
) -> BuiltContext:
    """:func:`build_context` with a sync or async summariser (summaries run ``concurrency`` at a time)."""
    cfg = kwargs.get("config", "simple")
    cfg = cfg if isinstance(cfg, ContextConfig) else config_named(cfg)
    kwargs["config"] = cfg
    summaries: dict[str, str] = {}
    if cfg.name == "summaries":
        summaries = await _summaries_async(bundle.sessions, summarise, summary_cache, summary_model, concurrency)
    query = kwargs.pop("query", None)
    return _build(
        bundle, query, kwargs.pop("expression_type", None), cfg, kwargs.pop("seed", 0),
        list(kwargs.pop("filler_pools", ())), kwargs.pop("session_ids", None), summaries,
        kwargs.pop("encoding", DEFAULT_ENCODING),
    )


def _summaries_sync(sessions, summarise, cache, model) -> dict[str, str]:
    out: dict[str, str] = {}
    for s in sessions:
        h = session_hash(s)
        text = cache.get_summary(model, h) if cache is not None else None
        if text is None and summarise is not None:
            text = summarise(s)
            if inspect.isawaitable(text):
                if inspect.iscoroutine(text):
                    text.close()
                raise ContextError("the summariser is async: use abuild_context")
            if cache is not None:
                cache.put_summary(model, h, text)
        if text is not None:
            out[s.id] = text
    return out


async def _summaries_async(sessions, summarise, cache, model, concurrency) -> dict[str, str]:
    out: dict[str, str] = {}
    todo = []
    for s in sessions:
        h = session_hash(s)
        text = cache.get_summary(model, h) if cache is not None else None
        if text is not None:
            out[s.id] = text
        elif summarise is not None:
            todo.append((s, h))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(s: Session, h: str) -> None:
        async with gate:
            text = summarise(s)
            if inspect.isawaitable(text):
                text = await text
        out[s.id] = text
        if cache is not None:
            cache.put_summary(model, h, text)

    await asyncio.gather(*(one(s, h) for s, h in todo))
    return out


def _resolve_query(bundle: UserBundle, query: Query | str | None) -> Query | None:
    if query is None or isinstance(query, Query):
        return query
    try:
        return bundle.query(query)
    except KeyError as exc:
        raise ContextError(str(exc.args[0])) from None


def _build(bundle, query, expression_type, cfg, seed, pools, session_ids, summaries, encoding) -> BuiltContext:
    query = _resolve_query(bundle, query)
    notes: list[str] = []
    types = bundle.expression_types()
    typed = types != [0]
    if typed and expression_type is None:
        expression_type = types[0]
        notes.append(f"no expression type given; using type {expression_type}")
    elif typed and expression_type not in types and cfg.name not in ("full", "none", "custom"):
        raise ContextError(f"user {bundle.user.id!r} has no expression type {expression_type}; it has {types}")
    elif not typed and expression_type not in (None, 0):
        notes.append(f"this history has no expression types; type {expression_type} ignored")

    # 1. which sessions
    if cfg.name == "none":
        chosen: list[Session] = []
        notes.append("no history: the model sees only the query (generic baseline)")
    elif cfg.name in ("full", "summaries"):
        chosen = chronological(bundle.sessions)
    elif cfg.name == "oracle":
        chosen = oracle_sessions(bundle, query, expression_type, notes)
    elif cfg.name == "custom":
        if not session_ids:
            raise ContextError("the custom context needs session ids")
        by_id = {p_s.id: p_s for p in pools for p_s in p.sessions}
        by_id.update({s.id: s for s in bundle.sessions})
        unknown = [sid for sid in session_ids if sid not in by_id]
        if unknown:
            raise ContextError(f"unknown session ids: {', '.join(unknown)}")
        chosen = [by_id[sid] for sid in dict.fromkeys(session_ids)]
        notes.append("custom: sessions in the order given")
    else:
        chosen = user_specific_sessions(bundle, expression_type)

    user = [ContextSession(s, session_tokens(s, encoding), s.kind == "filler") for s in chosen]
    for cs in user:
        if cs.is_filler:
            cs.segment = "interval"
    if cfg.name == "summaries":
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
    else:
        pending = []

    # 2. filler
    interval: list[ContextSession] = []
    tail: list[ContextSession] = []
    within: bool | None = None
    truncated = False
    source = _FillerSource(pools, seed)
    if cfg.filler_target:
        if not len(source):
            notes.append(f"filler pool is empty: {cfg.label} needs {cfg.filler_target:,} filler tokens; none added")
            within = False
        else:
            within = True
            for target, segment in ((cfg.interval, "interval"), (cfg.tail, "tail")):
                if not target:
                    continue
                got, total, cut = _fill(target, segment, source, encoding)
                truncated |= cut
                (interval if segment == "interval" else tail).extend(got)
                if abs(total - target) > TOLERANCE * target:
                    within = False
                    notes.append(f"{segment} filler: {total:,} tokens for a target of {target:,} (outside ±2%)")
            if truncated:
                notes.append("the last filler session was cut at a token boundary to land on the target")
            if source.reused:
                pool_tokens = sum(session_tokens(s, encoding) for _, s in source.items)
                notes.append(
                    f"filler pool too small ({len(source)} sessions, {pool_tokens:,} tokens for "
                    f"{cfg.filler_target:,} needed): sessions were reused (sampled with replacement)"
                )

    ordered = _scatter(user, interval, seed) + tail

    # 3. evidence
    evidence: list[EvidencePosition] = []
    missing: list[str] = []
    if query is not None:
        gold = bundle.gold_evidence(query, expression_type if typed else None)
        index = {cs.key: i for i, cs in enumerate(ordered) if cs.pool_id is None}
        suffix = [0] * (len(ordered) + 1)
        for i in range(len(ordered) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + ordered[i].tokens
        for sid in gold:
            if sid in index:
                i = index[sid]
                evidence.append(EvidencePosition(session_id=sid, position=i, tokens_to_query=suffix[i + 1]))
            else:
                missing.append(sid)
        if missing and cfg.name != "none":
            notes.append(f"gold evidence not in this context: {', '.join(missing)}")
        if not gold:
            notes.append("the query has no gold evidence sessions")

    user_tokens = sum(cs.tokens for cs in user)
    interval_tokens = sum(cs.tokens for cs in interval)
    tail_tokens = sum(cs.tokens for cs in tail)
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
        within_target=within,
        evidence=evidence,
        missing_evidence=missing,
        notes=notes,
        reused_filler=source.reused,
        truncated_filler=truncated,
        summary_requests=pending,
        encoding=encoding,
    )
