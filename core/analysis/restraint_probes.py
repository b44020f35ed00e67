"""Generated **restraint probes**: for a stored user of any benchmark, a question the user's
preference should not change (issue 38, item 2: "the same user, a query where the preference should
not change the answer"), so the diagnosis can label an answer that drags the preference in
``misapplied`` beyond OP-Bench's irrelevance tasks.

One probe per preference the user's queries bear (PrefEval's and the sample users' open / MCQ /
true-false forms of one item share a preference: one probe, beside the open form), keyed by the
source query: id ``<source query id>-restraint``, kind open, ``Query.meta``:

- ``restraint``: True (:data:`core.model.RESTRAINT`: judged by ``restraint`` or the
  OP-Bench judge, diagnosed as held back / misapplied);
- ``generated``: True; ``source_query``: the source query's id; ``preference``: the preference text
  to hold back; ``benchmark``: the user's source; ``pool``: the question pool's version.

The probe's ``answer`` is the pool question's one right answer. It keeps the source's
``preference_id`` (else its ``gold_preference``) and evidence, so the ``restraint`` judge, the demo
models' hints and the diagnosis's "in context" step read the same preference as for the source
query. The question comes from a fixed pool of preference-neutral questions, ours
(``restraint_questions.toml``), among those that share no content word
(:func:`core.text.words.content_stems`) with the preference or the source query, picked by a
stable hash of user id and source query id, among those the user's other probes do not ask yet:
the same user always gets the same probes. A probe already stored is kept, never re-drawn
(re-running adds nothing).

Pure: bundles in, queries out; storing them is the caller's.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from core.model import RESTRAINT, Query, UserBundle
from core.text.words import content_stems

SUFFIX = "-restraint"
GENERATED = "generated"
SOURCE_QUERY = "source_query"
PREFERENCE = "preference"
BENCHMARK = "benchmark"
POOL = "pool"
_POOL_FILE = Path(__file__).with_name("restraint_questions.toml")


@dataclass(frozen=True)
class ProbeSet:
    """What generating a user's probes gives: the new queries, the probe ids already stored, and
    one line saying why some (or all) could not be made (None when nothing was left out)."""

    user_id: str
    added: tuple[Query, ...] = ()
    kept: tuple[str, ...] = ()
    note: str | None = None


@cache
def _pool_data() -> dict:
    return tomllib.loads(_POOL_FILE.read_text(encoding="utf-8"))


def pool() -> tuple[str, ...]:
    """The preference-neutral questions, in file order."""
    return tuple(q["text"] for q in _pool_data()["questions"])


def answer_of(question: str) -> str:
    """The pool question's one right answer (the probe's gold answer)."""
    return next(q["answer"] for q in _pool_data()["questions"] if q["text"] == question)


def citation() -> str:
    return str(_pool_data()["citation"])


def pool_version() -> str:
    return str(_pool_data()["version"])


def probe_id(source: Query) -> str:
    return source.id + SUFFIX


def is_probe(query: Query) -> bool:
    return query.meta.get(GENERATED) is True and query.meta.get(RESTRAINT) is True


def restraint_probes(bundle: UserBundle) -> ProbeSet:
    """The user's restraint probes not yet stored (see the module docstring)."""
    uid = bundle.user.id
    sources = _sources(bundle)
    if not sources:
        return ProbeSet(uid, note="no query bears a preference (QA only?): nothing to hold back")
    stored = {q.id: q for q in bundle.queries}
    added: list[Query] = []
    kept: list[str] = []
    crowded: list[str] = []
    taken: list[str] = []
    # a user's probes ask different questions while the pool allows (stored ones included)
    used = {q.text for q in bundle.queries if is_probe(q)}
    for source, preference in sources:
        pid = probe_id(source)
        if pid in stored:
            (kept if is_probe(stored[pid]) else taken).append(pid)
            continue
        question = _question(uid, source, preference, used)
        if question is None:
            crowded.append(source.id)
            continue
        used.add(question)
        added.append(_probe(bundle, source, preference, question))
    notes = []
    if crowded:
        notes.append(
            f"no probe for {_few(crowded)}: every pool question shares a content word with the preference or query"
        )
    if taken:
        notes.append(f"no probe for {_few(taken)}: the id is a query of the data, not a probe")
    return ProbeSet(uid, tuple(added), tuple(kept), "; ".join(notes) or None)


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:5]) + (f", … {len(ids) - 5} more" if len(ids) > 5 else "")


def _sources(bundle: UserBundle) -> list[tuple[Query, str]]:
    """(source query, preference text) per preference the queries bear, an open query preferred;
    restraint queries (OP-Bench's irrelevance ones, earlier probes) are no source."""
    by_preference: dict[str, tuple[Query, str]] = {}
    for q in bundle.queries:
        if q.meta.get(RESTRAINT) is True:
            continue
        text = _preference_of(bundle, q)
        if not text:
            continue
        key = q.preference_id or text
        if key not in by_preference or (q.kind == "open" and by_preference[key][0].kind != "open"):
            by_preference[key] = (q, text)
    return list(by_preference.values())


def _preference_of(bundle: UserBundle, query: Query) -> str | None:
    if query.preference_id:
        try:
            return bundle.preference(query.preference_id).text
        except KeyError:
            return None
    return query.gold_preference


def _question(user_id: str, source: Query, preference: str, used: set[str]) -> str | None:
    taken = content_stems(preference) | content_stems(source.text)
    neutral = [q for q in pool() if not content_stems(q) & taken]
    if not neutral:
        return None
    candidates = [q for q in neutral if q not in used] or neutral
    digest = hashlib.sha256(f"{user_id}\n{source.id}".encode()).digest()
    return candidates[int.from_bytes(digest[:8], "big") % len(candidates)]


def _probe(bundle: UserBundle, source: Query, preference: str, question: str) -> Query:
    return Query(
        id=probe_id(source),
        kind="open",
        text=question,
        answer=answer_of(question),
        preference_id=source.preference_id,
        gold_preference=None if source.preference_id else preference,
        evidence_sessions=list(source.evidence_sessions),
        evidence_turns=list(source.evidence_turns),
        meta={
            RESTRAINT: True,
            GENERATED: True,
            SOURCE_QUERY: source.id,
            PREFERENCE: preference,
            BENCHMARK: bundle.user.source,
            POOL: pool_version(),
        },
    )
