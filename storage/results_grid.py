"""The results grid's rows: one per final answer, with every score it received, in ONE SQL query.

Answers (final responses) are joined with their run, their query (for its kind) and their
judgments; the rows a judgment multiplies are folded back into one :class:`GridRow` per answer
here, so thousands of answers cost one round trip (no query per run or per answer). A score
column is one (kind, dimension, judge, heuristic, human) combination; when an answer was judged
more than once on the same column, the latest judgment wins (as in ``storage.export``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from sqlite_utils import Database


class ScoreColumn(NamedTuple):
    """A tuple, so the thousands of score lookups hash in C."""

    kind: str
    dimension: str
    judge_model: str
    heuristic: bool
    human: bool


@dataclass
class GridRow:
    response_id: str
    run_id: str
    created_at: str
    batch: str  # the run's label: the batch name for batch runs, "" for a single run
    user_id: str
    query_id: str
    query_kind: str  # open / mcq / tf (the plan's answer format when the query is gone)
    expression_type: int | None
    model: str
    method: str
    context: str
    status: str  # the answer's status (ok, error, incomplete …)
    #: PrefEval inter turns (prefeval-turns, imported PrefEval answers): the depth of the case.
    turns: int | None = None
    scores: dict[ScoreColumn, float | None] = field(default_factory=dict)


@dataclass
class GridData:
    rows: list[GridRow]
    columns: list[ScoreColumn]  # every score column some row has, in a stable order


_SQL = """
    SELECT p.id, r.id, r.created_at, r.label, r.user_id, r.query_id,
           coalesce(q.kind, json_extract(r.plan, '$.answer_format')), r.expression_type,
           p.model, r.method, r.context, p.status, json_extract(r.spec, '$.turns'),
           j.kind, j.dimension, j.judge_model, j.heuristic, j.human, j.score
    FROM runs r
    JOIN responses p ON p.run_id = r.id AND p.is_final = 1
    LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
    LEFT JOIN judgments j ON j.response_id = p.id
    {where}
    ORDER BY r.created_at DESC, r.rowid DESC, p.slot, p.started_at, j.id"""


def load_grid(db: Database, response_ids: list[str] | None = None) -> GridData:
    """Every final answer of every stored run (or only the answers ``response_ids`` names), newest
    run first (ties: the later stored), answers in slot order."""
    rows: dict[str, GridRow] = {}
    columns: dict[tuple, ScoreColumn] = {}  # one object per column: thousands of scores share a few
    where, args = "", list(response_ids or [])
    if response_ids is not None:
        where = f"WHERE p.id IN ({','.join('?' * len(args))})" if args else "WHERE 0"
    for rec in db.execute(_SQL.format(where=where), args):
        row = rows.get(rec[0])
        if row is None:
            row = rows[rec[0]] = GridRow(*rec[:13])
        if rec[13] is not None:
            key = rec[13:18]
            column = columns.get(key)
            if column is None:
                column = columns[key] = ScoreColumn(rec[13], rec[14], rec[15], bool(rec[16]), bool(rec[17]))
            row.scores[column] = rec[18]
    return GridData(list(rows.values()), sorted(set(columns.values()), key=_column_order))


def _column_order(c: ScoreColumn) -> tuple:
    """Judges' columns first, the operator's last; within them by dimension, then judge."""
    return (c.human, c.kind, c.dimension, c.heuristic, c.judge_model)
