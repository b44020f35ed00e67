"""What the results grid shows, without Textual: its columns, the filter, the sort and the groups.

Rows are ``storage.results_grid.GridRow`` (one per answer). A :class:`Column` has a ``key`` (what
the filter and the sort call it: ``model``, ``alignment`` …), a header and a value per row.

Filter: whitespace-separated terms, all of which must hold. ``column:value`` keeps rows whose
cell contains ``value`` (case-insensitive); on a score column the value may be a comparison
(``alignment:>=4``, ``accuracy:0``; ``alignment:?`` for no score). Any other term must appear in
one of the row's text cells.

Groups: rows of one group are kept together (groups in order of their first row) and inside a
group ordered by case (user, query, expression, context, method) then model, unless the operator
sorted by a column. Grouping by batch therefore shows each batch as one unit in which each case's
models sit on adjacent rows; each group gets a header row with its answer count and the mean of
every score column.
"""

from __future__ import annotations

import operator
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from app.records import GridRow, ScoreColumn

Value = str | float | None


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    value: Callable[[GridRow], Value]
    score: ScoreColumn | None = None


@dataclass
class GroupHeader:
    """A header row: the group's factor values, how many answers, and per score column the mean."""

    values: dict[str, str]
    count: int
    means: dict[ScoreColumn, float | None] = field(default_factory=dict)


#: What ``g`` cycles through: the factors rows are grouped by.
#: What ``g`` cycles through, most asked first: one press gives "by model".
GROUPINGS: list[tuple[str, ...]] = [
    (),
    ("model",),
    ("batch",),
    ("batch", "model"),
    ("query",),
    ("method",),
    ("context",),
]
CASE_ORDER = ("user", "query", "E", "context", "method", "model")


def _judge_short(judge_model: str) -> str:
    return judge_model.split(":", 1)[-1] if ":" in judge_model else judge_model


def score_labels(columns: list[ScoreColumn]) -> dict[ScoreColumn, str]:
    """Readable, unique headers: the dimension alone when one judge scores it (``alignment``),
    else with the judge (``alignment·gpt-4o``); the operator's scores as ``you·alignment``, a named
    annotator's as ``ann·alignment``. Still equal: the kind in front, then the whole judge id."""
    per_dim = Counter(c.dimension for c in columns if not c.human)
    labels: dict[ScoreColumn, str] = {}
    for c in columns:
        if c.human:
            who = c.judge_model.removeprefix("human:")
            label = f"{'you' if who == 'operator' else who}·{c.dimension}"
        elif per_dim[c.dimension] == 1:
            label = c.dimension
        else:
            label = f"{c.dimension}·{_judge_short(c.judge_model)}"
        labels[c] = label
    seen = Counter(labels.values())
    labels = {c: (f"{c.kind}:{label}" if seen[label] > 1 else label) for c, label in labels.items()}
    seen = Counter(labels.values())
    return {c: (f"{c.kind}:{c.dimension}·{c.judge_model}" if seen[label] > 1 else label) for c, label in labels.items()}


def columns_for(score_columns: list[ScoreColumn], run_ids: dict[str, str]) -> list[Column]:
    """The run and the model, then one column per score, then the case's columns. Scores come
    before the long ids (users, queries, batches) so a narrow screen still shows them.
    ``run_ids``: full id → short form."""
    labels = score_labels(score_columns)
    scores = [Column(labels[c].lower(), labels[c], _score_of(c), score=c) for c in score_columns]
    return [
        Column("run", "run", lambda r: run_ids.get(r.run_id, r.run_id)),
        Column("model", "model", lambda r: r.model),
        *scores,
        Column("user", "user", lambda r: r.user_id),
        Column("query", "query", lambda r: f"{r.query_id} {r.query_kind}"),
        Column("E", "E", lambda r: f"E{r.expression_type}" if r.expression_type else ""),
        Column("method", "method", lambda r: r.method),
        Column("context", "context", _context),
        Column("status", "status", lambda r: r.status),
        Column("batch", "batch", lambda r: r.batch),
    ]


