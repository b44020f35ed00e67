"""The domain model: one user's history with its preferences, queries and gold evidence.

Every importer produces these objects and every later stage (context building, prompting,
judging, storage) consumes them. Validation lives here so that all formats share one notion of
"well-formed"; importers only translate shapes.

Identifiers are strings and unique within one user. A turn is addressed as
``"<session_id>#<index>"`` (see :func:`turn_ref`), which is how attributes, retrievals and
LoCoMo-style QA evidence point into the history.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: ``system`` turns are rare in histories: PersonaMem's contexts carry the persona (and topic
#: switches) as system messages, which its own prompt sends verbatim.
Role = Literal["user", "assistant", "system"]
SessionKind = Literal["life_event", "preference", "filler", "task"]
PreferenceType = Literal["relative", "negative", "exclusive", "positive"]
QueryKind = Literal["open", "mcq", "tf"]
InstanceType = Literal["consistent", "contrastive", "changing"]

#: RealPref's four expression types, explicit (1) to implicit (4).
EXPRESSION_TYPES: dict[int, str] = {
    1: "Direct Statement",
    2: "Contextualized Mention",
    3: "Stylistic Expression",
    4: "Experience Feedback",
}
MCQ_LETTERS = "ABCDEFGH"

#: ``Query.meta`` keys every layer reads (kept here, the lowest floor, so formats and history agree).
#: The id of the last session this query's history may show: the question was asked right after it
#: (PersonaMem cuts its shared context at the question's end index). Later sessions never reach a prompt.
HISTORY_END = "history_end"
#: How far the gold reference sits from the question when a dataset gives only distances, not turn
#: labels (PersonaMem): ``{"tokens", "blocks", "proportion", "source"}``.
EVIDENCE_DEPTH = "evidence_depth"
#: A generated knowledge probe (:func:`knowledge_probe`) is addressed as ``probe:<query id>`` and
#: carries ``meta[PROBE_OF]`` = the id of the open query it probes.
PROBE_PREFIX = "probe:"
PROBE_OF = "probe_of"


class _Strict(BaseModel):
    """Base: unknown fields are errors, so a misspelt key is reported rather than dropped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


def turn_ref(session_id: str, index: int) -> str:
    """The canonical address of a turn inside a user's history."""
    return f"{session_id}#{index}"


def split_turn_ref(ref: str) -> tuple[str, int]:
    session_id, _, index = ref.rpartition("#")
    if not session_id or not index.isdigit():
        raise ValueError(f"not a turn reference (expected '<session>#<index>'): {ref!r}")
    return session_id, int(index)


class Turn(_Strict):
    role: Role
    content: str
    #: The source dataset's own id for this turn (e.g. LoCoMo ``D1:3``), kept for traceability.
    source_id: str | None = None


class LifeEvent(_Strict):
    date: dt.date | None = None
    event: str


class User(_Strict):
    id: str = Field(min_length=1)
    name: str = ""
    demographics: dict[str, str] = Field(default_factory=dict)
    persona: str = ""
    extended_persona: str = ""
    life_events: list[LifeEvent] = Field(default_factory=list)
    #: Where the record came from (``sample``, ``prefeval``, ``locomo`` …).
    source: str = "native"
    meta: dict = Field(default_factory=dict)


class Session(_Strict):
    id: str = Field(min_length=1)
    date: dt.date | None = None
    kind: SessionKind
    expression_type: int | None = Field(default=None, ge=1, le=4)
    preference_ids: list[str] = Field(default_factory=list)
    title: str = ""
    #: CUPID task sessions: the person / tool / place the session is about, and the preference
    #: the user revealed about it. Gold labels: never shown to a model.
    context_factor: str | None = None
    contextual_preference: str | None = None
    turns: list[Turn] = Field(min_length=1)
    meta: dict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _expression_only_on_preference_sessions(self) -> Session:
        if self.expression_type is not None and self.kind != "preference":
            raise ValueError(f"expression_type is only valid on kind 'preference', not {self.kind!r}")
        return self


