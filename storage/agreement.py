"""Who rated what: every rater's scores per dimension, read from the stored labels and judgments,
for :mod:`core.analysis.agreement`.

A rater is an annotator's name (human labels) or a judge model (machine judgments: ``demo:heuristic``,
``openai:gpt-4o-mini`` …). One rating per rater and item: the latest, as reports count them. An
item a judge tried but could not score (a reply its parser could not read, an abstention) is kept
as None, so agreement counts it as an abstention rather than dropping it silently.

Dimensions and their items:

- ``kind:dimension`` of answer scores (``rubric:alignment`` …): one item per answer;
- ``pairwise:preferred``: one item per pair of answers, rated as the outcome of the pair's answer
  with the smaller id (1 better, 0.5 tie, 0 worse). A judge that judged both presentation orders
  rates the pair by its verdict when the two orders agree, and as a tie when they do not (the
  position-debiased reading);
- ``relevance``: one item per (run, turn or attribute), 1 relevant / 0 not;
- ``attribute``: one item per extracted attribute, accept 1 / uncertain 0.5 / reject 0 (the
  verifier model and the operator rate too).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field

from sqlite_utils import Database

from core.analysis.agreement import Level, PairStats, all_pairs, krippendorff_alpha
from storage.annotation_queues import queue as find_queue
from storage.export import RunFilter, run_where

#: (answer ids, targets) a queue restricts agreement to; None: no restriction.
Only = tuple[set[str], set[tuple]] | None
VERDICT_SCORES = {"accept": 1.0, "uncertain": 0.5, "reject": 0.0}


@dataclass
class DimensionRatings:
    dimension: str
    level: Level
    scale: tuple[float, float] | None
    #: rater -> item -> score (None: the rater tried and abstained / failed to parse)
    ratings: dict[str, dict[Hashable, float | None]] = field(default_factory=dict)

    @property
    def raters(self) -> list[str]:
        return sorted(self.ratings)


def rater_of(judge_model: str, human: bool) -> str:
    return judge_model.removeprefix("human:") if human else judge_model


def _queue_items(db: Database, queue: str | None) -> Only:
    """(answer ids, targets) of a queue: relevance targets as (run, kind, target), attributes as
    (extraction, attribute); None when no queue restricts."""
    if queue is None:
        return None
    find_queue(db, queue)  # an unknown name is said, not read as "nobody labelled yet"
    answers: set[str] = set()
    targets: set[tuple] = set()
    for kind, run, rid, other, target_kind, target, extraction in db.execute(
        "SELECT q.kind, i.run_id, i.response_id, i.other_response_id, i.target_kind, i.target_id, i.extraction_id "
        "FROM annotation_items i JOIN annotation_queues q ON q.name = i.queue WHERE i.queue = ?",
        [queue],
    ):
        answers.update(r for r in (rid, other) if r)
        if kind == "relevance":
            targets.add((run, target_kind, target))
        elif kind == "attribute":
            targets.add((extraction, target))
    return answers, targets


def load_ratings(db: Database, f: RunFilter | None = None, *, queue: str | None = None) -> list[DimensionRatings]:
    """Every dimension some rater scored in the filtered runs (or the queue's items), sorted by name."""
    f = f or RunFilter(probes=False)
    only = _queue_items(db, queue)
    dims: dict[str, DimensionRatings] = {}
    _scores(db, f, only, dims)
    _relevance(db, f, only, dims)
    _attributes(db, f, only, dims)
    return [dims[k] for k in sorted(dims)]


def _scores(db: Database, f: RunFilter, only: Only, dims: dict[str, DimensionRatings]) -> None:
    args: list = []
    rw = run_where(f, args)
    sql = f"""SELECT j.id, j.response_id, j.kind, j.dimension, j.score, j.parse_ok, j.judge_model, j.human,
            j.scale_min, j.scale_max, j.extra
        FROM judgments j JOIN runs r ON r.id = j.run_id
        WHERE j.response_id IS NOT NULL AND j.dimension != '*' AND {rw}
          AND (j.kind != 'pairwise' OR j.dimension = 'preferred')
        ORDER BY j.id"""
    pair_votes: dict[tuple[str, Hashable], list[float | None]] = defaultdict(list)
    for _, rid, kind, dim, score, ok, judge, human, lo, hi, extra in db.execute(sql, args):
        rater = rater_of(judge, bool(human))
        value = score if ok else None
        if kind == "pairwise":
            other = json.loads(extra or "{}").get("other_response")
            if not other or (only is not None and not {rid, other} <= only[0]):
                continue
            first, second = sorted((rid, other))
            item: Hashable = (first, second)
            if value is not None and rid != first:
                value = 1.0 - value  # the outcome of the pair's first answer
            if human:  # a human labels a pair once (the latest counts); a judge votes per order
                pair_votes[(rater, item)] = [value]
            else:
                pair_votes[(rater, item)].append(value)
            continue
        if only is not None and rid not in only[0]:
            continue
        d = dims.setdefault(f"{kind}:{dim}", DimensionRatings(f"{kind}:{dim}", _level(lo, hi), _scale(lo, hi)))
        d.ratings.setdefault(rater, {})[rid] = value  # ordered by id: the latest wins
    if pair_votes:
        d = dims.setdefault("pairwise:preferred", DimensionRatings("pairwise:preferred", "ordinal", (0.0, 1.0)))
        for (rater, item), votes in pair_votes.items():
            d.ratings.setdefault(rater, {})[item] = _pair_verdict(votes[-2:])


def _pair_verdict(votes: list[float | None]) -> float | None:
    """One rating from a pair's latest votes: both orders agreeing, else a tie; None if any failed."""
    if any(v is None for v in votes):
        return None
    return votes[0] if len(set(votes)) == 1 else 0.5


def _level(lo: float | None, hi: float | None) -> Level:
    return "nominal" if (lo, hi) == (0.0, 1.0) else "ordinal"


def _scale(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    return (lo, hi) if lo is not None and hi is not None else None


def _relevance(db: Database, f: RunFilter, only: Only, dims: dict[str, DimensionRatings]) -> None:
    args: list = []
    rw = run_where(f, args)
    rows = db.execute(
        f"""SELECT v.run_id, v.target_kind, v.target_id, v.decider, v.decider_model, v.relevant
        FROM relevance v JOIN runs r ON r.id = v.run_id WHERE {rw} AND v.decider != 'gold' ORDER BY v.id""",
        args,
    )
    d = DimensionRatings("relevance", "nominal", (0.0, 1.0))
    for run, kind, target, decider, model, relevant in rows:
        if only is not None and (run, kind, target) not in only[1]:
            continue
        rater = (
            model if decider == "human" else (f"{decider}:{model}" if model and decider != "llm" else model or decider)
        )
        d.ratings.setdefault(rater or decider, {})[(run, kind, target)] = None if relevant is None else float(relevant)
    if len(d.ratings) > 0:
        dims["relevance"] = d


def _attributes(db: Database, f: RunFilter, only: Only, dims: dict[str, DimensionRatings]) -> None:
    args: list = []
    rw = run_where(f, args)
    users = f"SELECT DISTINCT r.user_id FROM runs r WHERE {rw}"
    d = DimensionRatings("attribute", "nominal", (0.0, 1.0))

    def keep(item: tuple) -> bool:
        return only is None or item in only[1]

    for ex, attr, verifier, verdict, operator in db.execute(
        f"""SELECT a.extraction_id, a.id, e.verifier_model, a.verifier_verdict, a.operator_verdict
        FROM attributes_extracted a JOIN attribute_extractions e ON e.id = a.extraction_id
        WHERE e.user_id IN ({users})""",
        args,
    ):
        if not keep((ex, attr)):
            continue
        if verifier and verdict:
            d.ratings.setdefault(f"verifier:{verifier}", {})[(ex, attr)] = VERDICT_SCORES[verdict]
        if operator:
            d.ratings.setdefault("operator", {})[(ex, attr)] = VERDICT_SCORES[operator]
    for ex, attr, annotator, verdict in db.execute(
        f"""SELECT l.extraction_id, l.attribute_id, l.annotator, l.verdict FROM attribute_labels l
        JOIN attribute_extractions e ON e.id = l.extraction_id WHERE e.user_id IN ({users}) ORDER BY l.id""",
        args,
    ):
        if keep((ex, attr)):
            d.ratings.setdefault(annotator, {})[(ex, attr)] = VERDICT_SCORES[verdict]
    if any(r for r in d.ratings.values()):
        dims["attribute"] = d


@dataclass(frozen=True)
class DimensionAgreement:
    dimension: str
    level: Level
    raters: tuple[str, ...]
    #: every pair of raters that scored a common item
    pairs: tuple[PairStats, ...]
    #: Krippendorff's alpha over all raters (None: fewer than two raters on any item)
    alpha: float | None
    #: items at least one rater scored
    items: int


def agreement(db: Database, f: RunFilter | None = None, *, queue: str | None = None) -> list[DimensionAgreement]:
    """Pairwise statistics and alpha per dimension (:mod:`core.analysis.agreement`)."""
    out = []
    for d in load_ratings(db, f, queue=queue):
        pairs = all_pairs(d.ratings, d.dimension, scale=d.scale, level=d.level)
        alpha = krippendorff_alpha(d.ratings, level=d.level)
        items = len({i for r in d.ratings.values() for i in r})
        out.append(DimensionAgreement(d.dimension, d.level, tuple(d.raters), tuple(pairs), alpha, items))
    return out