def _context(row: GridRow) -> str:
    """The context with PrefEval's inter turns in front when it has them (``68 · prefeval-turns``):
    the depth is the case's main factor there, a cell cut at the screen's edge keeps the number
    whole, and the filter (a substring) still finds the context's name."""
    return row.context if row.turns is None else f"{row.turns} · {row.context}"


def _score_of(column: ScoreColumn) -> Callable[[GridRow], Value]:
    return lambda r: r.scores.get(column)


def score_text(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


# -- filter ---------------------------------------------------------------------------------------
_COMPARE = re.compile(r"^(>=|<=|>|<|=)?\s*(-?\d+(?:\.\d+)?)$")
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "=": operator.eq,
}


def row_filter(text: str, columns: list[Column]) -> Callable[[GridRow], bool]:
    """A predicate for the filter text (see the module docstring)."""
    by_key = {c.key.lower(): c for c in columns}
    text_columns = [c for c in columns if c.score is None]
    tests: list[Callable[[GridRow], bool]] = []
    for term in text.lower().split():
        key, sep, wanted = term.partition(":")
        column = by_key.get(key) if sep else None
        if column is None:
            tests.append(_anywhere(term, text_columns))
        elif column.score is not None:
            tests.append(_score_test(column, wanted))
        else:
            tests.append(lambda r, c=column, w=wanted: w in str(c.value(r)).lower())
    return lambda row: all(t(row) for t in tests)


def _anywhere(term: str, columns: list[Column]) -> Callable[[GridRow], bool]:
    return lambda r: any(term in str(c.value(r)).lower() for c in columns)


def _score_test(column: Column, wanted: str) -> Callable[[GridRow], bool]:
    if wanted in ("?", "none", "-"):
        return lambda r: column.value(r) is None
    m = _COMPARE.match(wanted)
    if m is None:
        return lambda r: wanted in str(column.value(r))
    op, number = _OPS[m.group(1) or "="], float(m.group(2))
    return lambda r: (v := column.value(r)) is not None and op(float(v), number)


# -- sort and group -------------------------------------------------------------------------------
def sort_key(column: Column, descending: bool) -> Callable[[GridRow], tuple]:
    """Rows without a value last in either direction; text case-insensitive."""

    def key(row: GridRow) -> tuple:
        v = column.value(row)
        if v is None or v == "":
            return (1, 0)
        if isinstance(v, str):
            return (0, v.lower())
        return (0, -v if descending else v)

    return key


def sorted_rows(rows: list[GridRow], column: Column | None, descending: bool) -> list[GridRow]:
    if column is None:
        return list(rows)
    key = sort_key(column, descending)
    if column.score is not None:  # numbers were negated for descending, keeping missing ones last
        return sorted(rows, key=key)
    present = [r for r in rows if column.value(r) not in (None, "")]
    missing = [r for r in rows if column.value(r) in (None, "")]
    return sorted(present, key=key, reverse=descending) + missing


def grouped(
    rows: list[GridRow], factors: tuple[str, ...], columns: list[Column], sorted_by: Column | None
) -> list[GridRow | GroupHeader]:
    """``rows`` (already filtered and sorted) in groups, each after its :class:`GroupHeader`."""
    if not factors:
        return list(rows)
    by_key = {c.key: c for c in columns}
    groups: dict[tuple, list[GridRow]] = {}
    for row in rows:
        groups.setdefault(tuple(str(by_key[f].value(row)) for f in factors), []).append(row)
    case = [by_key[k] for k in CASE_ORDER]
    out: list[GridRow | GroupHeader] = []
    for values, members in groups.items():
        if sorted_by is None:
            members = sorted(members, key=lambda r: tuple(str(c.value(r)) for c in case))
        means = {}
        for c in columns:
            if c.score is not None:
                got = [float(v) for r in members if (v := c.value(r)) is not None]
                means[c.score] = sum(got) / len(got) if got else None
        out.append(GroupHeader(dict(zip(factors, values)), len(members), means))
        out.extend(members)
    return out
