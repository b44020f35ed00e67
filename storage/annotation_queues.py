"""Annotation queues: built once from a filter, served to each named annotator in their own order.

- :func:`create_queue` – the items a :class:`QueueSpec` selects, shuffled with its seed, stored
- :func:`next_item` – the annotator's next unfinished item (resumable: finished ones are recorded)
- :func:`load_item` – what the annotator sees (query, preference, answers in the shown order)
- :func:`reveal` – what blind mode hides (models, method, judge scores), for after the label is saved
- :func:`progress` – done / skipped per annotator

Queue kinds: ``answer`` (score one answer), ``pair`` (which of two answers to the same prompt
follows the preference better; which is shown as A is drawn per item and stored), ``relevance``
(is this turn / attribute relevant to the query; the targets a relevance analysis decided on) and
``attribute`` (accept / uncertain / reject an extracted attribute; the user's latest extraction).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
from dataclasses import asdict, dataclass, field

from sqlite_utils import Database

from storage.export import RunFilter, run_where
from storage.judge_audit import same_prompt_pairs
from storage.report import LATEST_JUDGMENT, ReportError, factor_names, factor_sql
from storage.transactions import transaction

KINDS = ("answer", "pair", "relevance", "attribute")


class AnnotationError(ValueError):
    """A queue that cannot be built or found, or a label that cannot be stored; says why."""


@dataclass(frozen=True)
class QueueSpec:
    kind: str = "answer"
    batches: list[str] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    #: ``FACTOR=VALUE`` conditions on the answers (any factor `report --by` knows).
    where: list[str] = field(default_factory=list)
    #: Only answers two judges scored ``gap`` or more apart on ``metric`` (``kind:dimension``).
    disagree: bool = False
    metric: str = "rubric:alignment"
    gap: float = 1.0
    sample: int | None = None
    seed: int = 0
    blind: bool = True


@dataclass(frozen=True)
class Queue:
    name: str
    kind: str
    spec: dict
    seed: int
    blind: bool
    size: int


@dataclass(frozen=True)
class Item:
    """One queue item as the annotator sees it; nothing here names a model, a method or a score."""

    queue: str
    position: int
    kind: str
    run_id: str
    query: str
    preference: str
    response_id: str | None = None
    other_response_id: str | None = None
    #: Pair: answer 2 is shown as A.
    swapped: bool = False
    #: Answer texts in the order shown (one for ``answer``, A then B for ``pair``).
    shown: tuple[str, ...] = ()
    target_kind: str | None = None
    target_id: str | None = None
    extraction_id: str | None = None
    target_text: str = ""


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def create_queue(db: Database, name: str, spec: QueueSpec) -> Queue:
    """Build and store queue ``name``; refuses an existing name or a filter that selects nothing."""
    name = name.strip()
    if not name:
        raise AnnotationError("a queue needs a name")
    if spec.kind not in KINDS:
        raise AnnotationError(f"unknown queue kind {spec.kind!r}; choose from {', '.join(KINDS)}")
    if db.execute("SELECT 1 FROM annotation_queues WHERE name = ?", [name]).fetchone():
        raise AnnotationError(f"queue {name!r} exists already (see `prefscope annotate {name} --status`)")
    rng = random.Random(spec.seed)
    items = _candidates(db, spec, rng)
    rng.shuffle(items)
    if spec.sample is not None:
        items = items[: spec.sample]
    if not items:
        raise AnnotationError(f"the filter selects nothing to label for a {spec.kind!r} queue: {_describe(spec)}")
    with transaction(db):
        db.table("annotation_queues").insert(
            {
                "name": name,
                "kind": spec.kind,
                "filter": json.dumps(asdict(spec)),
                "seed": spec.seed,
                "blind": int(spec.blind),
                "created_at": _now(),
            }
        )
        db.table("annotation_items").insert_all([{"queue": name, "position": i, **it} for i, it in enumerate(items)])
    return queue(db, name)


def _describe(spec: QueueSpec) -> str:
    parts = [f"batch {b}" for b in spec.batches] + [f"run {r}" for r in spec.run_ids] + spec.where
    if spec.disagree:
        parts.append(f"judges {spec.gap:g}+ apart on {spec.metric}")
    return ", ".join(parts) or "every run"


def queue(db: Database, name: str) -> Queue:
    row = db.execute(
        "SELECT q.name, q.kind, q.filter, q.seed, q.blind, (SELECT count(*) FROM annotation_items i WHERE i.queue = q.name) "
        "FROM annotation_queues q WHERE q.name = ?",
        [name],
    ).fetchone()
    if row is None:
        known = [r[0] for r in db.execute("SELECT name FROM annotation_queues ORDER BY name")]
        hint = f"; queues: {', '.join(known)}" if known else "; build one with `prefscope annotate NAME --batch B`"
        raise AnnotationError(f"no annotation queue {name!r}{hint}")
    return Queue(row[0], row[1], json.loads(row[2]), row[3], bool(row[4]), row[5])


def list_queues(db: Database) -> list[Queue]:
    """Every queue, by name (creation times have whole seconds: queues made in a row would tie)."""
    return [queue(db, n) for (n,) in db.execute("SELECT name FROM annotation_queues ORDER BY name")]


# -- building --------------------------------------------------------------------------------------


def _conditions(spec: QueueSpec) -> tuple[RunFilter, str, list]:
    """The spec's run filter, and its FACTOR=VALUE conditions as SQL (`` AND …``) with their values."""
    conds, args = [], []
    for cond in spec.where:
        factor, sep, value = cond.partition("=")
        try:
            names = factor_names([factor])
        except ReportError as exc:
            raise AnnotationError(str(exc)) from None
        if not sep or not names or not value.strip():
            raise AnnotationError(f"{cond!r}: write FACTOR=VALUE, e.g. model=demo:oracle")
        if names[0] == "dimension":  # a judgment's, not an answer's: a queue selects answers
            raise AnnotationError(f"{cond!r}: a queue selects answers; dimension is a judgment's factor")
        conds.append(f" AND CAST({factor_sql(names[0])} AS TEXT) = ?")
        args.append(value.strip())
    return RunFilter(run_ids=spec.run_ids, labels=spec.batches, probes=False), "".join(conds), args


