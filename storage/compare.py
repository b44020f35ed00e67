"""Queries for ``prefscope compare``: two sets of stored answers, paired item by item, handed to
:mod:`core.analysis.paired`, which does every statistic.

A side is two runs' worth of anything a :class:`~storage.export.RunFilter` selects (a run, a
batch) or the runs whose factor has one value (``method=reminder``, optionally inside a batch).
Items pair on :data:`ITEM_FACTORS` plus method and model when both sides have the same set of
them; the factor the sides differ in is left out of the key (in ``FACTOR=VALUE`` mode, that
factor). One judge scores both sides: scores of different judges are never compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from sqlite_utils import Database

from core.analysis.paired import Comparison, compare, pair
from core.analysis.report import JudgmentRow
from core.judges.aggregate import source_of
from storage.export import RunFilter
from storage.report import ReportError, default_metrics, factor_names, load_judgments, parse_metric

#: What an item is, whatever is compared: the case and its history, the seed and the repeat
#: (filler pools and method options are not in it: keep sides that differ in them apart by batch).
ITEM_FACTORS = ("user", "query", "expression_type", "context", "turns", "evidence_depth", "seed", "repeat")
#: Part of the key when both sides have the same values of them (else they are what differs).
SHARED_FACTORS = ("method", "model", "temperature")


@dataclass(frozen=True)
class Side:
    #: As the user wrote it: a run id, a batch name or ``factor=value``.
    label: str
    filter: RunFilter
    factor: str | None = None
    value: str | None = None


@dataclass
class PairedResult:
    a: Side
    b: Side
    metric: str
    #: "source · judge model · prompt version" of the scores compared.
    judge: str
    key_factors: list[str]
    comparison: Comparison
    #: Items answered more than once on a side: the latest answer's score is used.
    duplicates: int = 0
    #: Answers whose judgment failed to parse, per side (no score, so not paired).
    failed_a: int = 0
    failed_b: int = 0
    notes: list[str] = field(default_factory=list)


def side_for(db: Database, given: str, batches: Sequence[str] = ()) -> Side:
    """``given`` as a side: ``factor=value`` (inside ``batches`` when named: the runs of any of
    them), a run id or unique prefix, or a batch name. Raises :class:`ReportError` naming what was
    tried."""
    from storage.ids import resolve_run_id

    base = RunFilter(labels=list(batches), probes=False)
    if "=" in given:
        name, _, value = given.partition("=")
        factor = factor_names([name])
        if not factor or not value.strip():
            raise ReportError(f"{given!r}: write FACTOR=VALUE, e.g. method=reminder")
        return Side(given, base, factor[0], value.strip())
    if db.execute("SELECT 1 FROM runs WHERE label = ? LIMIT 1", [given]).fetchone():
        return Side(given, replace(base, labels=[given]))
    try:
        run_id = resolve_run_id(db, given)
    except LookupError:
        raise ReportError(
            f"{given!r} is neither a batch name nor a run id (see `prefscope runs`), nor FACTOR=VALUE"
        ) from None
    return Side(given, replace(base, run_ids=[run_id]))


def _is(value: object, given: str) -> bool:
    """A stored factor value equals what the user typed (numbers as numbers: ``1.0`` is ``1``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(given) == value
        except ValueError:
            return False
    return str(value) == given


def _rows(db: Database, side: Side, kind: str, dimension: str | None) -> list[JudgmentRow]:
    """The side's judgments with the factors (compared factor first when there is one), then the run id."""
    lead = [side.factor] if side.factor else []
    rows = load_judgments(
        db, kind, dimension, [*lead, *ITEM_FACTORS, *SHARED_FACTORS], side.filter, item_columns=["r.id"]
    )
    if side.factor:
        rows = [r for r in rows if _is(r.factors[0], side.value or "")]
        rows = [replace(r, factors=r.factors[1:]) for r in rows]
    return rows


def _key_factors(a: Side, b: Side, rows_a: list[JudgmentRow], rows_b: list[JudgmentRow]) -> list[str]:
    if a.factor:
        return [f for f in (*ITEM_FACTORS, *SHARED_FACTORS) if f != a.factor]
    key = list(ITEM_FACTORS)
    for i, name in enumerate(SHARED_FACTORS, start=len(ITEM_FACTORS)):
        va, vb = {r.factors[i] for r in rows_a}, {r.factors[i] for r in rows_b}
        if va == vb:
            key.append(name)
        elif len(va) > 1 or len(vb) > 1:
            raise ReportError(
                f"the sides differ in {name} but hold several ({', '.join(sorted(map(str, va)))} vs "
                f"{', '.join(sorted(map(str, vb)))}): compare one value against another with "
                f"{name}=VALUE {name}=VALUE (and --batch NAME)"
            )
    return key


def _judge_of(rows: list[JudgmentRow], judge: str | None) -> tuple[str, str, str]:
    found = {(source_of(r), r.judge_model, r.prompt_version) for r in rows}
    if judge:
        found = {g for g in found if judge in (g[0], g[1])}
    if len(found) == 1:
        return found.pop()
    if not found:
        raise ReportError(f"no judgments{f' by {judge}' if judge else ''} on these answers")
    shown = "; ".join(" · ".join(g) for g in sorted(found))
    raise ReportError(f"several judges scored these answers ({shown}): pick one with --judge")


def _scores(
    rows: list[JudgmentRow], index: list[int], judge: tuple[str, str, str]
) -> tuple[dict[tuple, tuple[float, tuple[str, str | None]]], int, int]:
    """key -> (score, (run id, response id)) for the judge's parsed scores; duplicates and failures counted."""
    out: dict[tuple, tuple[float, tuple[str, str | None]]] = {}
    duplicates = failed = 0
    for r in rows:
        if (source_of(r), r.judge_model, r.prompt_version) != judge:
            continue
        if not r.parse_ok or r.score is None:
            failed += 1
            continue
        key = tuple(r.factors[i] for i in index)
        duplicates += key in out
        out[key] = (float(r.score), (r.factors[-1], r.response_id))  # rows come in judgment order: latest wins
    return out, duplicates, failed


def paired_comparison(
    db: Database, a: Side, b: Side, metric: str | None = None, judge: str | None = None
) -> PairedResult:
    """B against A on one metric, item by item (:func:`core.analysis.paired.compare`)."""
    if (a.factor or b.factor) and a.factor != b.factor:
        raise ReportError(f"compare two values of ONE factor (got {a.label!r} and {b.label!r})")
    if metric is None:  # the first metric that fits both sides
        fits_b = default_metrics(db, b.filter)
        metric = next((m for m in default_metrics(db, a.filter) if m in fits_b), "rubric:alignment")
    kind, dimension = parse_metric(metric)
    if dimension is None:
        raise ReportError(f"compare one dimension at a time: e.g. {kind}:alignment")
    rows_a, rows_b = _rows(db, a, kind, dimension), _rows(db, b, kind, dimension)
    if not rows_a or not rows_b:
        empty = a if not rows_a else b
        raise ReportError(f"no {kind}:{dimension} judgments for {empty.label!r}")
    key = _key_factors(a, b, rows_a, rows_b)
    names = [*ITEM_FACTORS, *SHARED_FACTORS]
    index = [names.index(f) for f in key]
    chosen = _judge_of(rows_a + rows_b, judge)
    map_a, dup_a, failed_a = _scores(rows_a, index, chosen)
    map_b, dup_b, failed_b = _scores(rows_b, index, chosen)
    pairs, only_a, only_b = pair(map_a, map_b)
    notes = []
    if dup_a or dup_b:
        notes.append(f"{dup_a + dup_b} items were answered more than once on one side: the latest answer counts")
    if only_a or only_b:
        notes.append(f"unpaired (no partner on the other side): {only_a} in A, {only_b} in B — left out")
    if chosen[0] == "heuristic":
        notes.append("scores by the heuristic demo judge: a lexical stand-in, not an LLM judge")
    return PairedResult(
        a,
        b,
        f"{kind}:{dimension}",
        " · ".join(chosen),
        key,
        compare(pairs, only_a, only_b),
        dup_a + dup_b,
        failed_a,
        failed_b,
        notes,
    )
