"""Aggregate tables over stored judgments: the papers' figures as numbers.

Pure functions over a ``Database`` returning :class:`ReportTable`\\ s (the CLI renders them with
rich, the TUI's Runs tab can render the same rows)::

    score_table(db, "rubric:alignment", ["expression_type", "model"])   # RealPref Fig. 5
    score_table(db, "accuracy", ["context", "model"])                   # Fig. 6 (MCQ/TF)
    matching_table(db, ["instance_type"])                               # CUPID P/R/F1
    pass_table(db, ["model"]); bradley_terry_table(db)                  # InterPref

Rules (the same as :mod:`core.judges.aggregate`): every row is ONE judge source (llm / heuristic
/ human) and ONE judge model and prompt version, so heuristic scores never pool with LLM-judge
scores; parse failures carry no score and are counted in ``failed``; each row says whether its
responses came from demo models (``demo``: demo / real / mixed) and a grouped model id gets a
`` [demo]`` tag. Means come with a percentile-bootstrap 95% interval (``core.metrics.bootstrap_ci``,
2,000 resamples, seed 0; none for fewer than two scores).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlite_utils import Database

from core.judges.aggregate import source_of
from core.metrics import bootstrap_ci
from storage.export import RunFilter, model_where, run_where

#: factor name -> SQL expression (runs r, responses p, queries q, preferences pr, judgments j).
FACTORS: dict[str, str] = {
    "model": "p.model",
    "provider": "p.provider",
    "user": "r.user_id",
    "query": "r.query_id",
    "query_kind": "coalesce(q.kind, json_extract(r.plan, '$.answer_format'))",
    "expression_type": "r.expression_type",
    "context": "r.context",
    "method": "r.method",
    "seed": "r.seed",
    "batch": "r.label",
    "instance_type": "q.instance_type",
    "preference_origin": "pr.origin",
    "preference_type": "pr.type",
    "topic": "pr.topic",
    "dimension": "j.dimension",
}
ALIASES = {"expression": "expression_type", "kind": "query_kind", "label": "batch", "origin": "preference_origin"}
#: Metric shorthands: name -> (judgment kind, dimension).
METRICS = {"accuracy": ("choice", "accuracy")}


class ReportError(ValueError):
    pass


@dataclass
class ReportTable:
    title: str
    columns: list[str]
    rows: list[list]
    #: Column holding the value to chart, and the scale's (min, max) when known.
    value_column: str | None = None
    scale: tuple[float, float] | None = None
    notes: list[str] = field(default_factory=list)

    def as_dicts(self) -> list[dict]:
        return [dict(zip(self.columns, r)) for r in self.rows]


@dataclass(frozen=True)
class _J:
    """A judgment row with its factor values (duck-types core.judges.base.Judgment for helpers)."""

    kind: str
    dimension: str
    score: float | None
    parse_ok: bool
    judge_model: str
    prompt_version: str
    heuristic: bool
    human: bool
    is_demo: bool | None
    scale_min: float | None
    scale_max: float | None
    extra: dict
    factors: tuple


def factor_names(by: Iterable[str]) -> list[str]:
    out = []
    for name in by:
        key = ALIASES.get(name.strip().lower(), name.strip().lower())
        if not key:
            continue
        if key not in FACTORS:
            raise ReportError(f"unknown factor {name!r}; choose from {', '.join(FACTORS)}")
        out.append(key)
    return list(dict.fromkeys(out))


def parse_metric(metric: str) -> tuple[str, str | None]:
    """``accuracy`` → (choice, accuracy); ``rubric:alignment`` → (rubric, alignment); ``rubric`` → (rubric, None)."""
    m = metric.strip().lower()
    if m in METRICS:
        return METRICS[m]
    kind, _, dim = m.partition(":")
    if not kind:
        raise ReportError("empty metric; use accuracy or <kind>:<dimension>, e.g. rubric:alignment")
    return kind, dim or None


def load_judgments(
    db: Database,
    kind: str,
    dimension: str | None,
    by: list[str],
    f: RunFilter | None = None,
    *,
    with_extra: bool = False,
) -> list[_J]:
    """Every judgment of ``kind`` (and ``dimension``) in the filtered runs, with its factor values.
    One SQL query."""
    f = f or RunFilter()
    args: list = [kind]
    dim_sql = ""
    if dimension:
        dim_sql = " AND j.dimension = ?"
        args.append(dimension)
    rw = run_where(f, args)
    mw = model_where(f, args)
    cols = ", ".join(FACTORS[b] for b in by) or "NULL"
    extra = "j.extra" if with_extra else "'{}'"
    sql = f"""
        SELECT j.kind, j.dimension, j.score, j.parse_ok, j.judge_model, j.prompt_version, j.heuristic, j.human,
               p.is_demo, j.scale_min, j.scale_max, {extra}, {cols}
        FROM judgments j
        JOIN runs r ON r.id = j.run_id
        LEFT JOIN responses p ON p.id = j.response_id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        LEFT JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id
        WHERE j.kind = ?{dim_sql} AND {rw} AND {mw}
        ORDER BY j.id"""
    out = []
    for row in db.execute(sql, args):
        out.append(
            _J(
                row[0],
                row[1],
                row[2],
                bool(row[3]),
                row[4],
                row[5],
                bool(row[6]),
                bool(row[7]),
                None if row[8] is None else bool(row[8]),
                row[9],
                row[10],
                json.loads(row[11] or "{}"),
                tuple(row[12 : 12 + len(by)]) if by else (),
            )
        )
    return out


def _demo_label(items: list[_J]) -> str:
    flags = {j.is_demo for j in items if j.is_demo is not None}
    if not flags:
        return "n/a"
    return "demo" if flags == {True} else "real" if flags == {False} else "mixed"


def _tag_models(by: list[str], key: tuple, items: list[_J]) -> list:
    values = list(key)
    if "model" in by:
        i = by.index("model")
        if values[i] is not None and any(j.is_demo for j in items):
            values[i] = f"{values[i]} [demo]"
    return values


def _sort_key(key: tuple):
    return tuple((v is None, str(type(v).__name__) if v is not None else "", v if v is not None else 0) for v in key)


def _grouped(items: list[_J]) -> dict[tuple, list[_J]]:
    groups: dict[tuple, list[_J]] = defaultdict(list)
    for j in items:
        groups[(source_of(j), j.judge_model, j.prompt_version, *j.factors)].append(j)
    return dict(sorted(groups.items(), key=lambda kv: _sort_key(kv[0])))


def score_table(
    db: Database,
    metric: str,
    by: Iterable[str] = ("model",),
    f: RunFilter | None = None,
    *,
    sources: Iterable[str] | None = None,
) -> ReportTable:
    """n, mean and bootstrap 95% CI of one metric per group of ``by`` factors (× judge)."""
    kind, dimension = parse_metric(metric)
    factors = factor_names(by)
    if dimension is None and "dimension" not in factors:
        factors.append("dimension")
    items = load_judgments(db, kind, dimension, factors, f)
    wanted = set(sources) if sources else None
    rows = []
    scale: tuple[float, float] | None = None
    for key, js in _grouped(items).items():
        source, judge, version, *fvals = key
        if wanted and source not in wanted:
            continue
        scores = [j.score for j in js if j.parse_ok and j.score is not None]
        lo, hi = bootstrap_ci(scores)
        mean = sum(scores) / len(scores) if scores else None
        rows.append(
            [
                *_tag_models(factors, tuple(fvals), js),
                source,
                judge,
                version,
                _demo_label(js),
                len(scores),
                len(js) - len(scores),
                mean,
                lo,
                hi,
            ]
        )
        for j in js:
            if j.scale_min is not None and j.scale_max is not None:
                scale = (
                    (min(scale[0], j.scale_min), max(scale[1], j.scale_max)) if scale else (j.scale_min, j.scale_max)
                )
    label = metric if dimension is None or metric in METRICS else f"{kind}:{dimension}"
    title = f"{label} by {' × '.join(factors) or 'all'}"
    notes = [
        "each row is one judge source and judge model: heuristic and human scores are never pooled with LLM ones",
        "failed = parse failures (no score; never counted as 0)",
    ]
    if not rows:
        notes.insert(0, f"no {label} judgments in the selected runs")
    return ReportTable(
        title,
        [*factors, "source", "judge", "prompt_version", "demo", "n", "failed", "mean", "ci_low", "ci_high"],
        rows,
        "mean",
        scale,
        notes,
    )


def matching_table(db: Database, by: Iterable[str] = ("instance_type",), f: RunFilter | None = None) -> ReportTable:
    """CUPID preference matching: micro-averaged P/R/F1 per group (LLM judges only)."""
    from core.judges.preference_matching import micro_prf

    factors = factor_names(by)
    items = [
        j for j in load_judgments(db, "matching", "precision", factors, f, with_extra=True) if source_of(j) == "llm"
    ]
    rows = []
    for key, js in _grouped(items).items():
        _, judge, version, *fvals = key
        extras = [j.extra for j in js if j.parse_ok]
        prf = micro_prf(extras)
        rows.append(
            [
                *_tag_models(factors, tuple(fvals), js),
                judge,
                version,
                _demo_label(js),
                len(extras),
                len(js) - len(extras),
                prf.precision,
                prf.recall,
                prf.f1,
            ]
        )
    notes = ["micro-averaged over instances (CUPID §2.3): Fully 1, Partially 0.5, Not covered 0"]
    if not rows:
        notes.insert(0, "no preference-matching judgments (judge `matching:<model>` on cupid-infer runs)")
    return ReportTable(
        f"preference matching by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "n", "failed", "precision", "recall", "f1"],
        rows,
        "f1",
        (0.0, 1.0),
        notes,
    )


def pass_table(db: Database, by: Iterable[str] = ("model",), f: RunFilter | None = None) -> ReportTable:
    """InterPref pass rate (all 4 swapped orders right; chance 6.25%) per group, LLM judges only."""
    from core.judges.pairwise import pass_summary

    factors = factor_names(by)
    items = load_judgments(db, "pairwise", "pass", factors, f, with_extra=True)
    rows = []
    for key, js in _grouped(items).items():
        source, judge, version, *fvals = key
        if source != "llm":
            continue
        s = pass_summary(js)
        rows.append(
            [
                *_tag_models(factors, tuple(fvals), js),
                judge,
                version,
                _demo_label(js),
                s["n"],
                s["undecided"],
                s["pass_rate"],
                s["order_disagreement"],
            ]
        )
    notes = ["chance pass rate is 0.5**4 = 6.25%; undecided = an order could not be parsed"]
    if not rows:
        notes.insert(0, "no pairwise pass judgments in the selected runs")
    return ReportTable(
        f"InterPref pass rate by {' × '.join(factors) or 'all'}",
        [*factors, "judge", "prompt_version", "demo", "n", "undecided", "pass_rate", "order_disagreement"],
        rows,
        "pass_rate",
        (0.0, 1.0),
        notes,
    )


def bradley_terry_table(db: Database, f: RunFilter | None = None) -> ReportTable:
    """Win rate and Bradley–Terry coefficient per model from pairwise ``win`` judgments (LLM only)."""
    import numpy as np

    from core.judges.pairwise import win_rates

    items = load_judgments(db, "pairwise", "win", [], f, with_extra=True)
    items = [j for j in items if j.parse_ok and j.score is not None and "model_a" in j.extra]
    if not items:
        return ReportTable(
            "Bradley–Terry",
            ["model", "comparisons", "mean_win_rate", "bt"],
            [],
            "bt",
            None,
            ["no pairwise win judgments in the selected runs"],
        )
    names, matrix, bt = win_rates(items)
    rows = []
    for i, name in enumerate(names):
        row = np.delete(matrix[i], i)
        met = row[~np.isnan(row)]
        n = sum(1 for j in items if name in (j.extra["model_a"], j.extra["model_b"]))
        tag = f"{name} [demo]" if name.startswith("demo:") else name
        rows.append([tag, n, float(met.mean()) if len(met) else None, float(bt[i])])
    rows.sort(key=lambda r: -r[3])
    return ReportTable(
        "Bradley–Terry coefficients (InterPref App. C)",
        ["model", "comparisons", "mean_win_rate", "bt"],
        rows,
        "bt",
        None,
        ["coefficients are centred on mean 0; W[i,j] = mean score of i against j"],
    )