def _answer_rows(db: Database, spec: QueueSpec) -> list[tuple[str, str]]:
    """(run id, response id) of the final, finished answers the filter selects."""
    f, conds, cond_args = _conditions(spec)
    args: list = []
    rw = run_where(f, args)
    sql = f"""SELECT r.id, p.id FROM responses p JOIN runs r ON r.id = p.run_id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        LEFT JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id
        WHERE p.is_final = 1 AND p.status = 'ok' AND {rw}{conds}
        ORDER BY r.created_at, r.id, p.slot"""
    rows = [(run, rid) for run, rid in db.execute(sql, args + cond_args)]
    if spec.disagree:
        apart = _disagreeing(db, spec.metric, spec.gap)
        rows = [r for r in rows if r[1] in apart]
    return rows


def _disagreeing(db: Database, metric: str, gap: float) -> set[str]:
    """Responses whose latest scores by two machine judges differ by ``gap`` or more."""
    kind, _, dimension = metric.partition(":")
    if not dimension:
        raise AnnotationError(f"--metric {metric!r}: write kind:dimension, e.g. rubric:alignment")
    rows = db.execute(
        f"""SELECT j.response_id, max(j.score) - min(j.score), count(DISTINCT j.judge_model) FROM judgments j
        WHERE j.kind = ? AND j.dimension = ? AND j.human = 0 AND j.score IS NOT NULL AND {LATEST_JUDGMENT}
        GROUP BY j.response_id""",
        [kind, dimension],
    )
    return {rid for rid, spread, judges in rows if judges >= 2 and spread >= gap}


def _candidates(db: Database, spec: QueueSpec, rng: random.Random) -> list[dict]:
    if spec.kind == "answer":
        return [{"run_id": run, "response_id": rid} for run, rid in _answer_rows(db, spec)]
    if spec.kind == "pair":  # every two answers to the same prompt, in one run or in two
        f, conds, cond_args = _conditions(spec)
        keep = {rid for _, rid in _answer_rows(db, spec)} if spec.disagree else None
        return [
            {
                "run_id": p.run_id,
                "response_id": p.response_1,
                "other_response_id": p.response_2,
                "swapped": int(rng.random() < 0.5),
            }
            for p in same_prompt_pairs(db, f, conds, cond_args)
            if keep is None or {p.response_1, p.response_2} & keep
        ]
    runs = list(dict.fromkeys(run for run, _ in _answer_rows(db, spec)))
    if spec.kind == "relevance":
        out = []
        for run in runs:
            for kind, target, extraction in db.execute(
                "SELECT DISTINCT target_kind, target_id, extraction_id FROM relevance "
                "WHERE run_id = ? AND decider != 'human' ORDER BY target_kind, target_id",
                [run],
            ):
                out.append({"run_id": run, "target_kind": kind, "target_id": target, "extraction_id": extraction})
        return out
    out = []
    for run in runs:  # attribute: the latest extraction of each user the runs are about
        user = db.execute("SELECT user_id FROM runs WHERE id = ?", [run]).fetchone()[0]
        found = db.execute(
            "SELECT id FROM attribute_extractions WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT 1", [user]
        ).fetchone()
        if found and not any(o["extraction_id"] == found[0] for o in out):
            for (attr,) in db.execute(
                "SELECT id FROM attributes_extracted WHERE extraction_id = ? ORDER BY position", [found[0]]
            ):
                out.append({"run_id": run, "target_kind": "attribute", "target_id": attr, "extraction_id": found[0]})
    return out


