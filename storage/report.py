"""Queries for ``prefscope report``: the judgment rows of the selected runs, handed to
:mod:`core.analysis.report`, which does every statistic.

Each function runs ONE SQL query and returns a :class:`core.analysis.report.ReportTable`::

    score_table(db, "rubric:alignment", ["expression_type", "model"])   # RealPref Fig. 5
    score_table(db, "accuracy", ["context", "model"])                   # Fig. 6 (MCQ/TF)
    agreement_table(db, "rubric:alignment", ["model"])                  # human vs each judge
    section_table(db, section, ["model"])                               # a benchmark's own table
    default_metrics(db, f)                                              # what fits the queries
    summary_table(db, RunFilter(labels=["fig5"]))                       # a batch per model
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from sqlite_utils import Database

from core.analysis import repeats, report, score_columns
from core.analysis.heatmap import Heatmap, heatmaps
from core.analysis.report import JudgmentRow, ReportTable, ResponseRow
from core.benchmark import ReportSection, report_sections
from storage.export import RunFilter, model_where, run_where

_SESSIONS_BACK = """(SELECT count(*) FROM json_each(r.plan, '$.context') c
    WHERE NOT coalesce(json_extract(c.value, '$.filler'), 0)
      AND c.key > (SELECT max(json_extract(e.value, '$.position')) FROM json_each(r.plan, '$.evidence') e)
    HAVING (SELECT count(*) FROM json_each(r.plan, '$.evidence')) > 0)"""

#: factor name -> SQL expression (runs r, responses p, queries q, preferences pr, judgments j).
FACTORS: dict[str, str] = {
    "model": "p.model",
    "provider": "p.provider",
    "user": "r.user_id",
    "query": "r.query_id",
    "query_kind": "coalesce(q.kind, json_extract(r.plan, '$.answer_format'))",
    "expression_type": "r.expression_type",
    "context": "r.context",
    #: Inter turns between the preference and the question (prefeval-turns runs, imported PrefEval results).
    "turns": "json_extract(r.spec, '$.turns')",
    #: Position sweeps: the depth the gold evidence was moved to (RunSpec.evidence_depth; NULL: not moved).
    "evidence_depth": "json_extract(r.spec, '$.evidence_depth')",
    #: Recency: the history's own sessions (filler not counted) after the latest gold evidence
    #: session the context showed; NULL when none was shown (CUPID Fig. 3 reads it this way).
    "sessions_back": _SESSIONS_BACK,
    #: Repeats of one cell: 0, 1 … (RunSpec.repeat).
    "repeat": "coalesce(json_extract(r.spec, '$.repeat'), 0)",
    #: The answer's sampling temperature as sent (NULL: the model's default).
    "temperature": "json_extract(p.params, '$.temperature')",
    "method": "r.method",
    "seed": "r.seed",
    "batch": "r.label",
    "instance_type": "q.instance_type",
    "preference_origin": "pr.origin",
    "preference_type": "pr.type",
    "topic": "pr.topic",
    #: The dataset's own question type (PersonaMem: recall_user_shared_facts, suggest_new_ideas …).
    "question_type": "json_extract(q.meta, '$.question_type')",
    "dimension": "j.dimension",
    #: The dataset's own question category (``Query.meta["category"]``); a benchmark may name its
    #: values (LoCoMo: ``4 single-hop``, see :func:`factor_sql`).
    "category": "json_extract(q.meta, '$.category')",
}
ALIASES = {
    "recency": "sessions_back",
    "depth": "evidence_depth",
    "expression": "expression_type",
    "kind": "query_kind",
    "label": "batch",
    "origin": "preference_origin",
}
#: Metric shorthands: name -> (judgment kind, dimension).
METRICS = {"accuracy": ("choice", "accuracy")}


class ReportError(ValueError):
    pass


#: Characters that make a ``--batch`` or ``--model`` value a pattern (SQLite GLOB, as `judge --label`).
PATTERN_CHARS = "*?["


def with_patterns_expanded(db: Database, f: RunFilter) -> RunFilter:
    """``f`` with each batch or model pattern (``imported:single_pref_remind/*``, ``demo:*``)
    replaced by the stored batch names / model ids it matches, so a report of an imported file's
    runs is not a report of the whole database. Raises :class:`ReportError` naming a pattern that
    matches nothing. Two queries at most, none when no value is a pattern."""
    from dataclasses import replace

    labels = _expanded(db, "SELECT DISTINCT label FROM runs WHERE label GLOB ?", f.labels, "batch")
    models = _expanded(db, "SELECT DISTINCT model FROM responses WHERE model GLOB ?", f.models, "model")
    return replace(f, labels=labels, models=models)


def _expanded(db: Database, sql: str, values: Iterable[str], what: str) -> list[str]:
    out: list[str] = []
    for value in values:
        if not any(ch in value for ch in PATTERN_CHARS):
            out.append(value)
            continue
        found = sorted(v for (v,) in db.execute(sql, [value]) if v is not None)
        if not found:
            raise ReportError(f"no stored {what} matches {value!r} (see `prefscope runs`)")
        out += found
    return list(dict.fromkeys(out))


def _literal(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(f"factor value names need int, float or str keys, got {value!r}")
    return str(value) if not isinstance(value, str) else "'" + value.replace("'", "''") + "'"


def factor_sql(name: str) -> str:
    """The SQL of factor ``name`` (a key of :data:`FACTORS`): its raw value, shown as
    ``<value> <name>`` for users of a benchmark that names the factor's values
    (:attr:`core.benchmark.Benchmark.factor_labels`), as it is for everyone else."""
    from core.benchmark import installed

    raw = FACTORS[name]
    for bench in installed():
        for labels in bench.factor_labels:
            if labels.factor != name:
                continue
            names = " ".join(
                f"WHEN {_literal(v)} THEN {_literal(f'{v} {label}')}" for v, label in labels.load().items()
            )
            sources = ", ".join(_literal(s) for s in sorted(bench.source_names()))
            users = f"r.user_id IN (SELECT id FROM users WHERE source IN ({sources}))"
            raw = f"CASE WHEN {users} THEN CASE {FACTORS[name]} {names} ELSE {FACTORS[name]} END ELSE {raw} END"
    return raw


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
    every_judgment: bool = False,
    item_columns: Iterable[str] = (),
) -> list[JudgmentRow]:
    """Every judgment of ``kind`` (and ``dimension``) in the filtered runs, with its factor values
    (then the values of the SQL ``item_columns``). The latest judgment per response and judge
    unless ``every_judgment`` (a judge's test–retest needs them all). One SQL query."""
    f = f or RunFilter()
    args: list = [kind]
    dim_sql = ""
    if dimension:
        dim_sql = " AND j.dimension = ?"
        args.append(dimension)
    rw = run_where(f, args)
    mw = model_where(f, args)
    items = list(item_columns)
    cols = ", ".join([*(factor_sql(b) for b in by), *items]) or "NULL"
    extra = "j.extra" if with_extra else "'{}'"
    sql = f"""
        SELECT j.kind, j.dimension, j.score, j.parse_ok, j.judge_model, j.prompt_version, j.heuristic, j.human,
               p.is_demo, j.scale_min, j.scale_max, {extra}, j.response_id, {cols}
        FROM judgments j
        JOIN runs r ON r.id = j.run_id
        LEFT JOIN responses p ON p.id = j.response_id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        LEFT JOIN preferences pr ON pr.user_id = r.user_id AND pr.id = q.preference_id
        WHERE j.kind = ?{dim_sql} AND {rw} AND {mw} AND {"1" if every_judgment else LATEST_JUDGMENT}
        ORDER BY j.id"""
    return [
        JudgmentRow(
            kind=row[0],
            dimension=row[1],
            score=row[2],
            parse_ok=bool(row[3]),
            judge_model=row[4],
            prompt_version=row[5],
            heuristic=bool(row[6]),
            human=bool(row[7]),
            is_demo=None if row[8] is None else bool(row[8]),
            scale_min=row[9],
            scale_max=row[10],
            extra=json.loads(row[11] or "{}"),
            response_id=row[12],
            factors=tuple(row[13 : 13 + len(by) + len(items)]) if by or items else (),
        )
        for row in db.execute(sql, args)
    ]


#: A response re-judged by the same judge counts once, by its latest judgment (as in exports and the
#: results grid); pairwise judgments are kept whole (one response may be in several pairs).
LATEST_JUDGMENT = """(j.response_id IS NULL OR j.kind = 'pairwise' OR j.id = (
    SELECT max(j2.id) FROM judgments j2
    WHERE j2.response_id = j.response_id AND j2.kind = j.kind AND j2.dimension = j.dimension
      AND j2.judge_model = j.judge_model))"""


def _metric_factors(metric: str, by: Iterable[str]) -> tuple[str, str | None, str, list[str]]:
    """(kind, dimension, label, factors); without a dimension, rows are split by dimension."""
    kind, dimension = parse_metric(metric)
    factors = factor_names(by)
    if dimension is None and "dimension" not in factors:
        factors.append("dimension")
    label = metric if dimension is None or metric in METRICS else f"{kind}:{dimension}"
    return kind, dimension, label, factors


def score_table(
    db: Database,
    metric: str,
    by: Iterable[str] = ("model",),
    f: RunFilter | None = None,
    *,
    sources: Iterable[str] | None = None,
) -> ReportTable:
    """n, mean and bootstrap 95% CI of one metric per group of ``by`` factors (× judge)."""
    kind, dimension, label, factors = _metric_factors(metric, by)
    return report.score_table(load_judgments(db, kind, dimension, factors, f), label, factors, sources=sources)


def agreement_table(
    db: Database, metric: str, by: Iterable[str] = ("model",), f: RunFilter | None = None
) -> ReportTable:
    """Human scores against each judge's on the same responses, per group of ``by`` factors."""
    kind, dimension, label, factors = _metric_factors(metric, by)
    return report.agreement_table(load_judgments(db, kind, dimension, factors, f), label, factors)


def heatmap_panels(db: Database, metric: str, by: Iterable[str], f: RunFilter | None = None) -> list[Heatmap]:
    """The metric's mean over the first two ``by`` factors (rows × columns), one panel per judge
    and per value of any further factor (:mod:`core.analysis.heatmap`)."""
    kind, dimension, label, factors = _metric_factors(metric, by)
    if len(factors) < 2:
        raise ReportError("--heatmap needs two factors in --by: rows, then columns (e.g. evidence_depth,context)")
    return heatmaps(load_judgments(db, kind, dimension, factors, f), label, factors)


#: What makes two answers repeats of one item: the cell (its spec without repeat number and batch
#: name, as a cell key leaves the name out) and the model that answered.
ITEM_COLUMNS = ("json_remove(r.spec, '$.repeat', '$.label')", "p.model")


def repeats_table(db: Database, metric: str, by: Iterable[str] = ("model",), f: RunFilter | None = None) -> ReportTable:
    """Per-item variance and verdict flip rate across the repeats of each cell (:mod:`core.analysis.repeats`)."""
    kind, dimension, label, factors = _metric_factors(metric, by)
    rows = load_judgments(db, kind, dimension, factors, f, item_columns=ITEM_COLUMNS)
    return repeats.repeat_table(rows, label, factors, len(ITEM_COLUMNS))


def retest_table(db: Database, metric: str, f: RunFilter | None = None) -> ReportTable:
    """Each judge's agreement with itself on the answers it judged more than once."""
    kind, dimension, label, _ = _metric_factors(metric, [])
    return repeats.retest_table(load_judgments(db, kind, dimension, [], f, every_judgment=True), label)


def has_repeats(db: Database, f: RunFilter | None = None) -> bool:
    """Whether the selected runs include a repeat of a cell (repeat number above 0)."""
    f = f or RunFilter()
    args: list = []
    rw = run_where(f, args)
    sql = f"SELECT 1 FROM runs r WHERE {rw} AND coalesce(json_extract(r.spec, '$.repeat'), 0) > 0 LIMIT 1"
    return db.execute(sql, args).fetchone() is not None


def judged(db: Database, f: RunFilter | None = None) -> set[tuple[str, str]]:
    """The ``(kind, dimension)`` pairs the filtered runs have judgments of. One SQL query."""
    f = f or RunFilter()
    args: list = []
    rw = run_where(f, args)
    mw = model_where(f, args)
    sql = f"""
        SELECT DISTINCT j.kind, j.dimension
        FROM judgments j
        JOIN runs r ON r.id = j.run_id
        LEFT JOIN responses p ON p.id = j.response_id
        WHERE {rw} AND {mw}"""
    return {(kind, dim) for kind, dim in db.execute(sql, args)}


def applicable_sections(db: Database, f: RunFilter | None = None, flags: Iterable[str] = ()) -> list[ReportSection]:
    """The registered report sections (:mod:`core.benchmarks`) to print for the filtered runs: each
    section without a flag whose judge kind (and dimension) has judgments among them, and every
    section whose flag is in ``flags`` (``report --cupid``), in the registry's section order."""

    wanted = set(flags)
    pairs = judged(db, f) if any(s.flag is None for _, s in report_sections()) else set()
    kinds = {kind for kind, _ in pairs}
    out = []
    for _, section in report_sections():
        if section.flag is not None:
            if section.flag in wanted:
                out.append(section)
        elif (section.judge_kind, section.dimension) in pairs or (
            section.dimension is None and section.judge_kind in kinds
        ):
            out.append(section)
    return out


def section_table(
    db: Database, section: ReportSection, by: Iterable[str] | None = None, f: RunFilter | None = None
) -> ReportTable:
    """A registered report section's table: its target over the judgments of its kind (and
    dimension), grouped by ``by`` (None: the section's own factors, else ``("model",)``)."""
    chosen = by if by is not None else section.factors if section.factors is not None else ("model",)
    factors = factor_names(chosen)
    rows = load_judgments(db, section.judge_kind, section.dimension, factors, f, with_extra=True)
    return section.load()(rows, factors)


def default_metrics(db: Database, f: RunFilter | None = None) -> list[str]:
    """The metrics a report shows when none is asked for (accuracy for MCQ/TF queries, rubric
    alignment or another judged metric for open ones; see
    :func:`core.analysis.score_columns.default_metrics`). One SQL query."""
    f = f or RunFilter()
    args: list = []
    rw = run_where(f, args)
    mw = model_where(f, args)
    sql = f"""
        SELECT DISTINCT {FACTORS["query_kind"]}, j.kind, j.dimension
        FROM runs r
        JOIN responses p ON p.run_id = r.id AND p.is_final = 1
        LEFT JOIN judgments j ON j.response_id = p.id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        WHERE {rw} AND {mw}"""
    found = db.execute(sql, args).fetchall()
    return score_columns.default_metrics(
        {k for k, _, _ in found}, {(kind, dim) for _, kind, dim in found if kind is not None}
    )


def load_responses(db: Database, f: RunFilter | None = None) -> list[ResponseRow]:
    """Every final answer of the filtered runs. One SQL query."""
    f = f or RunFilter()
    args: list = []
    rw = run_where(f, args)
    mw = model_where(f, args)
    sql = f"""
        SELECT p.model, p.status, p.is_demo, p.input_tokens, p.output_tokens, p.cost_usd
        FROM runs r JOIN responses p ON p.run_id = r.id AND p.is_final = 1
        WHERE {rw} AND {mw}"""
    return [ResponseRow(m, st, bool(demo), i, o, c) for m, st, demo, i, o, c in db.execute(sql, args)]


def summary_table(db: Database, f: RunFilter | None = None, metrics: Iterable[str] | None = None) -> ReportTable:
    """Per model: answers, ok / failed, the mean of each default metric's score column, tokens and
    cost (the batch-end summary). One query for the answers, one per metric for the scores."""
    chosen = list(metrics) if metrics else default_metrics(db, f)
    rows: list[JudgmentRow] = []
    for metric in chosen:
        kind, dimension = parse_metric(metric)
        rows += load_judgments(db, kind, dimension, ["model"], f)
    return report.summary_table(load_responses(db, f), rows)