class Preference(_Strict):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    topic: str | None = None
    type: PreferenceType | None = None
    origin: Literal["original", "generalized"] = "original"
    #: For generalized preferences: the original preferences it is inferred from.
    derived_from: list[str] = Field(default_factory=list)
    infer_reason: str | None = None
    #: The event that formed the preference (RealPref's "initialize event").
    formed: LifeEvent | None = None
    #: Gold evidence: expression type (1-4, or 0 when the dataset has no types) -> session ids.
    evidence: dict[int, list[str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _origin_consistent(self) -> Preference:
        if self.origin == "generalized" and not self.derived_from:
            raise ValueError("a generalized preference needs derived_from (the originals it follows from)")
        if self.origin == "original" and self.derived_from:
            raise ValueError("derived_from is only valid on generalized preferences")
        bad = [k for k in self.evidence if k not in (0, 1, 2, 3, 4)]
        if bad:
            raise ValueError(f"evidence keys must be expression types 0-4, got {bad}")
        return self


#: The ``Query.meta`` key of a **restraint query**: its gold says the user's preference should not
#: change the answer (OP-Bench's irrelevance tasks, generated restraint probes). An answer that
#: drags the preference in is diagnosed ``misapplied``.
RESTRAINT = "restraint"


class Query(_Strict):
    id: str = Field(min_length=1)
    kind: QueryKind
    text: str = Field(min_length=1)
    preference_id: str | None = None
    #: Queries derived from the same test item (open / mcq / true and false variants) share a group.
    group: str | None = None
    options: list[str] = Field(default_factory=list)
    #: mcq: the correct letter ("A"…); tf: "yes" or "no"; open: a reference answer if the dataset has one.
    answer: str | None = None
    explanation: str = ""
    #: Gold evidence that overrides the preference's (LoCoMo QA, CUPID): session ids and turn refs.
    evidence_sessions: list[str] = Field(default_factory=list)
    evidence_turns: list[str] = Field(default_factory=list)
    #: CUPID-style cases: the preference the answer must follow and its checklist.
    gold_preference: str | None = None
    checklist: list[str] = Field(default_factory=list)
    context_factor: str | None = None
    instance_type: InstanceType | None = None
    meta: dict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _answer_fits_kind(self) -> Query:
        if self.kind == "mcq":
            if len(self.options) < 2:
                raise ValueError("an mcq query needs at least 2 options")
            if self.answer is not None:
                letters = MCQ_LETTERS[: len(self.options)]
                if self.answer not in letters:
                    raise ValueError(f"answer: expected one of {', '.join(letters)}, got {self.answer!r}")
        elif self.kind == "tf":
            if self.answer not in ("yes", "no"):
                raise ValueError(f"answer: a tf query needs 'yes' or 'no', got {self.answer!r}")
        elif self.options:
            raise ValueError("options are only valid on mcq queries")
        return self


class Attribute(_Strict):
    """A stable statement about the user, extracted from the history (Re-Centering, stage 1)."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    reasoning: str = ""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    evidence_turns: list[str] = Field(default_factory=list)
    #: Who produced it: a model id, "gold" (dataset) or "human".
    source: str = "gold"


class UserBundle(_Strict):
    """One user's complete record: the unit that is imported, stored and loaded."""

    user: User
    sessions: list[Session] = Field(default_factory=list)
    preferences: list[Preference] = Field(default_factory=list)
    queries: list[Query] = Field(default_factory=list)
    attributes: list[Attribute] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> UserBundle:
        session_ids = _unique_ids("sessions", self.sessions)
        pref_ids = _unique_ids("preferences", self.preferences)
        _unique_ids("queries", self.queries)
        _unique_ids("attributes", self.attributes)
        turn_counts = {s.id: len(s.turns) for s in self.sessions}

        for i, s in enumerate(self.sessions):
            for pid in s.preference_ids:
                if pid not in pref_ids:
                    raise ValueError(f"sessions[{i}].preference_ids: unknown preference {pid!r}")
        for i, p in enumerate(self.preferences):
            for src in p.derived_from:
                if src not in pref_ids:
                    raise ValueError(f"preferences[{i}].derived_from: unknown preference {src!r}")
            for expr, sids in p.evidence.items():
                for sid in sids:
                    if sid not in session_ids:
                        raise ValueError(f"preferences[{i}].evidence.{expr}: unknown session {sid!r}")
        for i, q in enumerate(self.queries):
            if q.preference_id is not None and q.preference_id not in pref_ids:
                raise ValueError(f"queries[{i}].preference_id: unknown preference {q.preference_id!r}")
            for sid in q.evidence_sessions:
                if sid not in session_ids:
                    raise ValueError(f"queries[{i}].evidence_sessions: unknown session {sid!r}")
            _check_turn_refs(f"queries[{i}].evidence_turns", q.evidence_turns, turn_counts)
        for i, a in enumerate(self.attributes):
            _check_turn_refs(f"attributes[{i}].evidence_turns", a.evidence_turns, turn_counts)
        return self

    # -- lookups -------------------------------------------------------------------------
    def session(self, session_id: str) -> Session:
        for s in self.sessions:
            if s.id == session_id:
                return s
        raise KeyError(f"user {self.user.id!r} has no session {session_id!r}")

    def preference(self, preference_id: str) -> Preference:
        for p in self.preferences:
            if p.id == preference_id:
                return p
        raise KeyError(f"user {self.user.id!r} has no preference {preference_id!r}")

    def query(self, query_id: str) -> Query:
        for q in self.queries:
            if q.id == query_id:
                return q
        if query_id.startswith(PROBE_PREFIX):  # derived, never stored: see knowledge_probe
            probe = knowledge_probe(self, self.query(query_id.removeprefix(PROBE_PREFIX)))
            if probe is not None:
                return probe
        raise KeyError(f"user {self.user.id!r} has no query {query_id!r}")

    def probes_of(self, query: Query) -> list[Query]:
        """The knowledge probes of an open query: the data's MCQ and true/false queries on the same
        item (same group, else same target preference), else one generated probe; none for a
        query with no preference to know (LoCoMo / LongMemEval QA) or a query that is not open."""
        if query.kind != "open":
            return []
        same = [
            q
            for q in self.queries
            if q.kind in ("mcq", "tf")
            and q.id != query.id
            and (q.group == query.group if query.group else _same_preference(q, query))
        ]
        if same:
            return same
        probe = knowledge_probe(self, query)
        return [probe] if probe is not None else []

    def turn(self, ref: str) -> Turn:
        session_id, index = split_turn_ref(ref)
        return self.session(session_id).turns[index]

    def expression_types(self) -> list[int]:
        """Expression types present in this history (0 when the dataset has none)."""
        found = {s.expression_type for s in self.sessions if s.kind == "preference"}
        return sorted(t if t is not None else 0 for t in found) or [0]

    def gold_evidence(self, query: Query, expression_type: int | None) -> list[str]:
        """Session ids holding the gold evidence for a query under one expression type.

        A query's own evidence wins (LoCoMo, CUPID); otherwise the target preference's sessions
        for that expression type; for a generalized preference, its originals' sessions.
        """
        if query.evidence_sessions or query.evidence_turns:
            ids = list(query.evidence_sessions)
            ids += [split_turn_ref(r)[0] for r in query.evidence_turns]
            return list(dict.fromkeys(ids))
        if query.preference_id is None:
            return []
        pref = self.preference(query.preference_id)
        sources = [self.preference(p) for p in pref.derived_from] if pref.derived_from else [pref]
        key = expression_type if expression_type is not None else 0
        out: list[str] = []
        for p in sources:
            out += p.evidence.get(key) or (p.evidence.get(0, []) if key != 0 else [])
        return list(dict.fromkeys(out))


def _same_preference(a: Query, b: Query) -> bool:
    return a.preference_id is not None and a.preference_id == b.preference_id


def knowledge_probe(bundle: UserBundle, query: Query) -> Query | None:
    """A generated probe for an open query whose data has no MCQ / true-false probes: "what do I
    prefer about <topic>?", asked in the same history, judged against the gold preference (and the
    checklist, where the data has one). The topic is the query's context factor (CUPID), else the
    preference's topic, else the question itself. None when there is no gold preference.

    It copies what decides the history (evidence, context factor, instance type, ``meta``'s
    history end), so the probe sees the same sessions the answer did."""
    pref = bundle.preference(query.preference_id) if query.preference_id else None
    gold = pref.text if pref is not None else query.gold_preference
    if query.kind != "open" or not gold:
        return None
    if query.context_factor:
        about = query.context_factor
    elif pref is not None and pref.topic:
        about = pref.topic.replace("_", " ")
    else:
        about = f'the request "{" ".join(query.text.split()[:24])}"'
    text = f"From what you know about me, what do I prefer when it comes to {about}? Answer in one or two sentences."
    meta = {k: v for k, v in query.meta.items() if k in (HISTORY_END, EVIDENCE_DEPTH)}
    return Query(
        id=PROBE_PREFIX + query.id,
        kind="open",
        text=text,
        preference_id=query.preference_id,
        group=query.group,
        evidence_sessions=list(query.evidence_sessions),
        evidence_turns=list(query.evidence_turns),
        gold_preference=query.gold_preference,
        checklist=list(query.checklist),
        context_factor=query.context_factor,
        instance_type=query.instance_type,
        meta={**meta, PROBE_OF: query.id},
    )


class FillerPool(_Strict):
    """User-independent sessions used to dilute and lengthen histories (shared across users)."""

    id: str = Field(min_length=1)
    name: str = ""
    source: str = "native"
    sessions: list[Session] = Field(min_length=1)

    @field_validator("sessions")
    @classmethod
    def _all_filler(cls, sessions: list[Session]) -> list[Session]:
        for i, s in enumerate(sessions):
            if s.kind != "filler":
                raise ValueError(f"[{i}].kind: a filler pool holds only kind 'filler', got {s.kind!r}")
        _unique_ids("sessions", sessions)
        return sessions


def _unique_ids(what: str, items: list) -> set[str]:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if item.id in seen:
            raise ValueError(f"{what}[{i}].id: duplicate id {item.id!r}")
        seen.add(item.id)
    return seen


def _check_turn_refs(where: str, refs: list[str], turn_counts: dict[str, int]) -> None:
    for ref in refs:
        session_id, index = split_turn_ref(ref)
        if session_id not in turn_counts:
            raise ValueError(f"{where}: unknown session in turn reference {ref!r}")
        if index >= turn_counts[session_id]:
            raise ValueError(f"{where}: session {session_id!r} has no turn {index}")
