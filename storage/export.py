"""Export stored runs as CSV or JSONL, one row per final response (wide) or per judgment (long).

Pure functions over a ``Database`` (the CLI and the TUI's Runs tab share them)::

    cols, rows = wide_rows(db, RunFilter(models=["demo:oracle"]))
    n = write_csv(cols, rows, fh)            # or write_jsonl

Rows are streamed: one SQL query for the runs × responses (× queries) join and one for the
judgments, never a query per row. Safety:

* **Formula injection** (CSV only): a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or
  a carriage return gets a leading ``'`` so spreadsheets show it as text instead of running it.
  Numbers are never touched. To get the exact text back, drop a leading ``'`` when the next
  character is one of those six (or export JSONL, which is verbatim apart from the redaction).
* **Secrets**: nothing secret is stored, and as a second line of defence every text cell has the
  key values :mod:`core.providers.redact` knows (any variable the configuration names as a key,
  and ``*_API_KEY`` / ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` ones, with base64 and URL-encoded
  copies) and ``sk-…``-shaped keys replaced by ``[redacted]``. ``base_url`` is not exported.
* Model output is only ever in the ``text`` column; verdicts are in ``score_…`` columns (wide) or
  judgment rows (long), never in the same cell.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import IO

from sqlite_utils import Database

from core.analysis.score_columns import ScoreKey, score_column_names
from core.judges.aggregate import source_of
from core.providers.redact import secret_needles
from storage.output_files import formula_safe

REDACTED = "[redacted]"

WIDE_BASE = [
    "run_id",
    "created_at",
    "label",
    "user_id",
    "query_id",
    "query_kind",
    "preference_id",
    "expression_type",
    "context",
    "seed",
    "method",
    "history_tokens",
    "prompt_tokens",
    "evidence_tokens_to_query",
    "gold_retrieved",
    "response_id",
    "model",
    "provider",
    "is_demo",
    "params",
    "status",
    "error",
    "input_tokens",
    "estimate_input_tokens",
    "output_tokens",
    "cost_usd",
    "ttft_ms",
    "duration_ms",
    "cache_hit",
    "parse_failures",
    "filler_pools",
    # inter turns between the preference and the question (prefeval-turns, imported PrefEval results)
    "turns",
    # position sweeps: the depth the gold evidence was moved to (empty: not moved)
    "evidence_depth",
    # repeats of one cell: 0, 1 …
    "repeat",
    # how the answer was obtained: stream, or a provider batch API (openai-batch, anthropic-batch)
    "via",
    # prompt tokens served from / written to the provider's prompt cache (parts of input_tokens)
    "cache_read_tokens",
    "cache_write_tokens",
]
LONG_COLUMNS = [
    "run_id",
    "created_at",
    "label",
    "user_id",
    "query_id",
    "query_kind",
    "expression_type",
    "context",
    "seed",
    "method",
    "response_id",
    "model",
    "provider",
    "is_demo",
    "kind",
    "dimension",
    "source",
    "score",
    "scale_min",
    "scale_max",
    "judge_model",
    "prompt_version",
    "temperature",
    "parse_ok",
    "human",
    "heuristic",
    "judge_error",
    "rationale",
    # human labels: who, whether judges and models were hidden (empty: not recorded, e.g. imported),
    # the annotation queue, and for pairs the other answer and which answer was shown as A (1 or 2)
    "annotator",
    "blind",
    "queue",
    "other_response_id",
    "shown_first",
]


@dataclass
class RunFilter:
    """Which runs (and, for ``models``, which responses) to export or aggregate. Empty = all."""

    run_ids: list[str] = field(default_factory=list)
    users: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    contexts: list[str] = field(default_factory=list)
    #: ISO date or timestamp: runs created at or after it.
    since: str | None = None
    #: Batch name (stored as the runs' label).
    labels: list[str] = field(default_factory=list)
    #: False: leave knowledge-probe runs out (``runs.probe_of`` set), as answers-only views need.
    probes: bool = True
    #: Only these answers (the workbench's marked rows), within the runs the rest selects.
    response_ids: list[str] = field(default_factory=list)


def _in(column: str, values: list, args: list) -> str:
    args.extend(values)
    return f"{column} IN ({','.join('?' * len(values))})"


def run_where(f: RunFilter, args: list, alias: str = "r") -> str:
    """SQL conditions on ``runs`` (joined as ``alias``) for the filter; ``1`` when unfiltered."""
    parts = []
    for column, values in (
        ("id", f.run_ids),
        ("user_id", f.users),
        ("method", f.methods),
        ("context", f.contexts),
        ("label", f.labels),
    ):
        if values:
            parts.append(_in(f"{alias}.{column}", list(values), args))
    if f.since:
        parts.append(f"{alias}.created_at >= ?")
        args.append(f.since)
    if not f.probes:
        parts.append(f"{alias}.probe_of IS NULL")
    return " AND ".join(parts) or "1"


def answer_run_ids(db: Database, f: RunFilter | None = None) -> list[str]:
    """Ids of the runs the filter selects, in the order stored, without knowledge-probe runs (they are
    read through the run they probe, never as cases of their own)."""
    args: list = []
    where = run_where(f or RunFilter(), args)
    sql = f"SELECT r.id FROM runs r WHERE {where} AND r.probe_of IS NULL ORDER BY r.rowid"
    return [run_id for (run_id,) in db.execute(sql, args)]


def model_where(f: RunFilter, args: list, alias: str = "p") -> str:
    """SQL conditions on ``responses`` (joined as ``alias``): the models and answers asked for."""
    parts = []
    if f.models:
        parts.append(_in(f"{alias}.model", list(f.models), args))
    if f.response_ids:
        parts.append(_in(f"{alias}.id", list(f.response_ids), args))
    return " AND ".join(parts) or "1"


# -- secrets and formulas -------------------------------------------------------------------
_KEY_SHAPE = r"\bsk-[A-Za-z0-9_\-]{16,}"


class Cleaner:
    """Redacts secrets and (for CSV) neutralises formula-like text cells; numbers pass through."""

    def __init__(self, neutralise: bool, environ: dict[str, str] | None = None):
        self.neutralise = neutralise
        # The same key values (and encoded copies) the providers mask: every variable the
        # configuration names as a key, whatever its name, and every *_KEY / *_TOKEN / … variable.
        self._values = secret_needles(environ)
        self._secret = re.compile("|".join([re.escape(v) for v in self._values] + [_KEY_SHAPE]))
        self._shape = re.compile(_KEY_SHAPE)

    def _suspect(self, text: str) -> bool:
        """Cheap test first (substring search), the regex only when ``sk-`` occurs at all."""
        return any(v in text for v in self._values) or ("sk-" in text and self._shape.search(text) is not None)

    def __call__(self, value: object) -> object:
        if not isinstance(value, str) or not value:
            return value
        if self._suspect(value):
            value = self._secret.sub(REDACTED, value)
        return formula_safe(value) if self.neutralise else value

    def row(self, row: list) -> list:
        """The whole row at once: one secret search over its joined text (keys contain no NUL, so
        no match can span two cells), per-cell work only when something matched."""
        texts = [v for v in row if isinstance(v, str)]
        hit = bool(texts) and self._suspect("\x00".join(texts))
        if not hit and not self.neutralise:
            return row
        out = []
        for v in row:
            if isinstance(v, str) and v:
                if hit:
                    v = self._secret.sub(REDACTED, v)
                if self.neutralise:
                    v = formula_safe(v)
            out.append(v)
        return out


# -- wide ---------------------------------------------------------------------------------
def _source(judge_model: str, heuristic: bool, human: bool) -> str:
    return source_of(SimpleNamespace(judge_model=judge_model, heuristic=heuristic, human=human))


#: Planned prompt tokens of every step of the run (what `prefscope prompt` and the batch estimate count).
_PROMPT_TOKENS = "(SELECT sum(pt.tokens) FROM prompts pt WHERE pt.run_id = r.id)"
#: Planned tokens of the step whose reply is the exported answer: the call ``input_tokens`` reports on.
_STEP_TOKENS = "(SELECT pt.tokens FROM prompts pt WHERE pt.run_id = r.id AND pt.step = p.step LIMIT 1)"
#: Tokens between the nearest gold evidence session and the query, in the built history.
_EVIDENCE_DISTANCE = "(SELECT min(json_extract(e.value, '$.tokens_to_query')) FROM json_each(r.plan, '$.evidence') e)"
#: Retrieval methods only (the run stored retrievals) and only when the query has gold evidence.
_GOLD_RETRIEVED = """CASE WHEN json_array_length(r.plan, '$.evidence') > 0
                     THEN (SELECT max(rt.is_evidence) FROM retrievals rt WHERE rt.run_id = r.id) END"""


def _response_sql(f: RunFilter, args: list) -> str:
    rw = run_where(f, args)
    mw = model_where(f, args)
    return f"""
        SELECT r.id, r.created_at, r.label, r.user_id, r.query_id,
               coalesce(q.kind, json_extract(r.plan, '$.answer_format')), q.preference_id, r.expression_type,
               r.context, r.seed, r.method, json_extract(r.plan, '$.history_tokens'),
               p.id, p.model, p.provider, p.is_demo, p.params, p.status, p.error, p.input_tokens,
               p.output_tokens, p.cost_usd, p.ttft_ms, p.duration_ms, p.cache_hit, p.text,
               json_extract(r.plan, '$.filler_pools'),
               {_PROMPT_TOKENS}, {_EVIDENCE_DISTANCE}, {_GOLD_RETRIEVED}, {_STEP_TOKENS},
               json_extract(r.spec, '$.turns'), json_extract(r.spec, '$.evidence_depth'),
               coalesce(json_extract(r.spec, '$.repeat'), 0), p.via, p.cache_read_tokens, p.cache_write_tokens
        FROM runs r
        JOIN responses p ON p.run_id = r.id AND p.is_final = 1
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        WHERE {rw} AND {mw}
        ORDER BY r.created_at, r.id, p.slot"""


def _judgment_scores(
    db: Database, f: RunFilter
) -> tuple[list[str], dict[str, dict[str, float | None]], dict[str, int]]:
    """(score columns in a stable order, response id -> {column: score}, response id -> parse failures).

    Columns are named by :func:`core.analysis.score_columns.score_column_names`. When a response
    was judged more than once on the same column, the latest judgment wins.
    """
    args: list = []
    rw = run_where(f, args)
    sql = f"""SELECT j.response_id, j.kind, j.dimension, j.judge_model, j.heuristic, j.human, j.score, j.parse_ok
              FROM judgments j JOIN runs r ON r.id = j.run_id
              WHERE j.response_id IS NOT NULL AND {rw} ORDER BY j.id"""
    keyed: dict[str, dict[ScoreKey, float | None]] = {}
    failures: dict[str, int] = {}
    for rid, kind, dim, judge, heur, human, score, ok in db.execute(sql, args):
        keyed.setdefault(rid, {})[ScoreKey(kind, dim, _source(judge, bool(heur), bool(human)), judge)] = score
        if not ok:
            failures[rid] = failures.get(rid, 0) + 1
    names = score_column_names(k for mine in keyed.values() for k in mine)
    scores = {rid: {names[k]: v for k, v in mine.items()} for rid, mine in keyed.items()}
    return sorted(names.values()), scores, failures


def wide_rows(db: Database, f: RunFilter | None = None) -> tuple[list[str], Iterator[list]]:
    """Columns and a row iterator: one row per final response, text last."""
    f = f or RunFilter()
    score_cols, scores, failures = _judgment_scores(db, f)
    columns = WIDE_BASE + score_cols + ["text"]
    args: list = []
    sql = _response_sql(f, args)

    def rows() -> Iterator[list]:
        for r in db.execute(sql, args):
            rid = r[12]
            mine = scores.get(rid, {})
            yield [
                *r[:12],
                r[27],
                r[28],
                None if r[29] is None else bool(r[29]),
                *r[12:15],
                bool(r[15]),
                r[16],
                r[17],
                r[18],
                r[19],
                r[30],
                r[20],
                r[21],
                r[22],
                r[23],
                bool(r[24]),
                failures.get(rid, 0),
                " ".join(json.loads(r[26])) if r[26] else "",  # the pools the context drew filler from
                r[31],
                r[32],
                r[33],
                r[34],
                r[35],
                r[36],
                *(mine.get(c) for c in score_cols),
                r[25],
            ]

    return columns, rows()


# -- long ---------------------------------------------------------------------------------
def long_rows(db: Database, f: RunFilter | None = None) -> tuple[list[str], Iterator[list]]:
    """Columns and a row iterator: one row per judgment (pair judgments have no response)."""
    f = f or RunFilter()
    args: list = []
    rw = run_where(f, args)
    mw = model_where(f, args) if f.models or f.response_ids else "1"
    sql = f"""
        SELECT r.id, r.created_at, r.label, r.user_id, r.query_id,
               coalesce(q.kind, json_extract(r.plan, '$.answer_format')), r.expression_type, r.context, r.seed,
               r.method, j.response_id, p.model, p.provider, p.is_demo, j.kind, j.dimension, j.score, j.scale_min,
               j.scale_max, j.judge_model, j.prompt_version, j.temperature, j.parse_ok, j.human, j.heuristic,
               j.error, j.rationale, json_extract(j.extra, '$.annotator'), json_extract(j.extra, '$.blind'),
               json_extract(j.extra, '$.queue'), json_extract(j.extra, '$.other_response'),
               json_extract(j.extra, '$.shown_first')
        FROM judgments j
        JOIN runs r ON r.id = j.run_id
        LEFT JOIN responses p ON p.id = j.response_id
        LEFT JOIN queries q ON q.user_id = r.user_id AND q.id = r.query_id
        WHERE {rw} AND {mw}
        ORDER BY r.created_at, r.id, p.slot, j.id"""

    def rows() -> Iterator[list]:
        for r in db.execute(sql, args):
            yield [
                *r[:13],
                None if r[13] is None else bool(r[13]),
                *r[14:16],
                _source(r[19], bool(r[24]), bool(r[23])),
                *r[16:22],
                bool(r[22]),
                bool(r[23]),
                bool(r[24]),
                r[25],
                r[26],
                r[27] if r[23] else None,
                None if r[28] is None else bool(r[28]),
                *r[29:],
            ]

    return LONG_COLUMNS, rows()


# -- writers ------------------------------------------------------------------------------
def write_csv(columns: list[str], rows: Iterable[list], fh: IO[str], *, environ: dict[str, str] | None = None) -> int:
    """UTF-8 CSV with a header row (open ``fh`` with ``newline=""``). Returns the number of rows."""
    clean = Cleaner(neutralise=True, environ=environ)
    writer = csv.writer(fh)
    writer.writerow(columns)
    n = 0
    for row in rows:
        writer.writerow(
            ["" if v is None else ("true" if v else "false") if v is True or v is False else v for v in clean.row(row)]
        )
        n += 1
    return n


def write_jsonl(columns: list[str], rows: Iterable[list], fh: IO[str], *, environ: dict[str, str] | None = None) -> int:
    """One JSON object per line, keys in column order, null for unknown. Returns the number of rows."""
    clean = Cleaner(neutralise=False, environ=environ)
    n = 0
    for row in rows:
        fh.write(json.dumps(dict(zip(columns, clean.row(row))), ensure_ascii=False))
        fh.write("\n")
        n += 1
    return n


def export(
    db: Database,
    fh: IO[str],
    *,
    f: RunFilter | None = None,
    fmt: str = "csv",
    layout: str = "wide",
    environ: dict[str, str] | None = None,
) -> int:
    if layout not in ("wide", "long"):
        raise ValueError(f"layout must be wide or long, not {layout!r}")
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"format must be csv or jsonl, not {fmt!r}")
    columns, rows = (wide_rows if layout == "wide" else long_rows)(db, f)
    return (write_csv if fmt == "csv" else write_jsonl)(columns, rows, fh, environ=environ)
