"""Reading runs back: the history list, one run exactly as it was, crash recovery, replay cache."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from sqlite_utils import Database

from core.plan import PromptPlan
from core.run.spec import RunSpec
from storage.prompt_messages import STEP_LIMITS, load_prompt_steps, with_step_limits


@dataclass(frozen=True)
class RunSummary:
    id: str
    created_at: str
    user_id: str
    query_id: str
    expression_type: int | None
    context: str
    method: str
    models: list[str]
    status: str
    label: str


@dataclass
class StoredResponse:
    id: str
    slot: int
    model: str
    is_demo: bool
    step: str
    is_final: bool
    text: str
    status: str
    error: str | None
    ttft_ms: float | None
    duration_ms: float | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    cache_hit: bool
    #: Prompt tokens the provider's cache served (part of input_tokens), or None.
    cache_read_tokens: int | None = None
    #: "stream", or the provider batch API that produced it.
    via: str = "stream"


@dataclass
class StoredJudgment:
    id: int
    run_id: str
    response_id: str | None
    kind: str
    dimension: str
    score: float | None
    scale_min: float | None
    scale_max: float | None
    rationale: str
    raw: str
    parse_ok: bool
    judge_model: str
    prompt_version: str
    temperature: float | None
    heuristic: bool
    human: bool
    error: str | None
    extra: dict = field(default_factory=dict)


@dataclass
class StoredRun:
    id: str
    created_at: str
    status: str
    spec: RunSpec
    plan: PromptPlan
    responses: list[StoredResponse] = field(default_factory=list)
    judgments: list[StoredJudgment] = field(default_factory=list)

    def final_responses(self) -> list[StoredResponse]:
        return sorted((r for r in self.responses if r.is_final), key=lambda r: r.slot)


class UnknownRun(LookupError):
    def __init__(self, run_id: str):
        super().__init__(f"no run {run_id!r} in the database (see `prefscope runs`)")


def list_runs(db: Database, *, user_id: str | None = None, limit: int = 500) -> list[RunSummary]:
    where, args = ("WHERE user_id = ?", [user_id]) if user_id else ("", [])
    rows = db.execute(
        f"SELECT id, created_at, user_id, query_id, expression_type, context, method, spec, status, label "
        f"FROM runs {where} ORDER BY created_at DESC, id DESC LIMIT ?",
        [*args, limit],
    ).fetchall()
    out = []
    for r in rows:
        models = [m["id"] for m in json.loads(r[7])["models"]]
        out.append(RunSummary(r[0], r[1], r[2], r[3], r[4], r[5], r[6], models, r[8], r[9]))
    return out


def run_ids_labelled(db: Database, labels: list[str]) -> list[str]:
    """Ids of the runs whose label matches any of ``labels`` (a batch name, ``imported:<file>``; a
    ``*`` matches any text, as in ``imported:single_pref_remind/*``), oldest first."""
    if not labels:
        return []
    where = " OR ".join("label GLOB ?" for _ in labels)
    rows = db.execute(f"SELECT id FROM runs WHERE {where} ORDER BY created_at, id", labels).fetchall()
    return [run_id for (run_id,) in rows]


def probe_run_ids(db: Database, run_ids: list[str]) -> dict[str, list[str]]:
    """Run id -> the ids of the knowledge-probe runs made for it (``runs.probe_of``), in the order stored."""
    out: dict[str, list[str]] = {r: [] for r in run_ids}
    for start in range(0, len(run_ids), 500):  # under SQLite's bound-parameter limit
        chunk = run_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for run_id, probe_of in db.execute(
            f"SELECT id, probe_of FROM runs WHERE probe_of IN ({marks}) ORDER BY rowid", chunk
        ):
            out[probe_of].append(run_id)
    return out


def load_run(db: Database, run_id: str) -> StoredRun:
    row = db.execute("SELECT id, created_at, status, spec, plan FROM runs WHERE id = ?", [run_id]).fetchone()
    if row is None:
        raise UnknownRun(run_id)
    meta = json.loads(row[4])
    steps = with_step_limits(load_prompt_steps(db, run_id), meta.pop(STEP_LIMITS, []))
    plan = PromptPlan.model_validate({**meta, "steps": [s.model_dump() for s in steps]})
    run = StoredRun(row[0], row[1], row[2], RunSpec.model_validate_json(row[3]), plan)
    for r in db.execute(
        "SELECT id, slot, model, is_demo, step, is_final, text, status, error, ttft_ms, duration_ms, input_tokens, "
        "output_tokens, cost_usd, cache_hit, cache_read_tokens, via FROM responses WHERE run_id = ? "
        "ORDER BY slot, started_at",
        [run_id],
    ):
        run.responses.append(
            StoredResponse(
                r[0],
                r[1],
                r[2],
                bool(r[3]),
                r[4],
                bool(r[5]),
                r[6],
                r[7],
                r[8],
                r[9],
                r[10],
                r[11],
                r[12],
                r[13],
                bool(r[14]),
                r[15],
                r[16],
            )
        )
    run.judgments = select_judgments(db, "run_id = ?", [run_id])
    return run


_JUDGMENT_COLUMNS = (
    "id, run_id, response_id, kind, dimension, score, scale_min, scale_max, rationale, raw, parse_ok, "
    "judge_model, prompt_version, temperature, heuristic, human, error, extra"
)


def select_judgments(db: Database, where: str = "", args: list | None = None) -> list[StoredJudgment]:
    """Judgments matching a SQL condition, oldest first, as StoredJudgment."""
    sql = f"SELECT {_JUDGMENT_COLUMNS} FROM judgments" + (f" WHERE {where}" if where else "") + " ORDER BY id"
    return [
        StoredJudgment(
            j[0],
            j[1],
            j[2],
            j[3],
            j[4],
            j[5],
            j[6],
            j[7],
            j[8],
            j[9],
            bool(j[10]),
            j[11],
            j[12],
            j[13],
            bool(j[14]),
            bool(j[15]),
            j[16],
            json.loads(j[17] or "{}"),
        )
        for j in db.execute(sql, args or [])
    ]


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_interrupted(db: Database) -> list[str]:
    """Runs and responses left 'running' by a process that no longer exists (a crash, kill -9)
    become 'interrupted'; their partial text is kept. Returns the run ids touched."""
    stale = [
        (rid, pid) for rid, pid in db.execute("SELECT id, pid FROM runs WHERE status = 'running'") if not _alive(pid)
    ]
    resp = [
        (rid, pid)
        for rid, pid in db.execute("SELECT id, pid FROM responses WHERE status = 'running'")
        if not _alive(pid)
    ]
    if not stale and not resp:
        return []
    with db.conn:
        db.conn.executemany(
            "UPDATE responses SET status = 'interrupted', error = 'the process running it stopped (crash or kill); "
            "partial text kept' WHERE id = ?",
            [(r,) for r, _ in resp],
        )
        db.conn.executemany("UPDATE runs SET status = 'interrupted' WHERE id = ?", [(r,) for r, _ in stale])
    return [r for r, _ in stale]


class SqliteResponseCache:
    """``core.ports.ResponseCache`` over the response_cache table (reads; the recorder writes)."""

    def __init__(self, db: Database):
        self.db = db

    def get(self, request_hash: str) -> dict | None:
        row = self.db.execute("SELECT record FROM response_cache WHERE request_hash = ?", [request_hash]).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, request_hash: str, record: dict) -> None:
        import datetime as dt

        self.db.execute(
            "INSERT OR REPLACE INTO response_cache (request_hash, model, record, created_at) VALUES (?, ?, ?, ?)",
            (
                request_hash,
                record.get("model", ""),
                json.dumps(record, ensure_ascii=False),
                dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            ),
        )
        self.db.conn.commit()
