"""003: runs and what they produced — prompts, retrievals, responses, judgments — and the
response cache that replay serves from.

Runs deliberately have no foreign key to ``users``: re-importing a user replaces its rows, and
the runs made on the old import must survive (their spec and plan are stored whole).
Messages sent are not stored per response: they are the run's prompt steps (``prompts``) with
earlier steps' outputs filled in, all of which are stored, so they can be rebuilt exactly.
"""

from __future__ import annotations

from sqlite_utils import Database

SCHEMA = """
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    created_at      TEXT NOT NULL,
    finished_at     TEXT,
    user_id         TEXT NOT NULL,
    query_id        TEXT NOT NULL,
    expression_type INTEGER,
    context         TEXT NOT NULL,
    seed            INTEGER NOT NULL,
    method          TEXT NOT NULL,
    label           TEXT NOT NULL DEFAULT '',
    spec            TEXT NOT NULL,               -- JSON RunSpec (models, params, judges …)
    plan            TEXT NOT NULL,               -- JSON PromptPlan without step messages
    status          TEXT NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running','ok','partial','error','cancelled','interrupted')),
    pid             INTEGER                      -- process that ran it (crash recovery)
);
CREATE INDEX runs_by_user ON runs(user_id, created_at);

CREATE TABLE prompts (
    run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_index INTEGER NOT NULL,
    step       TEXT NOT NULL,
    purpose    TEXT NOT NULL DEFAULT '',
    messages   TEXT NOT NULL,                    -- JSON [{role, content}] as planned
    tokens     INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    PRIMARY KEY (run_id, step_index)
);

CREATE TABLE retrievals (
    run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    rank        INTEGER NOT NULL,
    session_id  TEXT NOT NULL,
    turn_index  INTEGER NOT NULL,
    similarity  REAL NOT NULL,
    is_evidence INTEGER NOT NULL,
    PRIMARY KEY (run_id, rank)
);

CREATE TABLE responses (
    id            TEXT PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    slot          INTEGER NOT NULL,
    model         TEXT NOT NULL,                 -- provider:model
    provider      TEXT NOT NULL,
    is_demo       INTEGER NOT NULL,
    params        TEXT NOT NULL,                 -- JSON ModelParams
    base_url      TEXT,
    step          TEXT NOT NULL,
    is_final      INTEGER NOT NULL,
    request_hash  TEXT NOT NULL,
    text          TEXT NOT NULL DEFAULT '',
    status        TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running','ok','error','cancelled','interrupted')),
    error         TEXT,
    ttft_ms       REAL,
    duration_ms   REAL,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost_usd      REAL,                          -- NULL when the price is unknown, never 0 for unknown
    cache_hit     INTEGER NOT NULL DEFAULT 0,
    pid           INTEGER,
    started_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);
CREATE INDEX responses_by_run ON responses(run_id, slot);
CREATE INDEX responses_running ON responses(status) WHERE status = 'running';

CREATE TABLE response_cache (
    request_hash TEXT PRIMARY KEY,
    model        TEXT NOT NULL,
    record       TEXT NOT NULL,                  -- JSON {text, chunks [[s, text]…], usage, model}
    response_id  TEXT,
    created_at   TEXT NOT NULL
);

CREATE TABLE judgments (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    response_id    TEXT REFERENCES responses(id) ON DELETE CASCADE,
    kind           TEXT NOT NULL,
    dimension      TEXT NOT NULL,
    score          REAL,
    scale_min      REAL,
    scale_max      REAL,
    rationale      TEXT NOT NULL DEFAULT '',
    raw            TEXT NOT NULL DEFAULT '',
    parse_ok       INTEGER NOT NULL,
    judge_model    TEXT NOT NULL,
    prompt_version TEXT NOT NULL DEFAULT '',
    temperature    REAL,
    heuristic      INTEGER NOT NULL DEFAULT 0,
    human          INTEGER NOT NULL DEFAULT 0,
    error          TEXT,
    extra          TEXT NOT NULL DEFAULT '{}',
    created_at     TEXT NOT NULL
);
CREATE INDEX judgments_by_response ON judgments(response_id);
CREATE INDEX judgments_by_run ON judgments(run_id);
"""


def up(db: Database) -> None:
    db.executescript(SCHEMA)
