"""010: answers obtained through the providers' batch APIs, and prompt-cache token counts.

- ``responses`` gains ``cache_read_tokens`` / ``cache_write_tokens`` (prompt tokens served from or
  written to the provider's cache; both are parts of ``input_tokens``) and ``via`` (``stream``, or
  the batch API that produced the answer: no streaming timings then).
- A run, and its batch cell, may be ``submitted``: its request waits in a provider batch job.
- ``provider_jobs``: one row per provider batch job (its id is the provider's), with the status
  last seen; ``collected_at`` is set in the transaction that stores its results, so they are
  stored exactly once whichever process collects them.
- ``provider_job_requests``: which run each request of a job answers (``custom_id`` = run id).
"""

from __future__ import annotations

from sqlite_utils import Database

from storage.migrations.check_edit import widen_check

SCHEMA = """
ALTER TABLE responses ADD COLUMN cache_read_tokens INTEGER;
ALTER TABLE responses ADD COLUMN cache_write_tokens INTEGER;
ALTER TABLE responses ADD COLUMN via TEXT NOT NULL DEFAULT 'stream';
CREATE TABLE provider_jobs (
    id            TEXT PRIMARY KEY,            -- the provider's batch id
    batch         TEXT NOT NULL,               -- the prefscope batch it belongs to
    via           TEXT NOT NULL,               -- openai-batch | anthropic-batch
    model         TEXT NOT NULL,               -- JSON ModelSpec of its requests
    requests      INTEGER NOT NULL,
    status        TEXT NOT NULL,               -- the provider's own word, last seen
    counts        TEXT,                        -- the provider's request counts, last seen
    error         TEXT,
    submitted_at  TEXT NOT NULL,
    checked_at    TEXT,
    collected_at  TEXT
);
CREATE INDEX provider_jobs_by_batch ON provider_jobs(batch, collected_at);
CREATE TABLE provider_job_requests (
    job_id        TEXT NOT NULL REFERENCES provider_jobs(id),
    run_id        TEXT NOT NULL,               -- the request's custom_id
    cell_key      TEXT NOT NULL,
    response_id   TEXT NOT NULL,
    step          TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    model         TEXT NOT NULL,               -- JSON ModelSpec as the request called it
    PRIMARY KEY (job_id, run_id)
);
CREATE INDEX provider_job_requests_by_run ON provider_job_requests(run_id);
"""


def up(db: Database) -> None:
    widen_check(
        db,
        "runs",
        "CHECK (status IN ('running','ok','partial','error','cancelled','interrupted'))",
        "CHECK (status IN ('running','ok','partial','error','cancelled','interrupted','submitted'))",
    )
    widen_check(
        db,
        "batch_cells",
        "CHECK (status IN ('pending','running','ok','partial','error','cancelled','interrupted'))",
        "CHECK (status IN ('pending','running','ok','partial','error','cancelled','interrupted','submitted'))",
    )
    db.executescript(SCHEMA)