# -- serving ---------------------------------------------------------------------------------------


def serving_order(q: Queue, annotator: str) -> list[int]:
    """The annotator's own random order of the queue (stable: the same on every resume)."""

    def key(position: int) -> str:
        return hashlib.sha256(f"{q.name}\x00{q.seed}\x00{annotator}\x00{position}".encode()).hexdigest()

    return sorted(range(q.size), key=key)


def done_positions(db: Database, name: str, annotator: str) -> set[int]:
    return {
        p
        for (p,) in db.execute(
            "SELECT position FROM annotation_done WHERE queue = ? AND annotator = ?", [name, annotator]
        )
    }


def next_item(db: Database, name: str, annotator: str) -> Item | None:
    """The annotator's next unfinished item; None when they have finished the queue."""
    q = queue(db, name)
    done = done_positions(db, name, annotator)
    for position in serving_order(q, annotator):
        if position not in done:
            return load_item(db, name, position)
    return None


def progress(db: Database, name: str) -> dict[str, tuple[int, int]]:
    """annotator -> (labelled, skipped)."""
    return {
        a: (n - s, s)
        for a, n, s in db.execute(
            "SELECT annotator, count(*), sum(skipped) FROM annotation_done WHERE queue = ? GROUP BY annotator "
            "ORDER BY annotator",
            [name],
        )
    }


def load_item(db: Database, name: str, position: int) -> Item:
    q = queue(db, name)
    row = db.execute(
        "SELECT run_id, response_id, other_response_id, swapped, target_kind, target_id, extraction_id "
        "FROM annotation_items WHERE queue = ? AND position = ?",
        [name, position],
    ).fetchone()
    if row is None:
        raise AnnotationError(f"queue {name!r} has no item {position}")
    run_id, rid, other, swapped, target_kind, target_id, extraction_id = row
    query, preference = query_and_preference(db, run_id)
    texts = [_answer_text(db, r) for r in (rid, other) if r]
    shown = tuple(reversed(texts)) if swapped else tuple(texts)
    return Item(
        name,
        position,
        q.kind,
        run_id,
        query,
        preference,
        rid,
        other,
        bool(swapped),
        shown,
        target_kind,
        target_id,
        extraction_id,
        _target_text(db, run_id, target_kind, target_id, extraction_id) if target_id else "",
    )


def query_and_preference(db: Database, run_id: str) -> tuple[str, str]:
    row = db.execute(
        """SELECT q.text, coalesce(pr.text, q.gold_preference, '') FROM runs r
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        LEFT JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id WHERE r.id = ?""",
        [run_id],
    ).fetchone()
    if row is None or row[0] is None:  # the user was re-imported without this query
        qid = db.execute("SELECT query_id FROM runs WHERE id = ?", [run_id]).fetchone()
        return (f"(query {qid[0] if qid else '?'} is no longer in the database)", "")
    return row[0], row[1]


def _answer_text(db: Database, response_id: str) -> str:
    row = db.execute("SELECT text FROM responses WHERE id = ?", [response_id]).fetchone()
    return row[0] if row else ""


def _target_text(db: Database, run_id: str, kind: str | None, target: str, extraction: str | None) -> str:
    if kind == "attribute" and extraction:
        row = db.execute(
            "SELECT text FROM attributes_extracted WHERE extraction_id = ? AND id = ?", [extraction, target]
        ).fetchone()
        if row:
            return row[0]
    row = db.execute(
        "SELECT target_text FROM relevance WHERE run_id = ? AND target_kind = ? AND target_id = ? "
        "AND target_text != '' LIMIT 1",
        [run_id, kind, target],
    ).fetchone()
    return row[0] if row else target


@dataclass(frozen=True)
class Revealed:
    """What blind mode hid, shown once the item's label is saved."""

    models: tuple[str, ...]
    method: str
    context: str
    #: (answer index as stored: 1 or 2, judge model, kind:dimension, score or None) per latest machine judgment.
    scores: tuple[tuple[int, str, str, float | None], ...]


def reveal(db: Database, item: Item) -> Revealed:
    method, context = db.execute("SELECT method, context FROM runs WHERE id = ?", [item.run_id]).fetchone()
    ids = [r for r in (item.response_id, item.other_response_id) if r]
    models = tuple(db.execute("SELECT model FROM responses WHERE id = ?", [r]).fetchone()[0] for r in ids)
    scores = []
    for n, rid in enumerate(ids, 1):
        for judge, kind, dim, score in db.execute(
            f"""SELECT j.judge_model, j.kind, j.dimension, j.score FROM judgments j WHERE j.response_id = ? AND j.human = 0
            AND j.kind != 'pairwise' AND {LATEST_JUDGMENT}
            ORDER BY j.judge_model, j.kind, j.dimension""",
            [rid],
        ):
            scores.append((n, judge, f"{kind}:{dim}", score))
    return Revealed(models, method, context, tuple(scores))
